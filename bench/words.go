package main

import "strings"

// commonWords are the words of team documentation (release notes, runbooks,
// designs, meeting notes), ordered roughly from common to rare: they are the
// most frequent ranks of the vocabulary (vocab.go), whose rarer words are
// synthetic. A word listed twice keeps its first rank.
var commonWords = strings.Fields(`
the of and to a in is for that on with as be this by are it from at or we an will can not
should which have has was all new when each one if use more these our must but also only then
system service team data user users release process document page change update time after before
new first project review access report security customer support server build test deploy version
plan design meeting notes decision action owner status issue incident request response error log
api database backup restore network policy account password role permission group department budget
quarter goal metric target schedule timeline milestone risk dependency requirement feature bug fix
patch upgrade migration configuration setting environment production staging development cluster node
container image queue worker job task ticket escalation alert monitoring dashboard latency throughput
capacity storage disk memory cpu cache index query schema table column field record file folder
template guide manual handbook checklist procedure runbook playbook onboarding training overview
summary background context scope approach proposal alternative tradeoff cost benefit estimate
analysis research experiment result finding conclusion recommendation next steps open question
answer feedback approval sign review comment draft final archive published internal external public
private confidential legal compliance audit contract vendor partner invoice payment order shipping
warehouse inventory product catalog pricing discount campaign marketing sales lead opportunity
pipeline forecast revenue expense hiring interview candidate offer salary benefits holiday leave
office remote travel equipment laptop license software hardware printer phone network wifi vpn
certificate domain email calendar chat channel announcement newsletter wiki knowledge base article
faq troubleshooting symptom cause workaround resolution root postmortem timeline impact severity
priority customer facing regression rollback canary feature flag experiment rollout gradual percent
region zone failover replica primary secondary read write lock transaction consistency durability
availability reliability performance benchmark profile trace span sample histogram percentile
quota limit rate burst retry timeout backoff circuit breaker health check probe readiness liveness
secret token key rotation encryption signature hash audit trail retention deletion privacy consent
mobile web desktop browser client frontend backend gateway proxy load balancer router firewall
kubernetes terraform ansible docker linux windows macos python golang java javascript typescript
rust postgres sqlite redis kafka elastic grafana prometheus jenkins github gitlab jira confluence
slack zoom figma sketch notion spreadsheet presentation diagram chart roadmap vision mission
strategy okr kpi retrospective standup sprint backlog story epic estimate velocity burndown demo
stakeholder sponsor steering committee board executive manager lead engineer analyst designer
writer editor reviewer approver viewer guest administrator operator developer tester intern
morning afternoon monday tuesday wednesday thursday friday weekly monthly quarterly yearly annual
january february march april may june july august september october november december
agreed pending blocked resolved closed reopened deferred cancelled completed delayed accelerated
improve reduce increase measure validate verify document communicate coordinate prioritise align
simplify automate standardise consolidate migrate deprecate remove replace introduce extend support
clarify investigate reproduce isolate mitigate prevent detect recover notify escalate assign track
carefully quickly gradually immediately eventually regularly manually automatically consistently
reliable scalable secure simple complex critical minor major optional mandatory temporary permanent
legacy modern current previous upcoming expected actual average median maximum minimum total partial
aardvark basalt cobalt dolomite ember fjord glacier heron iris juniper kestrel lagoon meadow nebula
obsidian pelican quartz raven sequoia tundra umber vortex willow xenon yarrow zephyr
`)

// tagPool is the tags documents carry, common first.
var tagPool = strings.Fields(`
ops release security howto onboarding api design runbook incident policy meeting roadmap backend
frontend database infra monitoring hiring finance legal sales marketing support customer q1 q2 q3 q4
draft-notes archive reference faq training compliance audit budget vendor mobile web performance
testing ci deploy migration postmortem planning okr retro sprint architecture networking storage
privacy data analytics billing pricing partner travel office tooling
`)
