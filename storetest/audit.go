package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("audit", testAudit) }

// auditEvents returns the events of f, failing the test on an error.
func auditEvents(t *testing.T, s quire.Store, f quire.AuditFilter) []quire.Event {
	t.Helper()
	if f.Limit == 0 {
		f.Limit = 1000
	}
	evs, err := s.AuditEvents(t.Context(), f)
	if err != nil {
		t.Fatalf("AuditEvents(%+v): %v", f, err)
	}
	return evs
}

// actions lists the events' actions in order.
func actions(evs []quire.Event) []string {
	return pluck(evs, func(e quire.Event) string { return e.Action })
}

// record writes ev with a small change of its own (a role put again), and
// fails the test on an error.
func record(t *testing.T, s quire.Store, evs ...*quire.Event) {
	t.Helper()
	if err := s.Recording(evs...).PutRole(t.Context(), quire.Role{Key: "viewer", Label: "Viewer", Docs: quire.LevelView}); err != nil {
		t.Fatalf("record: %v", err)
	}
}

func testAudit(t *testing.T, open Opener) {
	t.Run("an event is written with its change and reads back whole", func(t *testing.T) {
		w := newDocWorld(t, open)
		at := baseTime.Add(123456 * time.Microsecond)
		ev := quire.NewEvent(quire.ActionFolderCreated, at, &quire.EventActor{ID: w.owner.ID, Name: w.owner.Name},
			quire.RequestInfo{IP: "192.0.2.7", RequestID: "req-1"}).With("n", 2).With("fields", []string{"a", "b"})
		f := &quire.Folder{Name: "Guides"}
		ev.On(quire.TargetFolder, "", "Guides")
		if err := w.s.Recording(ev).CreateFolder(t.Context(), f, at); err != nil {
			t.Fatal(err)
		}
		if ev.ID == "" {
			t.Fatal("the event's ID was not filled")
		}
		got := auditEvents(t, w.s, quire.AuditFilter{})
		want := []quire.Event{{ID: ev.ID, At: at, Action: quire.ActionFolderCreated,
			Actor:  &quire.EventActor{ID: w.owner.ID, Name: w.owner.Name},
			Target: &quire.EventTarget{Type: quire.TargetFolder, Name: "Guides"},
			IP:     "192.0.2.7", RequestID: "req-1",
			Details: map[string]any{"n": float64(2), "fields": []any{"a", "b"}}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if got := auditEvents(t, w.s, quire.AuditFilter{Action: quire.ActionFolderCreated}); len(got) != 1 {
			t.Errorf("the plain store recorded again: %d events", len(got))
		}
	})

	t.Run("an event recorded on its own is written alone and reads back whole", func(t *testing.T) {
		w := newDocWorld(t, open)
		at := baseTime.Add(time.Minute)
		ev := quire.NewEvent(quire.ActionDocumentExported, at, &quire.EventActor{ID: w.owner.ID, Name: w.owner.Name},
			quire.RequestInfo{IP: "192.0.2.8", RequestID: "req-2"}).With("count", 3)
		if err := w.s.RecordEvent(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
		if ev.ID == "" {
			t.Fatal("the event's ID was not filled")
		}
		cli := quire.CLIEvent(quire.ActionDocumentExported, at.Add(time.Second)).With("count", 0)
		if err := w.s.RecordEvent(t.Context(), cli); err != nil {
			t.Fatal(err)
		}
		got := auditEvents(t, w.s, quire.AuditFilter{Action: quire.ActionDocumentExported})
		want := []quire.Event{
			{ID: cli.ID, At: at.Add(time.Second), Action: quire.ActionDocumentExported,
				Details: map[string]any{"count": float64(0), "via": "cli"}},
			{ID: ev.ID, At: at, Action: quire.ActionDocumentExported,
				Actor: &quire.EventActor{ID: w.owner.ID, Name: w.owner.Name}, IP: "192.0.2.8", RequestID: "req-2",
				Details: map[string]any{"count": float64(3)}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("a change refused writes no event; a change that happens writes its own", func(t *testing.T) {
		w, d := newDocWorldWithDraft(t, open, "Plan")
		ctx := t.Context()
		mk := func(action string) *quire.Event {
			return quire.NewEvent(action, baseTime.Add(time.Hour), nil, quire.RequestInfo{}).On(quire.TargetDocument, d.ID, "Plan")
		}
		// A stale guard: DOCUMENT_CONFLICT.
		_, err := w.s.Recording(mk("document.updated")).UpdateDocument(ctx, seeAll, d.ID, baseTime.Add(-time.Second), w.owner.ID,
			baseTime.Add(time.Hour), func(d *quire.Document) (bool, error) { d.Title = "New"; return true, nil })
		wantCode(t, err, quire.EDOCUMENTCONFLICT)
		// apply's own error.
		_, err = w.s.Recording(mk("document.updated")).UpdateDocument(ctx, seeAll, d.ID, time.Time{}, w.owner.ID,
			baseTime.Add(time.Hour), func(d *quire.Document) (bool, error) { return false, quire.Invalid(map[string]string{"title": "no"}) })
		wantCode(t, err, quire.EVALIDATION)
		// Not found: delete, purge (not in the trash), restore, folder delete.
		wantCode(t, w.s.Recording(mk("document.deleted")).DeleteDocument(ctx, seeAll, unknownID, w.owner.ID, baseTime), quire.ENOTFOUND)
		wantCode(t, w.s.Recording(mk("document.purged")).PurgeDocument(ctx, seeAll, d.ID), quire.ENOTFOUND)
		_, err = w.s.Recording(mk("document.restored")).RestoreDocument(ctx, seeAll, d.ID)
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, w.s.Recording(mk("folder.deleted")).DeleteFolder(ctx, unknownID), quire.ENOTFOUND)
		wantCode(t, w.s.Recording(mk("session.revoked")).RevokeSession(ctx, unknownID, baseTime), quire.ENOTFOUND)
		// A taken name: CONFLICT.
		_, err = w.s.Recording(mk("project.created")).CreateProject(ctx, "Apollo")
		wantCode(t, err, quire.ECONFLICT)
		// Refused while other writes commit around it (SQLite commits
		// concurrent transactions together).
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, err := w.s.Recording(mk("document.updated")).UpdateDocument(ctx, seeAll, d.ID, baseTime.Add(-time.Second),
					w.owner.ID, baseTime.Add(time.Hour), func(d *quire.Document) (bool, error) { return true, nil })
				if quire.ErrorCode(err) != quire.EDOCUMENTCONFLICT {
					t.Errorf("stale update %d: %v", i, err)
				}
			})
			wg.Go(func() {
				record(t, w.s, quire.NewEvent("role.updated", baseTime, nil, quire.RequestInfo{}).On(quire.TargetRole, "viewer", "Viewer"))
			})
		}
		wg.Wait()
		if got := actions(auditEvents(t, w.s, quire.AuditFilter{Action: "document."})); len(got) != 0 {
			t.Errorf("refused changes wrote events: %v", got)
		}
		if got := auditEvents(t, w.s, quire.AuditFilter{Action: "role.updated"}); len(got) != 8 {
			t.Errorf("changes that happened wrote %d events, want 8", len(got))
		}

		// The same calls that succeed write their event.
		if err := w.s.Recording(mk("document.deleted")).DeleteDocument(ctx, seeAll, d.ID, w.owner.ID, baseTime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.Recording(mk("document.restored")).RestoreDocument(ctx, seeAll, d.ID); err != nil {
			t.Fatal(err)
		}
		if got := actions(auditEvents(t, w.s, quire.AuditFilter{TargetID: d.ID})); !cmp.Equal(got, []string{"document.restored", "document.deleted"}) &&
			!cmp.Equal(got, []string{"document.deleted", "document.restored"}) {
			t.Errorf("events of the document = %v", got)
		}
	})

	t.Run("an event left blank by the change is not written", func(t *testing.T) {
		w, d := newDocWorldWithDraft(t, open, "Plan")
		ev := quire.NewEvent("", baseTime, nil, quire.RequestInfo{}).On(quire.TargetDocument, d.ID, "")
		if _, err := w.s.Recording(ev).UpdateDocument(t.Context(), seeAll, d.ID, time.Time{}, w.owner.ID, baseTime.Add(time.Minute),
			func(d *quire.Document) (bool, error) { return false, nil }); err != nil {
			t.Fatal(err)
		}
		if got := auditEvents(t, w.s, quire.AuditFilter{}); len(got) != 0 {
			t.Errorf("a save that changed nothing wrote %v", actions(got))
		}
	})

	t.Run("a failed sign-in records the lock only when it locks", func(t *testing.T) {
		s := open(t)
		l := quire.LoginLimits{Limit: 100, Window: time.Hour, LockThreshold: 3, LockDuration: time.Hour}
		for i := range 4 {
			failed := quire.NewEvent(quire.ActionLoginFailed, baseTime.Add(time.Duration(i)*time.Second), nil, quire.RequestInfo{})
			locked := quire.NewEvent(quire.ActionLocked, baseTime.Add(time.Duration(i)*time.Second), nil, quire.RequestInfo{})
			if err := s.Recording(failed).LoginFailed(t.Context(), "x@example.com", baseTime, l, locked); err != nil {
				t.Fatal(err)
			}
		}
		got := actions(auditEvents(t, s, quire.AuditFilter{Action: "auth."}))
		// The third failure locks; its lock is written before it in the
		// transaction, so it sorts after it (same time, smaller id).
		want := []string{"auth.login_failed", "auth.login_failed", "auth.locked", "auth.login_failed", "auth.login_failed"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events, newest first (-want +got):\n%s", diff)
		}
	})

	t.Run("filters by action, prefix, actor, target and time", func(t *testing.T) {
		s := open(t)
		ada, bob := &quire.EventActor{ID: "u-ada", Name: "Ada"}, &quire.EventActor{ID: "u-bob", Name: "Bob"}
		at := func(m int) time.Time { return baseTime.Add(time.Duration(m) * time.Minute) }
		record(t, s,
			quire.NewEvent("auth.login", at(0), ada, quire.RequestInfo{}).On("user", "u-ada", "Ada"),
			quire.NewEvent("auth.logout", at(1), ada, quire.RequestInfo{}),
			quire.NewEvent("auth_x.odd", at(2), bob, quire.RequestInfo{}),
			quire.NewEvent("authx", at(3), bob, quire.RequestInfo{}),
			quire.NewEvent("document.created", at(4), bob, quire.RequestInfo{}).On("document", "d-1", "Plan"),
			quire.NewEvent("document.updated", at(5), ada, quire.RequestInfo{}).On("document", "d-1", "Plan"),
			quire.NewEvent("auth", at(6), nil, quire.RequestInfo{}),
		)
		for _, c := range []struct {
			name string
			f    quire.AuditFilter
			want []string
		}{
			{"everything, newest first", quire.AuditFilter{},
				[]string{"auth", "document.updated", "document.created", "authx", "auth_x.odd", "auth.logout", "auth.login"}},
			{"an exact action", quire.AuditFilter{Action: "auth.login"}, []string{"auth.login"}},
			{"a prefix holds only what starts with it, dot included", quire.AuditFilter{Action: "auth."}, []string{"auth.logout", "auth.login"}},
			{"a prefix that is a whole action", quire.AuditFilter{Action: "document."}, []string{"document.updated", "document.created"}},
			{"an actor", quire.AuditFilter{ActorID: "u-bob"}, []string{"document.created", "authx", "auth_x.odd"}},
			{"a target", quire.AuditFilter{TargetID: "d-1"}, []string{"document.updated", "document.created"}},
			{"a target and an action", quire.AuditFilter{TargetID: "d-1", Action: "document.created"}, []string{"document.created"}},
			{"since is inclusive, until exclusive", quire.AuditFilter{Since: at(1), Until: at(4)}, []string{"authx", "auth_x.odd", "auth.logout"}},
			{"hostile text is only text", quire.AuditFilter{Action: "'; DROP TABLE audit_events; --"}, []string{}},
			{"a NUL finds nothing", quire.AuditFilter{ActorID: "u-\x00"}, []string{}},
		} {
			if diff := cmp.Diff(c.want, actions(auditEvents(t, s, c.f))); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
	})

	t.Run("pages by cursor never repeat or skip an event, while events are written", func(t *testing.T) {
		s := open(t)
		// 50 events, several sharing a time, so that ties are broken by id.
		var before []string
		for i := range 50 {
			ev := quire.NewEvent("document.updated", baseTime.Add(time.Duration(i/3)*time.Second), nil, quire.RequestInfo{}).
				With("i", i)
			record(t, s, ev)
			before = append(before, ev.ID)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					// Newer than anything paged, as events written now are.
					record(t, s, quire.NewEvent("document.created", baseTime.Add(time.Hour+time.Duration(i)*time.Millisecond), nil, quire.RequestInfo{}))
				}
			})
		}
		seen := map[string]bool{}
		var prev *quire.Event
		f := quire.AuditFilter{Action: "document.updated", Limit: 7}
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatal("paging does not end")
			}
			page := auditEvents(t, s, f)
			for i := range page {
				e := page[i]
				if seen[e.ID] {
					t.Errorf("event %s repeated", e.ID)
				}
				seen[e.ID] = true
				if prev != nil && !(e.At.Before(prev.At) || e.At.Equal(prev.At) && e.ID < prev.ID) {
					t.Errorf("event %s (%v) follows %s (%v): not newest first", e.ID, e.At, prev.ID, prev.At)
				}
				prev = &page[i]
			}
			if len(page) < f.Limit {
				break
			}
			f.AfterAt, f.AfterID = prev.At, prev.ID
		}
		close(stop)
		wg.Wait()
		for _, id := range before {
			if !seen[id] {
				t.Errorf("event %s skipped", id)
			}
		}
		if len(seen) != len(before) {
			t.Errorf("paged %d events, want %d", len(seen), len(before))
		}
	})

	t.Run("prune deletes the events older than its time, oldest first, up to its limit", func(t *testing.T) {
		s := open(t)
		for i := range 10 {
			record(t, s, quire.NewEvent(fmt.Sprintf("test.e%d", i), baseTime.Add(time.Duration(i)*time.Hour), nil, quire.RequestInfo{}))
		}
		n, err := s.PruneAudit(t.Context(), baseTime.Add(5*time.Hour), 3)
		if err != nil || n != 3 {
			t.Fatalf("PruneAudit = %d, %v; want 3", n, err)
		}
		n, err = s.PruneAudit(t.Context(), baseTime.Add(5*time.Hour), 100)
		if err != nil || n != 2 {
			t.Fatalf("PruneAudit = %d, %v; want 2", n, err)
		}
		got := actions(auditEvents(t, s, quire.AuditFilter{}))
		want := []string{"test.e9", "test.e8", "test.e7", "test.e6", "test.e5"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("kept (-want +got):\n%s", diff)
		}
	})
}

