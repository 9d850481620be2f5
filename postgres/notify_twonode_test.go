package postgres_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"quire"
	"quire/notify"
	"quire/pgtest"
	"quire/postgres"
	"quire/storetest"
)

// TestTwoNodesMailNotificationsOnce opens two stores on one database, as
// two quire processes, each with its notifications worker: the events are
// fanned out once and the burst of mentions is mailed once, whichever node
// gets there first and however often both try.
func TestTwoNodesMailNotificationsOnce(t *testing.T) {
	t.Parallel()
	n := newTwoNodes(t)
	a, b, ada, bob, d, ctx := n.a, n.b, n.ada, n.bob, n.doc, t.Context()
	for i := range 5 {
		c := &quire.Comment{ID: uuid.Must(uuid.NewV7()).String(), DocumentID: d.ID, AuthorID: bob.ID,
			Body: "see [@Ada](mention:" + ada.ID + ")"}
		ev := quire.NewEvent(quire.ActionCommentCreated, t0, &quire.EventActor{ID: bob.ID, Name: bob.Name}, quire.RequestInfo{}).
			On(quire.TargetDocument, d.ID, d.Title).With("comment_id", c.ID)
		ev.Mentions, ev.MentionsIgnored = quire.Mentions(c.Body)
		node := []*postgres.DB{a, b}[i%2]
		if err := node.Recording(ev).CreateComment(ctx, quire.Visibility{All: true}, c, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	clock := func() time.Time { return t0.Add(5 * time.Minute) }
	// Both nodes' workers, twice each, fan out and then mail at once.
	race := func(work func(svc *notify.Service) error) {
		var wg sync.WaitGroup
		for _, node := range []*postgres.DB{a, b, a, b} {
			svc := notify.New(node, notify.Config{Now: clock, Key: []byte("k"), PublicURL: "http://docs.example.test"})
			wg.Go(func() {
				if err := work(svc); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	race(func(svc *notify.Service) error {
		for {
			n, err := svc.FanOut(ctx, 2, nil)
			if err != nil || n == 0 {
				return err
			}
		}
	})
	ns, unread, err := b.Notifications(ctx, quire.NotificationFilter{Visibility: quire.Visibility{UserID: ada.ID}, UserID: ada.ID, Limit: 100})
	if err != nil || len(ns) != 5 || unread != 5 {
		t.Fatalf("ada has %d notifications (%d unread), %v; want the 5 mentions once", len(ns), unread, err)
	}
	race(func(svc *notify.Service) error {
		for range 3 {
			if _, err := svc.Mail(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	mails, err := a.ClaimMail(ctx, clock(), time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(mails) != 1 || mails[0].To != ada.Email || strings.Count(mails[0].Text, "mentioned you") != 5 {
		t.Fatalf("%d mails in the outbox, want one to ada with the 5 mentions: %+v", len(mails), mails)
	}
}

// TestTwoNodesFanOutADocumentsEventsInOrder: while one node holds the claim
// of a document's created event, another node's worker leaves the comment
// made just after it in the queue, so that the comment, fanned out later,
// finds the creator's automatic watch and tells her of the new thread.
func TestTwoNodesFanOutADocumentsEventsInOrder(t *testing.T) {
	t.Parallel()
	n := newTwoNodes(t)
	url, a, b, ada, bob, d, ctx := n.url, n.a, n.b, n.ada, n.bob, n.doc, t.Context()
	c := &quire.Comment{ID: uuid.Must(uuid.NewV7()).String(), DocumentID: d.ID, AuthorID: bob.ID, Body: "First!"}
	ev := quire.NewEvent(quire.ActionCommentCreated, t0, &quire.EventActor{ID: bob.ID, Name: bob.Name}, quire.RequestInfo{}).
		On(quire.TargetDocument, d.ID, d.Title).With("comment_id", c.ID)
	if err := b.Recording(ev).CreateComment(ctx, quire.Visibility{All: true}, c, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}

	// Node A's claim of the created event, held open.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT seq FROM notify_queue WHERE action = $1 FOR UPDATE`, quire.ActionDocumentCreated); err != nil {
		t.Fatal(err)
	}
	svc := func(db *postgres.DB) *notify.Service {
		return notify.New(db, notify.Config{Now: func() time.Time { return t0.Add(time.Minute) }, Key: []byte("k"),
			PublicURL: "http://docs.example.test"})
	}
	if n, err := svc(b).FanOut(ctx, 10, nil); err != nil || n != 0 {
		t.Fatalf("node B fanned out %d events (%v) while A held the document's first", n, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := svc(b).FanOut(ctx, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	ns, _, err := a.Notifications(ctx, quire.NotificationFilter{Visibility: quire.Visibility{UserID: ada.ID}, UserID: ada.ID, Limit: 10})
	if err != nil || len(ns) != 1 || ns[0].Kind != quire.NotifyComment {
		t.Fatalf("ada's notifications: %+v, %v; want the new thread", ns, err)
	}
}

// twoNodes is a throwaway PostgreSQL with two stores on it, as two quire
// processes, two editors and ada's public document, whose created event
// is queued for the notifications workers.
type twoNodes struct {
	url      string
	a, b     *postgres.DB
	ada, bob *quire.User
	doc      *quire.Document
}

func newTwoNodes(t *testing.T) twoNodes {
	t.Helper()
	n := twoNodes{url: pgtest.StartFrom(t, "migrated", migrate)}
	n.a, n.b = open(t, n.url), open(t, n.url)
	n.ada, n.bob = storetest.NewEditor(t, n.a, "ada@example.com"), storetest.NewEditor(t, n.a, "bob@example.com")
	n.doc = &quire.Document{ID: uuid.Must(uuid.NewV7()).String(), Title: "Plan", ContentType: "markdown", Status: "draft",
		Visibility: "public", OwnerID: n.ada.ID, Tags: []string{}}
	created := quire.NewEvent(quire.ActionDocumentCreated, t0, &quire.EventActor{ID: n.ada.ID, Name: n.ada.Name}, quire.RequestInfo{}).
		On(quire.TargetDocument, n.doc.ID, n.doc.Title)
	if err := n.a.Recording(created).CreateDocument(t.Context(), n.doc, t0); err != nil {
		t.Fatal(err)
	}
	return n
}
