package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/sqlite"
)

// TestCLIRecordsItsActs runs each admin command that changes something and
// reads the audit log: each wrote its event, with no actor and "via": "cli",
// naming what it changed, and never the invitation's link.
func TestCLIRecordsItsActs(t *testing.T) {
	t.Parallel()
	getenv := newDB(t) // ada (admin) and ed (editor), added by the CLI
	mustCLI(t, getenv, "user", "add", "--email", "Dee@Example.com", "--name", "Dee", "--role", "viewer",
		"--department", "Ops", "--password", "correct horse battery staple 42")
	link := mustCLI(t, getenv, "user", "invite", "--email", "inv@example.com", "--name", "Inv", "--role", "viewer")
	mustCLI(t, getenv, "user", "set-role", "ed@example.com", "viewer")
	mustCLI(t, getenv, "user", "disable", "ed@example.com")
	mustCLI(t, getenv, "user", "enable", "ed@example.com")
	mustCLI(t, getenv, "user", "unlock", "ed@example.com")
	mustCLI(t, getenv, "role", "set", "viewer", "--label", "Reader")
	mustCLI(t, getenv, "project", "add", "Apollo", "--member", "ed@example.com")
	mustCLI(t, getenv, "project", "add-member", "Apollo", "ada@example.com")

	db := openDB(t, strings.TrimSpace(getenv("QUIRE_DB")))
	evs, err := db.AuditEvents(t.Context(), quire.AuditFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Action, Target, Name string }
	var got []row
	for _, e := range evs {
		if e.Actor != nil || e.IP != "" || e.RequestID != "" || e.Details["via"] != "cli" {
			t.Errorf("%s: actor %v, ip %q, request %q, details %v; want a CLI event", e.Action, e.Actor, e.IP, e.RequestID, e.Details)
		}
		if e.Target == nil || e.Target.ID == "" {
			t.Errorf("%s names no target: %+v", e.Action, e.Target)
			continue
		}
		got = append(got, row{e.Action, e.Target.Type, e.Target.Name})
	}
	want := []row{
		{"project.member_added", "project", "Apollo"},
		{"project.member_added", "project", "Apollo"},
		{"project.created", "project", "Apollo"},
		{"role.updated", "role", "Reader"},
		{"user.unlocked", "user", "ed@example.com"},
		{"user.enabled", "user", "ed@example.com"},
		{"user.disabled", "user", "ed@example.com"},
		{"user.updated", "user", "ed@example.com"},
		{"user.invited", "user", "Inv"},
		{"user.created", "user", "Dee"},
		{"department.created", "department", "Ops"},
		{"user.created", "user", "ed@example.com"},
		{"user.created", "user", "ada@example.com"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events, newest first (-want +got):\n%s", diff)
	}
	raw, _ := json.Marshal(evs)
	for _, secret := range []string{"token=", "setup-password", "correct horse"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the log holds %q (the CLI printed %q):\n%s", secret, link, raw)
		}
	}
	// A department that exists already is not created again.
	mustCLI(t, getenv, "user", "add", "--email", "eve@example.com", "--name", "Eve", "--role", "viewer",
		"--department", "Ops", "--password", "correct horse battery staple 42")
	if evs, err := db.AuditEvents(t.Context(), quire.AuditFilter{Action: "department.", Limit: 10}); err != nil || len(evs) != 1 {
		t.Errorf("department events: %d, %v; want the one of its creation", len(evs), err)
	}
}

// TestServePrunesAudit runs serve with QUIRE_AUDIT_RETENTION=1h on a
// database holding an event of two hours ago and one of now: the first is
// pruned at start, the second stays.
func TestServePrunesAudit(t *testing.T) {
	t.Parallel()
	path := migratedDB(t)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{time.Now().Add(-2 * time.Hour), time.Now()} {
		ev := quire.CLIEvent(quire.ActionRoleUpdated, at)
		if err := db.Recording(ev).PutRole(ctx, quire.Role{Key: "viewer", Label: "Viewer", Docs: quire.LevelView}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	serveUntilLogged(t, path, map[string]string{"QUIRE_AUDIT_RETENTION": "1h"}, "audit log pruned", 30*time.Second)
	db = openDB(t, path)
	evs, err := db.AuditEvents(ctx, quire.AuditFilter{Action: quire.ActionRoleUpdated, Limit: 10})
	if err != nil || len(evs) != 1 || time.Since(evs[0].At) > time.Hour {
		t.Errorf("after the prune: %+v, %v; want the recent event alone", evs, err)
	}
	if help := mustCLI(t, env(nil), "serve", "--help"); !strings.Contains(help, "-audit-retention") ||
		!strings.Contains(help, "QUIRE_AUDIT_RETENTION") || !strings.Contains(help, "8760h") {
		t.Errorf("serve --help lacks the audit retention:\n%s", help)
	}
}
