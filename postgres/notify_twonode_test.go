package postgres_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

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
	url := pgtest.Start(t)
	a, b := open(t, url), open(t, url)
	ctx := t.Context()
	ada, bob := storetest.NewEditor(t, a, "ada@example.com"), storetest.NewEditor(t, a, "bob@example.com")

	d := &quire.Document{ID: uuid.Must(uuid.NewV7()).String(), Title: "Plan", ContentType: "markdown", Status: "draft",
		Visibility: "public", OwnerID: ada.ID, Tags: []string{}}
	created := quire.NewEvent(quire.ActionDocumentCreated, t0, &quire.EventActor{ID: ada.ID, Name: ada.Name}, quire.RequestInfo{}).
		On(quire.TargetDocument, d.ID, d.Title)
	if err := a.Recording(created).CreateDocument(ctx, d, t0); err != nil {
		t.Fatal(err)
	}
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
