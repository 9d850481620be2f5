package documents

import (
	"context"
	"fmt"
	"slices"
	"time"

	"quire"
)

// demoFolder is a folder of the demo data; parent names an earlier one.
type demoFolder struct{ key, name, parent string }

var demoFolders = []demoFolder{
	{"eng", "Engineering", ""},
	{"runbooks", "Runbooks", "eng"},
	{"arch", "Architecture", "eng"},
	{"product", "Product", ""},
	{"specs", "Specifications", "product"},
	{"company", "Company", ""},
	{"policies", "Policies", "company"},
	{"onboarding", "Onboarding", "company"},
}

// demoDoc is a document of the demo data and the edits that follow its
// creation (each one a save, so a version).
type demoDoc struct {
	title, summary, contentType, content string
	status, visibility, folder, project  string
	tags                                 []string
	edits                                []DocumentInput
}

// demoProjects are the projects of the project documents. When the caller
// made them already (with their members) they are used as they are;
// otherwise they are created with every writer and every other user in
// turn as members.
var demoProjects = []string{"Apollo", "Zephyr"}

var demoDocs = []demoDoc{
	{title: "Incident response runbook", summary: "What to do in the first hour of an outage.", contentType: "markdown",
		content: "# Incident response\n\n1. Acknowledge the page within 5 minutes.\n2. Open a channel named `#inc-<date>-<topic>`.\n3. Name an incident commander and a scribe.\n\n## Severity\n\n| Level | Meaning |\n|---|---|\n| SEV1 | Customers cannot sign in or lose data |\n| SEV2 | A feature is down for everyone |\n| SEV3 | Degraded, with a workaround |\n\nWrite the timeline as you go; the postmortem starts from it.",
		status:  "published", visibility: "public", folder: "runbooks", tags: []string{"oncall", "incident", "runbook"},
		edits: []DocumentInput{{Summary: Some("What to do in the first hour of an outage, and who does it.")}}},
	{title: "Database failover procedure", summary: "Promoting the replica when the primary is lost.", contentType: "markdown",
		content: "# Database failover\n\n> Only the on-call database owner runs this.\n\n```sh\npg_ctl promote -D /var/lib/postgresql/data\n```\n\nThen point `QUIRE_DB` at the new primary and restart the nodes one at a time. Check `/readyz` on each before moving on.",
		status:  "review", visibility: "department", folder: "runbooks", tags: []string{"database", "runbook", "postgres"},
		edits: []DocumentInput{{Status: Some("published")}, {Content: Some("# Database failover\n\n> Only the on-call database owner runs this.\n\n```sh\npg_ctl promote -D /var/lib/postgresql/data\n```\n\nThen point `QUIRE_DB` at the new primary and restart the nodes one at a time. Check `/readyz` on each before moving on.\n\nAfterwards, rebuild a new replica from a fresh base backup.")}}},
	{title: "Rotating TLS certificates", contentType: "plain",
		content: "Certificates expire every 90 days.\nRenewal runs nightly; if it fails twice the on-call engineer gets a page.\nTo renew by hand: run the renew job, then reload the proxy. No restart of quire is needed.",
		status:  "published", visibility: "department", folder: "runbooks", tags: []string{"tls", "security", "runbook"}},
	{title: "Service architecture overview", summary: "The parts of the platform and how requests flow.", contentType: "markdown",
		content: "# Architecture\n\nRequests enter through the load balancer, reach one of the stateless API nodes and end in the database.\n\n- **API nodes** hold no state: sessions, limits and the mail outbox live in the database.\n- **Workers** deliver mail from the outbox with retries.\n- **Storage** is PostgreSQL with one synchronous replica.\n\nSee *Database failover procedure* for what happens when the primary goes away.",
		status:  "published", visibility: "public", folder: "arch", tags: []string{"architecture", "overview"},
		edits: []DocumentInput{{Tags: Some([]string{"architecture", "overview", "platform"})}}},
	{title: "ADR 7: Store times as microseconds", summary: "Why every timestamp is an integer of microseconds.", contentType: "markdown",
		content: "# ADR 7: Times as microseconds\n\n**Status:** accepted\n\n## Context\nTwo databases, one conflict guard. The guard compares `updated_at` exactly.\n\n## Decision\nStore times as integer microseconds since the epoch, UTC.\n\n## Consequences\nComparisons are exact in SQLite and PostgreSQL alike; nanoseconds are dropped at the edge.",
		status:  "published", visibility: "department", folder: "arch", tags: []string{"adr", "database"}},
	{title: "ADR 8: Search without stemming", contentType: "markdown",
		content: "# ADR 8: Search without stemming\n\n**Status:** proposed\n\nWe match words and word prefixes, case- and accent-insensitively, with no stop words and no stemming, so that every database gives the same answer.",
		status:  "review", visibility: "department", folder: "arch", tags: []string{"adr", "search"},
		edits: []DocumentInput{{Status: Some("published")}}},
	{title: "Apollo migration plan", summary: "Moving the billing data to the new cluster in three steps.", contentType: "markdown",
		content: "# Apollo migration plan\n\n## Steps\n1. Dual-write from the billing service (week 1).\n2. Backfill history in batches of 10,000 rows (weeks 2-3).\n3. Switch reads, then stop the old writes (week 4).\n\n## Rollback\nReads can move back at any point until step 3 ends.\n\n## Owners\nData team for the backfill, platform team for the switch.",
		status:  "review", visibility: "project", project: "Apollo", folder: "specs", tags: []string{"apollo", "migration", "billing"},
		edits: []DocumentInput{{Status: Some("published")}, {Summary: Some("Moving the billing data to the new cluster in three steps, with a rollback at each.")}}},
	{title: "Apollo backfill checklist", contentType: "markdown",
		content: "- [x] Snapshot taken\n- [x] Batch size agreed (10,000)\n- [ ] Throttling verified on staging\n- [ ] Sign-off from finance",
		status:  "draft", visibility: "project", project: "Apollo", tags: []string{"apollo", "checklist"},
		edits: []DocumentInput{{Content: Some("- [x] Snapshot taken\n- [x] Batch size agreed (10,000)\n- [x] Throttling verified on staging\n- [ ] Sign-off from finance")}}},
	{title: "Apollo weekly status: week 2", summary: "Backfill at 40%, no incidents.", contentType: "plain",
		content: "Backfill is 40% done. Throughput 1,800 rows/s. One retry storm on Tuesday, fixed by lowering concurrency to 4. Next week: finish history before 2021.",
		status:  "published", visibility: "project", project: "Apollo", tags: []string{"apollo", "status"}},
	{title: "Zephyr portal: requirements", summary: "What customers must be able to do without calling support.", contentType: "markdown",
		content: "# Customer portal\n\nCustomers must be able to:\n\n1. Download invoices as PDF.\n2. Change their billing contact.\n3. Invite colleagues with a read-only role.\n\nOut of scope for the first release: payment method changes.",
		status:  "review", visibility: "project", project: "Zephyr", folder: "specs", tags: []string{"portal", "requirements"},
		edits: []DocumentInput{{Status: Some("published")}}},
	{title: "Zephyr portal: wireframes review notes", contentType: "html",
		content: "<h1>Wireframes review</h1>\n<p>Attendees: design, support, two customers.</p>\n<ul>\n<li>The invoice list needs a date filter.</li>\n<li>&ldquo;Invite colleague&rdquo; should be on the account page, not hidden in settings.</li>\n</ul>",
		status:  "draft", visibility: "project", project: "Zephyr", tags: []string{"portal", "design", "meeting-notes"}},
	{title: "Zephyr portal: launch announcement draft", summary: "Blog post for the portal launch.", contentType: "markdown",
		content: "## Your account, your way\n\nStarting today you can download invoices, update your billing contact and invite colleagues from the new customer portal.",
		status:  "draft", visibility: "project", project: "Zephyr", tags: []string{"portal", "marketing"},
		edits: []DocumentInput{{Title: Some("Zephyr portal: launch announcement")}, {Status: Some("review")}}},
	{title: "Product roadmap 2026", summary: "Themes and big bets for next year.", contentType: "markdown",
		content: "# Roadmap 2026\n\n## Themes\n- Self-service for customers\n- Faster onboarding for teams\n- Reliability: 99.95% monthly\n\n## Big bets\n1. Customer portal (Q1)\n2. Billing on the new cluster (Q2)\n3. Offline editing (H2)",
		status:  "published", visibility: "public", folder: "product", tags: []string{"roadmap", "planning"},
		edits: []DocumentInput{{Content: Some("# Roadmap 2026\n\n## Themes\n- Self-service for customers\n- Faster onboarding for teams\n- Reliability: 99.95% monthly\n\n## Big bets\n1. Customer portal (Q1)\n2. Billing on the new cluster (Q2)\n3. Offline editing (H2)\n4. Public API for documents (H2)")}}},
	{title: "Pricing experiment results", summary: "Annual plan discount test, four weeks.", contentType: "markdown",
		content: "# Pricing experiment\n\nA 15% annual discount raised annual sign-ups from 22% to 31% with no change in churn after 30 days. Recommendation: keep it.",
		status:  "published", visibility: "department", folder: "product", tags: []string{"pricing", "experiment"}},
	{title: "Feature spec: document folders", contentType: "markdown",
		content: "# Folders\n\nFolders nest. A folder cannot move into itself or one of its descendants. Deleting a folder that still holds documents or folders is refused.",
		status:  "published", visibility: "public", folder: "specs", tags: []string{"spec", "folders"}},
	{title: "Feature spec: offline editing", summary: "Early thoughts; not scheduled.", contentType: "markdown",
		content: "# Offline editing\n\nOpen questions:\n- How do we merge two offline edits of the same document? The conflict guard answers 409 today.\n- Do we keep drafts on the device encrypted?",
		status:  "draft", visibility: "private", folder: "specs", tags: []string{"spec", "offline", "idea"}},
	{title: "Interview loop for backend engineers", summary: "Stages, interviewers and the scorecard.", contentType: "markdown",
		content: "# Backend interview loop\n\n1. Recruiter screen (30 min)\n2. Take-home review with the candidate (60 min)\n3. System design (60 min)\n4. Values conversation (45 min)\n\nScorecards are due within 24 hours.",
		status:  "published", visibility: "department", folder: "onboarding", tags: []string{"hiring", "interview"}},
	{title: "New hire checklist", summary: "Everything a new colleague needs in week one.", contentType: "markdown",
		content: "# Week one\n\n- Laptop and accounts on day one\n- Buddy assigned\n- Read the *Service architecture overview*\n- Shadow an on-call shift\n- Ship a small change by Friday",
		status:  "published", visibility: "public", folder: "onboarding", tags: []string{"onboarding", "checklist"},
		edits: []DocumentInput{{Content: Some("# Week one\n\n- Laptop and accounts on day one\n- Buddy assigned\n- Read the *Service architecture overview*\n- Read the *Incident response runbook*\n- Shadow an on-call shift\n- Ship a small change by Friday")}}},
	{title: "Travel and expenses policy", summary: "What we pay for and how to claim it.", contentType: "html",
		content: "<h1>Travel and expenses</h1>\n<p>Book economy for flights under six hours. Hotels up to the city rate in the table below.</p>\n<table><tr><th>City</th><th>Nightly</th></tr><tr><td>Berlin</td><td>€160</td></tr><tr><td>London</td><td>£190</td></tr><tr><td>New York</td><td>$260</td></tr></table>\n<p>Claims within 30 days, with receipts.</p>",
		status:  "published", visibility: "public", folder: "policies", tags: []string{"policy", "travel", "finance"}},
	{title: "Security policy: passwords and access", contentType: "markdown",
		content: "# Passwords and access\n\n- Passwords of at least 15 characters; a password manager is provided.\n- No shared accounts.\n- Access is reviewed every quarter by each team lead.",
		status:  "published", visibility: "public", folder: "policies", tags: []string{"policy", "security"},
		edits: []DocumentInput{{Summary: Some("Password length, shared accounts and access reviews.")}}},
	{title: "Remote work guidelines", contentType: "plain",
		content: "Core hours are 10:00 to 15:00 in your team's time zone. Keep your calendar current. Use the team channel for questions, not direct messages, so answers help everyone.",
		status:  "archived", visibility: "public", folder: "policies", tags: []string{"policy", "remote"}},
	{title: "Support macros: billing questions", summary: "Canned answers for the ten most common billing tickets.", contentType: "markdown",
		content: "## Where is my invoice?\nInvoices are mailed on the 1st. They are also in the portal under *Billing → Invoices*.\n\n## Why was I charged twice?\nUsually a pending authorisation; it disappears within 3 business days.",
		status:  "published", visibility: "department", tags: []string{"support", "billing", "macros"}},
	{title: "Escalation matrix", contentType: "markdown",
		content: "| Issue | First line | Escalate to |\n|---|---|---|\n| Sign-in | Support | Platform on-call |\n| Billing | Support | Finance ops |\n| Data loss | Support | Incident commander |",
		status:  "published", visibility: "department", tags: []string{"support", "escalation"},
		edits: []DocumentInput{{Status: Some("review")}, {Status: Some("published")}}},
	{title: "Quarterly business review Q3", summary: "Numbers and notes from the Q3 review.", contentType: "markdown",
		content: "# Q3 review\n\n- Revenue +12% quarter on quarter\n- Net retention 108%\n- Support first-response time down to 2h 10m\n\nRisks: hiring in the platform team is behind plan.",
		status:  "published", visibility: "department", tags: []string{"finance", "qbr"}},
	{title: "Budget 2026 draft", contentType: "plain",
		content: "Headcount +6 (4 engineering, 1 support, 1 design). Infrastructure +18% for the new cluster during the migration, falling back after Q3.",
		status:  "draft", visibility: "private", tags: []string{"finance", "budget", "draft"}},
	{title: "Personal notes: 1:1 topics", contentType: "plain",
		content: "Ask about the on-call load. Career conversation: interest in the architecture group. Follow up on the conference talk proposal.",
		status:  "draft", visibility: "private", tags: []string{"notes"}},
	{title: "Team offsite agenda", summary: "Two days in Lisbon, mostly planning.", contentType: "markdown",
		content: "# Offsite\n\n**Day 1:** retrospective of the year, roadmap themes.\n**Day 2:** team topologies workshop, dinner.\n\nBring a laptop; the venue has projectors.",
		status:  "review", visibility: "department", tags: []string{"offsite", "planning"},
		edits: []DocumentInput{{Summary: Some("Two days in Lisbon: retrospective and planning.")}}},
	{title: "Glossary", summary: "Words we use and what we mean by them.", contentType: "markdown",
		content: "**Document** — a page in quire, with versions.\n\n**Folder** — holds documents and other folders.\n\n**Visibility** — who can see a document: private, department, project or public.\n\n**Café** — where the best ideas happen.",
		status:  "published", visibility: "public", tags: []string{"reference", "glossary"}},
	{title: "Style guide for documentation", contentType: "markdown",
		content: "# Writing style\n\n- Lead with the answer.\n- One idea per paragraph.\n- Use the active voice: \"the worker sends the mail\", not \"the mail is sent\".\n- Code, paths and flags in `backticks`.",
		status:  "published", visibility: "public", tags: []string{"writing", "reference"},
		edits: []DocumentInput{{Tags: Some([]string{"writing", "reference", "style"})}}},
	{title: "Deprecated: legacy export API", summary: "Kept for history; replaced by the documents API.", contentType: "markdown",
		content: "# Legacy export API\n\nThe `/export` endpoint was removed in release 3.0. Use `GET /api/documentation/documents?includeContent=true` instead.",
		status:  "archived", visibility: "public", folder: "arch", tags: []string{"api", "deprecated"}},
	{title: "Postmortem: login outage on 3 March", summary: "Sign-in failed for 41 minutes after a certificate expired.", contentType: "markdown",
		content: "# Postmortem: login outage\n\n**Impact:** 41 minutes without sign-in for all customers.\n\n**Cause:** the renewal job had been failing silently for two weeks.\n\n**What we changed:** renewal failures now page the on-call engineer (see *Rotating TLS certificates*).",
		status:  "published", visibility: "department", folder: "runbooks", tags: []string{"postmortem", "incident", "tls"},
		edits: []DocumentInput{{Status: Some("review")}, {Status: Some("published")}}},
	{title: "Ideas backlog", contentType: "markdown",
		content: "- Dark mode for the editor\n- Templates for postmortems and ADRs\n- Mentions with notifications\n- Export a folder as a PDF",
		status:  "draft", visibility: "private", folder: "product", tags: []string{"ideas"}},
	{title: "Zephyr portal: API contract", summary: "Endpoints the portal front end calls.", contentType: "markdown",
		content: "# Portal API\n\n`GET /portal/invoices?page=1&limit=20` returns `{invoices, pagination}`.\n\n`POST /portal/invitations` with `{email, role}` returns 201.",
		status:  "review", visibility: "project", project: "Zephyr", folder: "specs", tags: []string{"portal", "api"}},
	{title: "Apollo: data validation queries", contentType: "plain",
		content: "Row counts per month must match between the old and the new cluster. Sum of invoice totals per customer must match to the cent. Run after every batch.",
		status:  "published", visibility: "project", project: "Apollo", tags: []string{"apollo", "database", "validation"}},
}