func init() { register("audit-writes", testAuditWrites) }

// testAuditWrites checks that every write a service records an event with
// writes it, whichever way the store runs the write (a transaction, one
// statement, the group commit), and that the store names what it creates
// and blanks what it did not change.
func testAuditWrites(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	ev := func(action string) *quire.Event { return quire.CLIEvent(action, baseTime) }
	u := &quire.User{Email: "ed@example.com", Name: "Ed", Role: quire.Role{Key: "editor"}, Status: quire.UserActive,
		PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA"}
	sess := &quire.Session{UserID: "", TokenHash: []byte("h1"), CreatedAt: baseTime,
		ExpiresAt: baseTime.Add(time.Hour), LastUsedAt: baseTime}
	steps := []struct {
		action string
		write  func(s quire.Store) error
	}{
		{"user.created", func(s quire.Store) error { return s.CreateUser(ctx, u) }},
		{"user.updated", func(s quire.Store) error { return s.SetUserRole(ctx, u.ID, "viewer") }},
		{"user.disabled", func(s quire.Store) error { return s.DisableUser(ctx, u.ID, baseTime) }},
		{"user.enabled", func(s quire.Store) error { return s.EnableUser(ctx, u.ID, baseTime) }},
		{"auth.password_changed", func(s quire.Store) error { return s.SetPassword(ctx, u.ID, u.PasswordHash, baseTime) }},
		{"user.unlocked", func(s quire.Store) error { return s.ClearLoginFailures(ctx, u.Email) }},
		{"role.updated", func(s quire.Store) error {
			return s.PutRole(ctx, quire.Role{Key: "viewer", Label: "Reader", Docs: quire.LevelView})
		}},
		{"auth.login", func(s quire.Store) error {
			sess.UserID = u.ID // known once the user is created
			return s.CreateSession(ctx, sess)
		}},
		{"auth.logout", func(s quire.Store) error { return s.RevokeSession(ctx, sess.ID, baseTime) }},
		{"project.member_added", func(r quire.Store) error {
			p, err := s.CreateProject(ctx, "Apollo") // the plain store: no event
			if err != nil {
				return err
			}
			return r.AddProjectMember(ctx, p.ID, u.ID)
		}},
	}
	for _, step := range steps {
		if err := step.write(s.Recording(ev(step.action))); err != nil {
			t.Fatalf("%s: %v", step.action, err)
		}
		if got := auditEvents(t, s, quire.AuditFilter{Action: step.action}); len(got) != 1 {
			t.Errorf("%s: %d events, want 1", step.action, len(got))
		}
	}

	created := ev("project.created").On(quire.TargetProject, "", "Gemini")
	p := must(s.Recording(created).CreateProject(ctx, "Gemini"))(t)
	if got := auditEvents(t, s, quire.AuditFilter{TargetID: p.ID}); len(got) != 1 || got[0].Action != "project.created" {
		t.Errorf("the created project's events: %v", actions(got))
	}
	for i := range 2 {
		dep := ev("department.created").On(quire.TargetDepartment, "", "Ops")
		d := must(s.Recording(dep).EnsureDepartment(ctx, "Ops"))(t)
		if got := auditEvents(t, s, quire.AuditFilter{Action: "department.created", TargetID: d.ID}); len(got) != 1 {
			t.Errorf("ensure %d: %d events of the department, want the one of its creation", i, len(got))
		}
	}
}
