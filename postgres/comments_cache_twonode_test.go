package postgres_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/comments"
	"quire/documents"
	"quire/pgtest"
	"quire/storetest"
)

// TestTwoNodesCommentsCache opens two stores on one database, as two quire
// processes, each with its comments service and so its cache of threads:
// every change the second node makes (a thread, a reply, an edit, a
// reaction, a resolve, a save that moves an anchor, a delete) is in the
// first node's next read of the window, which it had cached before.
func TestTwoNodesCommentsCache(t *testing.T) {
	t.Parallel()
	url := pgtest.StartFrom(t, "migrated", migrate)
	a, b := open(t, url), open(t, url)
	ctx := t.Context()
	ada := storetest.NewEditor(t, a, "ada@example.com")
	fresh, err := a.UserByID(ctx, ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	actor := quire.Actor{User: *fresh}
	docsB := documents.New(b, documents.Config{})
	doc, err := documents.New(a, documents.Config{}).Create(ctx, actor, documents.DocumentInput{Title: documents.Some("Plan"),
		Visibility: documents.Some("public"), Content: documents.Some("Alpha one. Beta two.")})
	if err != nil {
		t.Fatal(err)
	}
	onA, onB := comments.New(a, comments.Config{}), comments.New(b, comments.Config{})
	seen := func(want ...string) {
		t.Helper()
		for range 2 { // the first read may fill the cache, the second is from it
			w, err := onA.Window(ctx, actor, doc.ID, comments.StatusAll, 0, 100, "")
			if err != nil {
				t.Fatal(err)
			}
			threads, total := w.Threads, w.Total
			var got []string
			for _, c := range threads {
				line := c.Body
				if c.Anchor != nil {
					line += " @" + c.Anchor.State
				}
				for _, r := range c.Reactions {
					line += " " + r.Emoji
					if r.Mine {
						line += "(mine)"
					}
				}
				if !c.ResolvedAt.IsZero() {
					line += " resolved"
				}
				got = append(got, line)
				for _, r := range c.Replies {
					got = append(got, "> "+r.Body)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" || total != len(threads) {
				t.Fatalf("the first node reads %d threads (-want +got):\n%s", total, diff)
			}
		}
	}
	seen()
	root, err := onB.Create(ctx, actor, doc.ID, comments.Input{Body: "on beta", Anchor: &comments.AnchorInput{Quote: "Beta two"}})
	if err != nil {
		t.Fatal(err)
	}
	seen("on beta @attached")
	reply, err := onB.Create(ctx, actor, doc.ID, comments.Input{ParentID: root.ID, Body: "a reply"})
	if err != nil {
		t.Fatal(err)
	}
	seen("on beta @attached", "> a reply")
	if _, err := onB.Edit(ctx, actor, root.ID, "on beta, edited"); err != nil {
		t.Fatal(err)
	}
	seen("on beta, edited @attached", "> a reply")
	if _, err := onB.React(ctx, actor, root.ID, "👍", true); err != nil {
		t.Fatal(err)
	}
	seen("on beta, edited @attached 👍(mine)", "> a reply")
	// Another reader gets the same cached window, with no reaction of his.
	bob, err := a.UserByID(ctx, storetest.NewEditor(t, a, "bob@example.com").ID)
	if err != nil {
		t.Fatal(err)
	}
	w, err := onA.Window(ctx, quire.Actor{User: *bob}, doc.ID, comments.StatusAll, 0, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]quire.Reaction{{Emoji: "👍", Count: 1}}, w.Threads[0].Reactions); diff != "" {
		t.Errorf("the reactions as another reader (-want +got):\n%s", diff)
	}
	seen("on beta, edited @attached 👍(mine)", "> a reply")
	if _, err := onB.Resolve(ctx, actor, root.ID, true); err != nil {
		t.Fatal(err)
	}
	seen("on beta, edited @attached 👍(mine) resolved", "> a reply")
	if _, err := docsB.Update(ctx, actor, doc.ID, documents.DocumentInput{Content: documents.Some("Alpha one.")}, doc.UpdatedAt); err != nil {
		t.Fatal(err)
	}
	seen("on beta, edited @outdated 👍(mine) resolved", "> a reply")
	if err := onB.Delete(ctx, actor, reply.ID); err != nil {
		t.Fatal(err)
	}
	seen("on beta, edited @outdated 👍(mine) resolved")
}