// SeedDemo loads sample folders and documents owned by users into an empty
// database: a few dozen documents across the users' departments and two
// projects, nested folders and every visibility, each with one to three
// versions, dated over the 60 days before now. It writes through the
// Service, on behalf of the users whose role may write (all users when none
// may), so every document passes the rules of one sent over the API.
func SeedDemo(ctx context.Context, store Store, users []quire.User, now time.Time) error {
	if len(users) == 0 {
		return fmt.Errorf("seed demo: no users")
	}
	saves := len(demoFolders) + len(demoDocs)
	for _, dd := range demoDocs {
		saves += len(dd.edits)
	}
	clock := now.Add(-60 * 24 * time.Hour)
	step := 60 * 24 * time.Hour / time.Duration(saves+1)
	svc := New(store, Config{Now: func() time.Time { return clock }})
	tick := func() { clock = clock.Add(step) }

	var writers []quire.User
	for _, u := range users {
		if u.Role.Docs >= quire.LevelWrite {
			writers = append(writers, u)
		}
	}
	if len(writers) == 0 {
		writers = users
	}
	// The demo writes with a non-admin actor of each writer, so that the
	// membership rules apply as for them.
	actorOf := func(u quire.User) quire.Actor {
		u.Role.Docs, u.Role.Admin = quire.LevelWrite, false
		return quire.Actor{User: u}
	}

	projects := map[string]*quire.Project{}
	for i, name := range demoProjects {
		p, err := store.ProjectByName(ctx, name)
		if isCode(err, quire.ENOTFOUND) {
			p, err = store.CreateProject(ctx, name)
			for j, u := range users {
				if err != nil {
					break
				}
				if u.Role.Docs >= quire.LevelWrite || j%2 == i%2 {
					err = store.AddProjectMember(ctx, p.ID, u.ID)
					p.MemberIDs = append(p.MemberIDs, u.ID)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("seed demo: project %s: %w", name, err)
		}
		projects[name] = p
	}
	// sees reports whether writer u sees a document of that visibility,
	// department and project: the demo edits only what its editor sees.
	sees := func(u quire.User, owner quire.User, visibility, department, project string) bool {
		switch visibility {
		case "public":
			return true
		case "department":
			return u.DepartmentID != "" && u.DepartmentID == department
		case "project":
			return slices.Contains(projects[project].MemberIDs, u.ID)
		}
		return u.ID == owner.ID
	}

	folderIDs := map[string]string{}
	for _, f := range demoFolders {
		in := FolderInput{Name: Some(f.name)}
		if f.parent != "" {
			in.ParentID = Some(folderIDs[f.parent])
		}
		created, err := svc.CreateFolder(ctx, actorOf(writers[0]), in)
		if err != nil {
			return fmt.Errorf("seed demo: folder %s: %w", f.name, err)
		}
		folderIDs[f.key] = created.ID
		tick()
	}

	for i, dd := range demoDocs {
		visibility := dd.visibility
		// The owner is the next writer, in turn, who can own the document:
		// one with a department for a departmental one, a member of the
		// project for a project one. Without any, the document is public.
		var owner *quire.User
		for k := range writers {
			w := writers[(i+k)%len(writers)]
			if visibility == "department" && w.DepartmentID == "" ||
				visibility == "project" && !slices.Contains(projects[dd.project].MemberIDs, w.ID) {
				continue
			}
			owner = &w
			break
		}
		if owner == nil {
			visibility, owner = "public", &writers[i%len(writers)]
		}
		in := DocumentInput{
			Title:       Some(dd.title),
			Content:     Some(dd.content),
			ContentType: Some(dd.contentType),
			Summary:     Some(dd.summary),
			Status:      Some(dd.status),
			Visibility:  Some(visibility),
			Tags:        Some(dd.tags),
		}
		if dd.folder != "" {
			in.FolderID = Some(folderIDs[dd.folder])
		}
		if visibility == "project" {
			in.ProjectID = Some(projects[dd.project].ID)
		}
		d, err := svc.Create(ctx, actorOf(*owner), in)
		if err != nil {
			return fmt.Errorf("seed demo: document %q: %w", dd.title, err)
		}
		tick()
		for k, edit := range dd.edits {
			// Edits come from the other writers too, as in a team, when
			// they can see the document.
			editor := writers[(i+k+1)%len(writers)]
			if !sees(editor, *owner, visibility, d.DepartmentID, dd.project) {
				editor = *owner
			}
			if d, err = svc.Update(ctx, actorOf(editor), d.ID, edit, d.UpdatedAt); err != nil {
				return fmt.Errorf("seed demo: edit of %q: %w", dd.title, err)
			}
			tick()
		}
	}
	return nil
}
