package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/mail/mailtest"
	"quire/postgres"
	"quire/sqlite"
	"quire/sqlstore"
)

// engineOf is the sqlstore engine under the env's store, for writing rows
// no request can write as fast.
func engineOf(t *testing.T, s any) (sqlstore.Engine, *sqlstore.Dialect) {
	t.Helper()
	switch db := s.(type) {
	case *sqlite.DB:
		return db.NotifySQL.E, db.NotifySQL.D
	case *postgres.DB:
		return db.NotifySQL.E, db.NotifySQL.D
	}
	t.Fatalf("store %T", s)
	return nil, nil
}

// One person with more pending instant notifications than a statement may
// have parameters (what an editor makes by commenting a mention of them in
// a loop) gets one mail of the newest MaxDigest, and everyone else's mail
// still goes: the claim's ids used to go into one IN list, which failed
// every mail of every person at every tick.
func TestNotificationsFloodOfMentionsStopsNoMail(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	id := f.doc("public", "text")
	carol := f.user("carol@example.com", "viewer", "")
	for _, u := range []quire.User{carol, f.bob} {
		if r := f.do("POST", "/api/documentation/documents/"+id+"/comments", bearer(f.adaToken),
			jsonBody(map[string]any{"body": "Hi " + mentionOf(u)})); r.Status != http.StatusCreated {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
	}
	f.fanOut()
	// 70,000 more of bob's, past SQLite's 32,766 and PostgreSQL's 65,535
	// parameters, written directly (one comment a notification would take
	// minutes).
	e, d := engineOf(t, f.store)
	ctx := context.Background()
	at := d.Time(f.clock.Now())
	const n, batch = 70000, 1000
	err := e.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		for i := 0; i < n; i += batch {
			var p sqlstore.Params
			rows := make([]string, 0, batch)
			for range batch {
				rows = append(rows, "("+p.Add(sqlstore.NewID())+", "+p.Add(f.bob.ID)+", 'mention', "+p.Add(id)+", '', "+
					p.Add(f.ada.ID)+", 'Hi', "+p.Add(at)+", 'instant')")
			}
			if _, err := q.Exec(ctx, `INSERT INTO notifications (id, user_id, kind, document_id, comment_id, actor_id, excerpt, created_at, mail)
				VALUES `+strings.Join(rows, ", "), p...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	if sent := f.mailNow(); sent != 2 {
		t.Errorf("%d mails sent, want carol's and bob's", sent)
	}
	if sent := f.mailNow(); sent != 0 {
		t.Errorf("%d mails sent again, want none: every pending mark is cleared", sent)
	}
}

// A comment's notification shows the comment's text as it is when read:
// edited, its new text; deleted, none, in the list and in the mail made
// after the deletion.
func TestNotificationsExcerptIsTheCommentNow(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	srv := mailtest.NewServer(t)
	startMailer(t, f.env, srv)
	id := f.doc("public", "text")
	var c struct {
		Comment struct {
			ID string `json:"id"`
		} `json:"comment"`
	}
	f.wantJSONLoose(f.do("POST", "/api/documentation/documents/"+id+"/comments", bearer(f.adaToken),
		jsonBody(map[string]any{"body": "SECRET-hunter2 oops " + mentionOf(f.bob)})), http.StatusCreated, &c)
	f.fanOut()
	if r := f.do("PATCH", "/api/documentation/comments/"+c.Comment.ID, bearer(f.adaToken),
		jsonBody(map[string]any{"body": "Edited " + strings.Repeat("é", 300) + " " + mentionOf(f.bob)})); r.Status != http.StatusOK {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	// The edited text, cut at MaxExcerpt characters with an ellipsis.
	if got := f.inbox(f.bobToken, ""); len(got.Notifications) != 1 ||
		got.Notifications[0].Excerpt != "Edited "+strings.Repeat("é", quire.MaxExcerpt-len("Edited "))+"…" {
		t.Errorf("after the edit: %+v, want the edited text", got.Notifications)
	}
	if r := f.do("DELETE", "/api/documentation/comments/"+c.Comment.ID, bearer(f.adaToken)); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if got := f.inbox(f.bobToken, ""); len(got.Notifications) != 1 || got.Notifications[0].Excerpt != "" {
		t.Errorf("after the deletion: %+v, want the notification without text", got.Notifications)
	}
	f.clock.Advance(time.Minute)
	if n := f.mailNow(); n != 1 {
		t.Fatalf("%d mails, want bob's", n)
	}
	msgs := srv.Wait(t, 1, 30*time.Second)
	if body := strings.ReplaceAll(string(msgs[0].Data), "=\r\n", ""); strings.Contains(body, "SECRET") || strings.Contains(body, "Edited") {
		t.Errorf("the deleted comment's text is mailed after its deletion")
	}
}
