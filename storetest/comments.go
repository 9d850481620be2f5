package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("comments", testComments) }

// commentWorld is a docWorld with one public markdown document of the
// owner's, whose content is given.
type commentWorld struct {
	*docWorld
	doc *quire.Document
}

func newCommentWorld(t *testing.T, open Opener, content string) *commentWorld {
	t.Helper()
	w := newDocWorld(t, open)
	d := draft(w.owner, "Plan")
	d.Visibility, d.Content = "public", content
	return &commentWorld{docWorld: w, doc: w.create(t, d, baseTime)}
}

// commentVersions is what the stores offer beside quire.CommentStore for
// a reader that keeps threads in memory (comments.Versioned).
type commentVersions interface {
	CommentsSeq(ctx context.Context, vis quire.Visibility, id string) (quire.CommentsVersion, error)
	SharedThreads(ctx context.Context, f quire.CommentFilter) ([]quire.Comment, int, quire.CommentsVersion, map[string]map[string][]string, error)
	SharedReactions(ctx context.Context, vis quire.Visibility, documentID string, roots []string) (quire.CommentsVersion,
		map[string][]quire.Reaction, map[string]map[string][]string, error)
}

// ThreadFiller is what an engine's tests may add to the stores they give
// the suite: FillThreads writes n threads (roots without anchors) by
// author on document docID at once, in one transaction of the engine's
// SQL, counted as CreateComment counts them (comment_versions). The case
// of quire.MaxThreads fills a document with it up to a few places short
// of the limit, which under the race detector costs a fraction of 2,000
// creates, and takes the last places through CreateComment, whose rule it
// tests; without it, every place is taken through CreateComment.
type ThreadFiller interface {
	FillThreads(ctx context.Context, docID, authorID string, n int, at time.Time) error
}

// ReplyFiller is ThreadFiller's counterpart for a thread's replies:
// FillReplies writes n replies by author to the root parentID of document
// docID at once, in one transaction of the engine's SQL, as CreateComment
// would (a reply changes the comments version, not the threads). The case
// of quire.MaxReplies fills a thread with it up to a few places short of
// the limit and takes the last places through CreateComment, whose rule it
// tests; without it, every place is taken through CreateComment.
type ReplyFiller interface {
	FillReplies(ctx context.Context, docID, parentID, authorID string, n int, at time.Time) error
}

// at is the n-th minute after baseTime: the clock of the comments of a case.
func at(n int) time.Time { return baseTime.Add(time.Duration(n) * time.Minute) }

// quoting is the anchor of quote, with prefix and suffix.
func quoting(quote, prefix, suffix string) *quire.Anchor {
	return &quire.Anchor{Quote: quote, Prefix: prefix, Suffix: suffix}
}

// comment creates a comment by by on document docID (a reply when parentID
// is set) at the n-th minute, as by sees, and fails the test on an error.
func (w *commentWorld) comment(t *testing.T, docID string, by *quire.User, parentID string, a *quire.Anchor, body string, n int) *quire.Comment {
	t.Helper()
	c := &quire.Comment{DocumentID: docID, ParentID: parentID, AuthorID: by.ID, Body: body, Anchor: a}
	if err := w.s.CreateComment(t.Context(), sees(by), c, at(n)); err != nil {
		t.Fatalf("create comment %q: %v", body, err)
	}
	return c
}

// threads returns the threads of document docID with status as seeAll
// reads them for viewer, and their total, failing the test on an error.
func (w *commentWorld) threads(t *testing.T, docID, status string, viewer *quire.User) ([]quire.Comment, int) {
	t.Helper()
	cs, total, err := w.s.Threads(t.Context(), quire.CommentFilter{Visibility: seeAll, DocumentID: docID, ViewerID: viewer.ID,
		Status: status, Limit: 100})
	if err != nil {
		t.Fatalf("Threads(%s, %s): %v", docID, status, err)
	}
	return cs, total
}

// bodies returns the bodies of threads, each followed by those of its
// replies indented by "> ".
func bodies(threads []quire.Comment) []string {
	var out []string
	for _, c := range threads {
		out = append(out, c.Body)
		for _, r := range c.Replies {
			out = append(out, "> "+r.Body)
		}
	}
	return out
}

// anchorOf returns "state@position" of c's anchor, "" for none.
func anchorOf(c quire.Comment) string {
	if c.Anchor == nil {
		return ""
	}
	return fmt.Sprintf("%s@%d", c.Anchor.State, c.Anchor.Position)
}

// seed creates n comments by the owner on the world's document, replies to
// parentID when it is set, and returns one of them. Eight writers create
// them at once, which SQLite's writer commits together: one at a time,
// filling a document with threads or a thread with replies was the longest
// part of the suite on SQLite.
func (w *commentWorld) seed(t *testing.T, parentID string, n int) *quire.Comment {
	t.Helper()
	made := make([]*quire.Comment, n)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				c := &quire.Comment{DocumentID: w.doc.ID, ParentID: parentID, AuthorID: w.owner.ID, Body: fmt.Sprint(i)}
				if err := w.s.CreateComment(t.Context(), sees(w.owner), c, at(1)); err != nil {
					t.Errorf("create comment %d: %v", i, err)
					return
				}
				made[i] = c
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return made[n-1]
}

// warmUp reads the threads of document docID from n readers at once, so
// that a store with a pool of connections (PostgreSQL) holds n of them
// open: n writers then start at once instead of one after the other, each
// behind the opening of its connection.
func (w *commentWorld) warmUp(t *testing.T, docID string, n int) {
	t.Helper()
	atOnce(n, func() bool {
		_, _, err := w.s.Threads(t.Context(), quire.CommentFilter{Visibility: seeAll, DocumentID: docID, Status: "all", Limit: 100})
		if err != nil {
			t.Error(err)
		}
		return err == nil
	})
}

// save sets the document's content through UpdateDocument, as a save, a
// version restore and an import do.
func (w *commentWorld) save(t *testing.T, id, content string, n int) {
	t.Helper()
	w.update(t, id, at(n), func(d *quire.Document) { d.Content = content })
}

func testComments(t *testing.T, open Opener) {
	t.Run("a thread reads back with its anchor, replies in order, and a reply to a reply joins the root", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.\n\nBeta   two.")
		ctx := t.Context()
		w.comment(t, w.doc.ID, w.colleague, "", nil, "on the page", 1)
		// The quote matches the text with its white space collapsed, and is
		// stored so.
		root := w.comment(t, w.doc.ID, w.colleague, "", quoting("Beta\n two", "", ""), "Is this right?", 2)
		if root.ID == "" || root.AuthorName != w.colleague.Name || !root.CreatedAt.Equal(at(2)) || !root.UpdatedAt.Equal(at(2)) {
			t.Errorf("created root = %+v", root)
		}
		wantAnchor := &quire.Anchor{Quote: "Beta two", State: quire.AnchorAttached, Position: len("Alpha one. ")}
		if diff := cmp.Diff(wantAnchor, root.Anchor); diff != "" {
			t.Errorf("anchor (-want +got):\n%s", diff)
		}
		r1 := w.comment(t, w.doc.ID, w.owner, root.ID, nil, "Yes.", 3)
		r2 := w.comment(t, w.doc.ID, w.outsider, r1.ID, nil, "Agreed.", 4)
		if r1.ParentID != root.ID || r2.ParentID != root.ID {
			t.Errorf("parents %q, %q, want the root %q", r1.ParentID, r2.ParentID, root.ID)
		}
		got, err := w.s.Comment(ctx, sees(w.loner), w.loner.ID, root.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := quire.Comment{ID: root.ID, DocumentID: w.doc.ID, AuthorID: w.colleague.ID, AuthorName: w.colleague.Name,
			Body: "Is this right?", Anchor: wantAnchor, CreatedAt: at(2), UpdatedAt: at(2), Reactions: []quire.Reaction{}}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("Comment (-want +got):\n%s", diff)
		}
		threads, total := w.threads(t, w.doc.ID, "open", w.owner)
		if diff := cmp.Diff([]string{"Is this right?", "> Yes.", "> Agreed.", "on the page"}, bodies(threads)); diff != "" || total != 2 {
			t.Errorf("threads: total %d, bodies (-want +got):\n%s", total, diff)
		}
		if r := threads[0].Replies[1]; r.AuthorName != w.outsider.Name || r.Anchor != nil || r.ParentID != root.ID {
			t.Errorf("reply = %+v", r)
		}
	})

	t.Run("a parent of another document, an unknown parent, an anchor not in the text, and a reply's anchor are refused", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one. Beta two.")
		ctx := t.Context()
		other := w.create(t, draft(w.owner, "Other"), baseTime)
		elsewhere := w.comment(t, other.ID, w.owner, "", nil, "elsewhere", 1)
		root := w.comment(t, w.doc.ID, w.owner, "", nil, "page comment", 2)
		for _, c := range []struct {
			name   string
			c      quire.Comment
			fields map[string]string
		}{
			{"a parent of another document", quire.Comment{ParentID: elsewhere.ID}, map[string]string{"parent_id": "is not a comment of this document"}},
			{"an unknown parent", quire.Comment{ParentID: unknownID}, map[string]string{"parent_id": "is not a comment of this document"}},
			{"an anchor not in the text", quire.Comment{Anchor: quoting("Gamma", "", "")}, map[string]string{"anchor": "the quote is not in the document's text"}},
			{"an anchor of white space", quire.Comment{Anchor: quoting(" \n ", "", "")}, map[string]string{"anchor": "the quote must not be empty"}},
			{"a reply's anchor", quire.Comment{ParentID: root.ID, Anchor: quoting("Alpha", "", "")},
				map[string]string{"anchor": "a reply has no anchor: only a thread's first comment has one"}},
			{"a NUL in the body", quire.Comment{Body: "a\x00b"}, map[string]string{"body": "must not contain the NUL character"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				in := c.c
				in.DocumentID, in.AuthorID = w.doc.ID, w.owner.ID
				if in.Body == "" {
					in.Body = "refused"
				}
				wantFields(t, w.s.CreateComment(ctx, seeAll, &in, at(3)), c.fields)
			})
		}
		threads, total := w.threads(t, w.doc.ID, "all", w.owner)
		if diff := cmp.Diff([]string{"page comment"}, bodies(threads)); diff != "" || total != 1 {
			t.Errorf("nothing half-written: total %d, bodies (-want +got):\n%s", total, diff)
		}
	})

	t.Run("prefix and suffix pick among several occurrences; an ambiguous quote is refused", func(t *testing.T) {
		w := newCommentWorld(t, open, "cat hat cat bat")
		c := w.comment(t, w.doc.ID, w.owner, "", quoting("at", "h", ""), "the hat", 1)
		if got := anchorOf(*c); got != "attached@5" {
			t.Errorf("anchor with prefix = %s, want attached@5", got)
		}
		c = w.comment(t, w.doc.ID, w.owner, "", quoting("a", "", "t b"), "the second cat", 2)
		if got := anchorOf(*c); got != "attached@9" {
			t.Errorf("anchor with suffix = %s, want attached@9", got)
		}
		in := &quire.Comment{DocumentID: w.doc.ID, AuthorID: w.owner.ID, Body: "which?", Anchor: quoting("at", "", "")}
		wantFields(t, w.s.CreateComment(t.Context(), seeAll, in, at(3)), map[string]string{"anchor": "the quote is not in the document's text"})
	})

	t.Run("anchors follow the text: a save that moves a quote, one that removes it, a restore of the old version", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one. Beta two. Gamma three.")
		gamma := w.comment(t, w.doc.ID, w.owner, "", quoting("Gamma three", "", ""), "on gamma", 1)
		page := w.comment(t, w.doc.ID, w.owner, "", nil, "on the page", 2)
		alpha := w.comment(t, w.doc.ID, w.owner, "", quoting("Alpha one", "", ""), "on alpha", 3)
		beta := w.comment(t, w.doc.ID, w.owner, "", quoting("Beta two", "", ""), "on beta", 4)
		w.comment(t, w.doc.ID, w.member, beta.ID, nil, "a reply", 5)
		order := func(want ...string) {
			t.Helper()
			threads, total := w.threads(t, w.doc.ID, "open", w.owner)
			var got []string
			for _, c := range threads {
				got = append(got, c.Body+" "+anchorOf(c))
			}
			if diff := cmp.Diff(want, got); diff != "" || total != 4 {
				t.Errorf("threads: total %d (-want +got):\n%s", total, diff)
			}
		}
		order("on alpha attached@0", "on beta attached@11", "on gamma attached@21", "on the page ")

		w.save(t, w.doc.ID, "Gamma three, then Alpha one.", 10)
		order("on gamma attached@0", "on alpha attached@18", "on beta outdated@-1", "on the page ")
		got := must(w.s.Comment(t.Context(), seeAll, w.owner.ID, beta.ID))(t)
		if diff := cmp.Diff(&quire.Anchor{Quote: "Beta two", State: quire.AnchorOutdated, Position: -1}, got.Anchor); diff != "" {
			t.Errorf("the outdated thread keeps its quote (-want +got):\n%s", diff)
		}

		v1 := must(w.s.Version(t.Context(), seeAll, w.doc.ID, 1))(t)
		w.save(t, w.doc.ID, v1.Content, 11)
		order("on alpha attached@0", "on beta attached@11", "on gamma attached@21", "on the page ")

		// A change of the content type is a change of the text too.
		w.update(t, w.doc.ID, at(12), func(d *quire.Document) {
			d.ContentType, d.Content = "html", "<p>Beta two</p><p>Alpha one</p>"
		})
		order("on beta attached@0", "on alpha attached@9", "on gamma outdated@-1", "on the page ")
		_, _, _ = gamma, page, alpha
	})

	t.Run("every write of a document's comments, and a save that moves their anchors, changes its comments version", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one. Beta two.")
		ctx := t.Context()
		v, ok := w.s.(commentVersions)
		if !ok {
			t.Fatal("the store keeps no comments version")
		}
		other := w.create(t, draft(w.owner, "Other"), baseTime)
		last := must(v.CommentsSeq(ctx, seeAll, w.doc.ID))(t)
		otherSeq := must(v.CommentsSeq(ctx, sees(w.owner), other.ID))(t)
		// step checks the version after a change: All moves at every
		// change, Threads to All at every change but a reaction, which
		// names the comment reacted to.
		reacted := ""
		step := func(what string, change bool) {
			t.Helper()
			got := must(v.CommentsSeq(ctx, sees(w.member), w.doc.ID))(t)
			reaction := strings.Contains(what, "reaction")
			switch {
			case change && got.All == last.All:
				t.Errorf("%s: the comments version stays %d", what, got.All)
			case !change && got != last:
				t.Errorf("%s: the comments version moves from %+v to %+v", what, last, got)
			case change && reaction && got.Threads != last.Threads:
				t.Errorf("%s: the threads' version moves from %d to %d", what, last.Threads, got.Threads)
			case change && !reaction && got.Threads != got.All:
				t.Errorf("%s: the threads' version is %d, not %d", what, got.Threads, got.All)
			case change && reaction && got.Reacted != reacted:
				t.Errorf("%s: the comment reacted to is %q, want %q", what, got.Reacted, reacted)
			case change && !reaction && got.Reacted != "":
				t.Errorf("%s: the comment reacted to is still %q", what, got.Reacted)
			}
			last = got
		}
		root := w.comment(t, w.doc.ID, w.owner, "", quoting("Beta two", "", ""), "a thread", 1)
		step("a create", true)
		reply := w.comment(t, w.doc.ID, w.member, root.ID, nil, "a reply", 2)
		step("a reply", true)
		must(w.s.EditComment(ctx, seeAll, root.ID, w.owner.ID, "an edited thread", at(3)))(t)
		step("an edit", true)
		must(w.s.EditComment(ctx, seeAll, root.ID, w.owner.ID, "an edited thread", at(4)))(t)
		step("an edit that changes nothing", false)
		must(w.s.ResolveComment(ctx, seeAll, root.ID, w.owner.ID, true, at(5)))(t)
		step("a resolve", true)
		must(w.s.ResolveComment(ctx, seeAll, root.ID, w.owner.ID, false, at(6)))(t)
		step("a reopen", true)
		must(w.s.React(ctx, seeAll, reply.ID, w.owner.ID, "👍", true))(t)
		reacted = reply.ID
		step("a reaction", true)

		threads, total, seq, reactors, err := v.SharedThreads(ctx, quire.CommentFilter{Visibility: seeAll, DocumentID: w.doc.ID,
			ViewerID: w.owner.ID, Status: "all", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if seq != last || total != 1 || len(threads) != 1 || len(threads[0].Replies) != 1 {
			t.Fatalf("SharedThreads: seq %+v (want %+v), total %d, %d threads", seq, last, total, len(threads))
		}
		if diff := cmp.Diff([]quire.Reaction{{Emoji: "👍", Count: 1}}, threads[0].Replies[0].Reactions); diff != "" {
			t.Errorf("SharedThreads marks no reaction mine (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]map[string][]string{reply.ID: {"👍": {w.owner.ID}}}, reactors); diff != "" {
			t.Errorf("SharedThreads' reactors (-want +got):\n%s", diff)
		}

		seq, reactions, reactors, err := v.SharedReactions(ctx, sees(w.member), w.doc.ID, []string{root.ID, reply.ID})
		if err != nil || seq != last {
			t.Fatalf("SharedReactions: version %+v (want %+v), %v", seq, last, err)
		}
		if diff := cmp.Diff(map[string][]quire.Reaction{reply.ID: {{Emoji: "👍", Count: 1}}}, reactions); diff != "" {
			t.Errorf("SharedReactions' reactions (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]map[string][]string{reply.ID: {"👍": {w.owner.ID}}}, reactors); diff != "" {
			t.Errorf("SharedReactions' reactors (-want +got):\n%s", diff)
		}
		// Roots of another document, or of none, read nothing of it.
		_, reactions, _, err = v.SharedReactions(ctx, seeAll, other.ID, []string{root.ID, reply.ID, "x\x00"})
		if err != nil || len(reactions) != 0 {
			t.Errorf("SharedReactions of another document's thread: %v, %v", reactions, err)
		}
		_, _, _, err = v.SharedReactions(ctx, sees(w.loner), other.ID, []string{root.ID})
		wantCode(t, err, quire.ENOTFOUND)

		must(w.s.React(ctx, seeAll, reply.ID, w.owner.ID, "👍", false))(t)
		step("a reaction taken back", true)
		if _, reactions, _, err = v.SharedReactions(ctx, seeAll, w.doc.ID, []string{root.ID, reply.ID}); err != nil || len(reactions) != 0 {
			t.Errorf("SharedReactions after the last reaction was taken back: %v, %v", reactions, err)
		}
		w.save(t, w.doc.ID, "Alpha one. Beta two. Gamma three.", 7)
		step("a save that leaves every anchor where it was", false)
		w.save(t, w.doc.ID, "Zero. Alpha one. Beta two.", 8)
		step("a save that moves an anchor", true)
		w.save(t, w.doc.ID, "Zero. Alpha one.", 9)
		step("a save that outdates an anchor", true)
		if err := w.s.DeleteComment(ctx, seeAll, reply.ID, at(10)); err != nil {
			t.Fatal(err)
		}
		step("a delete", true)
		if got := must(v.CommentsSeq(ctx, sees(w.owner), other.ID))(t); got != otherSeq {
			t.Errorf("another document's comments version moved from %+v to %+v", otherSeq, got)
		}
		_, err = v.CommentsSeq(ctx, sees(w.loner), other.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = v.CommentsSeq(ctx, seeAll, "00000000-0000-4000-8000-000000000000")
		wantCode(t, err, quire.ENOTFOUND)
		w.trash(t, w.doc.ID, w.owner, at(11))
		_, err = v.CommentsSeq(ctx, seeAll, w.doc.ID)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("creates racing with a save leave their anchors where the saved text has them", func(t *testing.T) {
		// A long text: finding the anchor in it takes a create a while, in
		// which a save that did not wait for it would commit.
		long := strings.Repeat(" Filler words to read.", 20000)
		text := func(round int) string { return strings.Repeat("Preface. ", round) + "Alpha one. Beta two." + long }
		w := newCommentWorld(t, open, text(0))
		ctx := t.Context()
		for round := 1; round <= 3; round++ {
			// One writer saves while another creates threads one after the
			// other until the save has returned: one create straddles the
			// save's commit.
			var (
				wg    sync.WaitGroup
				saved atomic.Bool
			)
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer saved.Store(true)
				_, err := w.s.UpdateDocument(ctx, seeAll, w.doc.ID, time.Time{}, w.owner.ID, at(round),
					func(d *quire.Document) (bool, error) { d.Content = text(round); return true, nil })
				if err != nil {
					t.Error(err)
				}
			}()
			go func() {
				defer wg.Done()
				for i, last := 0, false; !last; i++ {
					last = saved.Load()
					err := w.s.CreateComment(ctx, seeAll, &quire.Comment{DocumentID: w.doc.ID, AuthorID: w.owner.ID,
						Body: fmt.Sprint(round, ".", i), Anchor: quoting("Beta two", "", "")}, at(round))
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
			wg.Wait()
			want := fmt.Sprintf("attached@%d", strings.Index(text(round), "Beta two"))
			threads, _ := w.threads(t, w.doc.ID, "open", w.owner)
			for _, c := range threads {
				if got := anchorOf(c); got != want {
					t.Fatalf("round %d, thread %s: %s, want %s", round, c.Body, got, want)
				}
			}
		}
	})

	t.Run("a document with many anchored threads re-anchors them all in its save", func(t *testing.T) {
		content := ""
		for i := range 150 {
			content += fmt.Sprintf("Sentence %03d. ", i)
		}
		w := newCommentWorld(t, open, content)
		for i := range 150 {
			w.comment(t, w.doc.ID, w.owner, "", quoting(fmt.Sprintf("Sentence %03d.", i), "", ""), fmt.Sprint(i), i)
		}
		w.save(t, w.doc.ID, "Preface. "+content, 200)
		threads, _ := w.threads(t, w.doc.ID, "open", w.owner)
		for i, c := range threads {
			if want := fmt.Sprintf("attached@%d", len("Preface. ")+i*len("Sentence 000. ")); c.Body != fmt.Sprint(i) || anchorOf(c) != want {
				t.Fatalf("thread %d: %s %s, want %d %s", i, c.Body, anchorOf(c), i, want)
			}
		}
	})

	t.Run("the comments of a document no one else sees are NOT_FOUND on every operation, as an unknown id", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		secret := draft(w.owner, "Secret")
		secret.Content = "Alpha one."
		secret = w.create(t, secret, baseTime)
		root := w.comment(t, secret.ID, w.owner, "", quoting("Alpha", "", ""), "private talk", 1)
		reply := w.comment(t, secret.ID, w.owner, root.ID, nil, "private reply", 2)
		for _, u := range []*quire.User{w.colleague, w.outsider, w.member, w.loner} {
			vis := sees(u)
			for _, id := range []string{root.ID, reply.ID} {
				ops := map[string]func(id string) error{
					"Comment": func(id string) error { _, err := w.s.Comment(ctx, vis, u.ID, id); return err },
					"EditComment": func(id string) error {
						_, err := w.s.EditComment(ctx, vis, id, u.ID, "taken over", at(3))
						return err
					},
					"DeleteComment": func(id string) error { return w.s.DeleteComment(ctx, vis, id, at(3)) },
					"ResolveComment": func(id string) error {
						_, err := w.s.ResolveComment(ctx, vis, id, u.ID, true, at(3))
						return err
					},
					"React": func(id string) error { _, err := w.s.React(ctx, vis, id, u.ID, "👍", true); return err },
					"CreateComment": func(id string) error {
						return w.s.CreateComment(ctx, vis, &quire.Comment{DocumentID: secret.ID, ParentID: id, AuthorID: u.ID, Body: "hi"}, at(3))
					},
				}
				for name, op := range ops {
					err, unknown := op(id), op(unknownID)
					if name == "CreateComment" { // the document is what is not found
						unknown = w.s.CreateComment(ctx, vis, &quire.Comment{DocumentID: unknownID, AuthorID: u.ID, Body: "hi"}, at(3))
					}
					wantCode(t, err, quire.ENOTFOUND)
					if err.Error() != unknown.Error() {
						t.Errorf("%s by %s: %v, for an unknown id %v", name, u.Email, err, unknown)
					}
				}
			}
			_, _, err := w.s.Threads(ctx, quire.CommentFilter{Visibility: vis, DocumentID: secret.ID, Status: "all", Limit: 10})
			_, _, unknown := w.s.Threads(ctx, quire.CommentFilter{Visibility: vis, DocumentID: unknownID, Status: "all", Limit: 10})
			wantCode(t, err, quire.ENOTFOUND)
			if err.Error() != unknown.Error() {
				t.Errorf("Threads by %s: %v, for an unknown id %v", u.Email, err, unknown)
			}
		}
		threads, total := w.threads(t, secret.ID, "all", w.owner)
		if diff := cmp.Diff([]string{"private talk", "> private reply"}, bodies(threads)); diff != "" || total != 1 ||
			len(threads[0].Reactions) != 0 || !threads[0].ResolvedAt.IsZero() {
			t.Errorf("the refused operations changed the thread: %+v", threads)
		}
	})

	t.Run("the trash hides a document's comments, a restore brings them back, a purge deletes them", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		root := w.comment(t, w.doc.ID, w.owner, "", quoting("Alpha", "", ""), "a thread", 1)
		w.comment(t, w.doc.ID, w.owner, root.ID, nil, "a reply", 2)
		w.trash(t, w.doc.ID, w.owner, at(3))
		_, err := w.s.Comment(ctx, seeAll, w.owner.ID, root.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, _, err = w.s.Threads(ctx, quire.CommentFilter{Visibility: seeAll, DocumentID: w.doc.ID, Status: "all", Limit: 10})
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, w.s.CreateComment(ctx, seeAll, &quire.Comment{DocumentID: w.doc.ID, AuthorID: w.owner.ID, Body: "late"}, at(4)),
			quire.ENOTFOUND)
		_, err = w.s.React(ctx, seeAll, root.ID, w.owner.ID, "👍", true)
		wantCode(t, err, quire.ENOTFOUND)

		if _, err := w.s.RestoreDocument(ctx, seeAll, w.doc.ID); err != nil {
			t.Fatal(err)
		}
		threads, total := w.threads(t, w.doc.ID, "all", w.owner)
		if diff := cmp.Diff([]string{"a thread", "> a reply"}, bodies(threads)); diff != "" || total != 1 {
			t.Errorf("after the restore: total %d, bodies (-want +got):\n%s", total, diff)
		}
		if got := must(w.s.OpenThreads(ctx, []string{w.doc.ID}))(t); got[w.doc.ID] != 1 {
			t.Errorf("open threads after the restore = %v", got)
		}

		w.trash(t, w.doc.ID, w.owner, at(5))
		if err := w.s.PurgeDocument(ctx, seeAll, w.doc.ID); err != nil {
			t.Fatal(err)
		}
		if got := must(w.s.OpenThreads(ctx, []string{w.doc.ID}))(t); len(got) != 0 {
			t.Errorf("open threads after the purge = %v", got)
		}

		// The automatic purge of the trash deletes them too.
		d := w.create(t, draft(w.owner, "Old"), baseTime)
		old := w.comment(t, d.ID, w.owner, "", nil, "old talk", 6)
		w.trash(t, d.ID, w.owner, at(7))
		if n, err := w.s.PurgeTrash(ctx, at(8), 10, nil); err != nil || n != 1 {
			t.Fatalf("PurgeTrash = %d, %v", n, err)
		}
		if got := must(w.s.OpenThreads(ctx, []string{d.ID}))(t); len(got) != 0 {
			t.Errorf("open threads after the automatic purge = %v", got)
		}
		_, err = w.s.Comment(ctx, seeAll, w.owner.ID, old.ID)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a thread holds at most MaxReplies replies, counted in the transaction of the create", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		root := w.comment(t, w.doc.ID, w.owner, "", nil, "a busy thread", 0)
		// The first places are filled in one transaction where the engine's
		// tests can (ReplyFiller), the last ones before the race through
		// CreateComment, eight writers at once, as the rule counts them.
		through := quire.MaxReplies - 1
		if f, ok := w.s.(ReplyFiller); ok {
			through = 16
			if err := f.FillReplies(ctx, w.doc.ID, root.ID, w.owner.ID, quire.MaxReplies-1-through, at(1)); err != nil {
				t.Fatalf("fill replies: %v", err)
			}
		}
		last := w.seed(t, root.ID, through)
		// Of four creates at once, only one takes the last place.
		w.warmUp(t, w.doc.ID, 4)
		passed := atOnce(4, func() bool {
			c := &quire.Comment{DocumentID: w.doc.ID, ParentID: root.ID, AuthorID: w.member.ID, Body: "me too"}
			err := w.s.CreateComment(ctx, sees(w.member), c, at(2))
			if err != nil && quire.ErrorCode(err) != quire.ELIMITREACHED {
				t.Errorf("create: %v", err)
			}
			return err == nil
		})
		if passed != 1 {
			t.Errorf("%d of 4 creates at once passed the last place, want 1", passed)
		}
		for _, parent := range []string{root.ID, last.ID} { // a reply to a reply is one of the root's
			err := w.s.CreateComment(ctx, seeAll, &quire.Comment{DocumentID: w.doc.ID, ParentID: parent, AuthorID: w.owner.ID, Body: "more"}, at(3))
			wantCode(t, err, quire.ELIMITREACHED)
		}
		threads, _ := w.threads(t, w.doc.ID, "all", w.owner)
		if n := len(threads[0].Replies); n != quire.MaxReplies {
			t.Errorf("%d replies, want %d", n, quire.MaxReplies)
		}
		// Another thread is not limited by the full one.
		other := w.comment(t, w.doc.ID, w.owner, "", nil, "a quiet thread", 4)
		w.comment(t, w.doc.ID, w.owner, other.ID, nil, "fine", 5)
	})

	t.Run("a document holds at most MaxThreads threads, counted in the transaction of the create", func(t *testing.T) {
		// A long text: finding an anchor in it, after the count, takes a
		// create a while, in which another one would count the same.
		w := newCommentWorld(t, open, "Alpha one."+strings.Repeat(" Filler words to read.", 20000))
		ctx := t.Context()
		// The first places are filled in one transaction where the engine's
		// tests can (ThreadFiller), the last ones before the race through
		// CreateComment, eight writers at once, as the rule counts them.
		through := quire.MaxThreads - 1
		if f, ok := w.s.(ThreadFiller); ok {
			through = 16
			if err := f.FillThreads(ctx, w.doc.ID, w.owner.ID, quire.MaxThreads-1-through, at(1)); err != nil {
				t.Fatalf("fill threads: %v", err)
			}
		}
		w.seed(t, "", through)
		// Of four anchored creates at once, only one takes the last place.
		w.warmUp(t, w.doc.ID, 4)
		var last *quire.Comment
		passed := atOnce(4, func() bool {
			c := &quire.Comment{DocumentID: w.doc.ID, AuthorID: w.member.ID, Body: "the last", Anchor: quoting("Alpha", "", "")}
			err := w.s.CreateComment(ctx, sees(w.member), c, at(2))
			if err != nil && quire.ErrorCode(err) != quire.ELIMITREACHED {
				t.Errorf("create: %v", err)
			}
			if err == nil {
				last = c
			}
			return err == nil
		})
		if passed != 1 {
			t.Fatalf("%d of 4 creates at once passed the last place, want 1", passed)
		}
		for _, a := range []*quire.Anchor{nil, quoting("Alpha", "", "")} {
			err := w.s.CreateComment(ctx, seeAll, &quire.Comment{DocumentID: w.doc.ID, AuthorID: w.owner.ID, Body: "one more", Anchor: a}, at(2))
			wantCode(t, err, quire.ELIMITREACHED)
		}
		if _, total := w.threads(t, w.doc.ID, "all", w.owner); total != quire.MaxThreads {
			t.Errorf("%d threads, want %d", total, quire.MaxThreads)
		}
		// A reply is no thread; another document is not limited by this one.
		reply := w.comment(t, w.doc.ID, w.owner, last.ID, nil, "a reply", 3)
		other := w.create(t, draft(w.owner, "Other"), baseTime)
		w.comment(t, other.ID, w.owner, "", nil, "elsewhere", 4)
		// A Deleted root holds its place; a root that goes frees it, one
		// place for one thread.
		one := func(body string) error {
			return w.s.CreateComment(ctx, seeAll, &quire.Comment{DocumentID: w.doc.ID, AuthorID: w.owner.ID, Body: body}, at(5))
		}
		if err := w.s.DeleteComment(ctx, seeAll, last.ID, at(5)); err != nil {
			t.Fatal(err)
		}
		wantCode(t, one("in the place of a Deleted root"), quire.ELIMITREACHED)
		if err := w.s.DeleteComment(ctx, seeAll, reply.ID, at(5)); err != nil { // its root goes with it
			t.Fatal(err)
		}
		if err := one("in the place of the root that went with its reply"); err != nil {
			t.Fatalf("after a thread went: %v", err)
		}
		wantCode(t, one("one more"), quire.ELIMITREACHED)
		threads, _ := w.threads(t, w.doc.ID, "all", w.owner)
		if err := w.s.DeleteComment(ctx, seeAll, threads[0].ID, at(5)); err != nil {
			t.Fatal(err)
		}
		if err := one("in the place of a root without replies"); err != nil {
			t.Fatalf("after a thread went: %v", err)
		}
		wantCode(t, one("one more"), quire.ELIMITREACHED)
		if _, total := w.threads(t, w.doc.ID, "all", w.owner); total != quire.MaxThreads {
			t.Errorf("%d threads, want %d", total, quire.MaxThreads)
		}
	})

	t.Run("reactions are idempotent, counted, marked mine, ordered as quire.Reactions, and go with their comment", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		root := w.comment(t, w.doc.ID, w.owner, "", nil, "a thread", 1)
		reply := w.comment(t, w.doc.ID, w.member, root.ID, nil, "a reply", 2)
		react := func(u *quire.User, id, emoji string, on bool) *quire.Comment {
			t.Helper()
			c, err := w.s.React(ctx, sees(u), id, u.ID, emoji, on)
			if err != nil {
				t.Fatalf("React(%s, %s, %v): %v", u.Email, emoji, on, err)
			}
			return c
		}
		react(w.owner, root.ID, "🚀", true)
		react(w.owner, root.ID, "👍", true)
		react(w.owner, root.ID, "👍", true)
		got := react(w.colleague, root.ID, "👍", true)
		want := []quire.Reaction{{Emoji: "👍", Count: 2, Mine: true}, {Emoji: "🚀", Count: 1}}
		if diff := cmp.Diff(want, got.Reactions); diff != "" {
			t.Errorf("reactions as the colleague (-want +got):\n%s", diff)
		}
		got = must(w.s.Comment(ctx, seeAll, w.loner.ID, root.ID))(t)
		want = []quire.Reaction{{Emoji: "👍", Count: 2}, {Emoji: "🚀", Count: 1}}
		if diff := cmp.Diff(want, got.Reactions); diff != "" {
			t.Errorf("reactions as the loner (-want +got):\n%s", diff)
		}
		react(w.owner, root.ID, "🚀", false)
		got = react(w.owner, root.ID, "🚀", false)
		want = []quire.Reaction{{Emoji: "👍", Count: 2, Mine: true}}
		if diff := cmp.Diff(want, got.Reactions); diff != "" {
			t.Errorf("reactions after taking one back twice (-want +got):\n%s", diff)
		}
		react(w.owner, reply.ID, "❤️", true)
		threads, _ := w.threads(t, w.doc.ID, "all", w.owner)
		if diff := cmp.Diff([]quire.Reaction{{Emoji: "❤️", Count: 1, Mine: true}}, threads[0].Replies[0].Reactions); diff != "" {
			t.Errorf("a reply's reactions in Threads (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, threads[0].Reactions); diff != "" {
			t.Errorf("the root's reactions in Threads (-want +got):\n%s", diff)
		}
		_, err := w.s.React(ctx, seeAll, root.ID, w.owner.ID, "🦄", true)
		wantFields(t, err, map[string]string{"emoji": "must be one of 👍 👎 😄 🎉 😕 ❤️ 🚀 👀"})

		// The root deleted while it has a reply keeps no reaction; its
		// reply, deleted and made again, has none either.
		if err := w.s.DeleteComment(ctx, seeAll, root.ID, at(3)); err != nil {
			t.Fatal(err)
		}
		got = must(w.s.Comment(ctx, seeAll, w.owner.ID, root.ID))(t)
		if !got.Deleted || got.Body != "" || len(got.Reactions) != 0 {
			t.Errorf("placeholder = %+v", got)
		}
		_, err = w.s.React(ctx, seeAll, root.ID, w.owner.ID, "👍", true)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a root with replies stays as a deleted placeholder until its last reply goes", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		alone := w.comment(t, w.doc.ID, w.owner, "", quoting("Alpha", "", ""), "alone", 1)
		root := w.comment(t, w.doc.ID, w.owner, "", quoting("one", "", ""), "busy", 2)
		r1 := w.comment(t, w.doc.ID, w.member, root.ID, nil, "first", 3)
		r2 := w.comment(t, w.doc.ID, w.member, root.ID, nil, "second", 4)

		if err := w.s.DeleteComment(ctx, seeAll, alone.ID, at(5)); err != nil {
			t.Fatal(err)
		}
		_, err := w.s.Comment(ctx, seeAll, w.owner.ID, alone.ID)
		wantCode(t, err, quire.ENOTFOUND)

		if err := w.s.DeleteComment(ctx, seeAll, root.ID, at(6)); err != nil {
			t.Fatal(err)
		}
		got := must(w.s.Comment(ctx, seeAll, w.owner.ID, root.ID))(t)
		if !got.Deleted || got.Body != "" || !got.UpdatedAt.Equal(at(6)) || anchorOf(*got) != "attached@6" {
			t.Errorf("placeholder = %+v", got)
		}
		wantCode(t, w.s.DeleteComment(ctx, seeAll, root.ID, at(7)), quire.ENOTFOUND)
		_, err = w.s.EditComment(ctx, seeAll, root.ID, w.owner.ID, "back", at(7))
		wantCode(t, err, quire.ENOTFOUND)
		// It is still a thread: replies join it, and it counts as open.
		r3 := w.comment(t, w.doc.ID, w.owner, r1.ID, nil, "third", 7)
		if got := must(w.s.OpenThreads(ctx, []string{w.doc.ID}))(t); got[w.doc.ID] != 1 {
			t.Errorf("open threads = %v, want the placeholder's", got)
		}
		for i, r := range []*quire.Comment{r1, r2, r3} {
			if err := w.s.DeleteComment(ctx, seeAll, r.ID, at(8+i)); err != nil {
				t.Fatal(err)
			}
			threads, total := w.threads(t, w.doc.ID, "all", w.owner)
			if i < 2 && (total != 1 || len(threads[0].Replies) != 2-i || !threads[0].Deleted) {
				t.Errorf("after %d replies deleted: total %d, threads %+v", i+1, total, threads)
			}
			if i == 2 && total != 0 {
				t.Errorf("after the last reply: total %d, threads %+v", total, threads)
			}
		}
		_, err = w.s.Comment(ctx, seeAll, w.owner.ID, root.ID)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("only its author edits a comment, which is then marked edited", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		c := w.comment(t, w.doc.ID, w.member, "", nil, "frist", 1)
		_, err := w.s.EditComment(ctx, seeAll, c.ID, w.owner.ID, "mine now", at(2))
		wantCode(t, err, quire.EFORBIDDEN)
		got, err := w.s.EditComment(ctx, sees(w.member), c.ID, w.member.ID, "first", at(3))
		if err != nil {
			t.Fatal(err)
		}
		if got.Body != "first" || !got.Edited || !got.UpdatedAt.Equal(at(3)) || !got.CreatedAt.Equal(at(1)) {
			t.Errorf("edited = %+v", got)
		}
		_, err = w.s.EditComment(ctx, seeAll, c.ID, w.member.ID, "a\x00b", at(4))
		wantFields(t, err, map[string]string{"body": "must not contain the NUL character"})
	})

	t.Run("resolve and reopen a thread; the status filter and the page count threads", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		var ids []string
		for i := range 5 {
			c := w.comment(t, w.doc.ID, w.owner, "", nil, fmt.Sprint("thread ", i), i)
			w.comment(t, w.doc.ID, w.owner, c.ID, nil, fmt.Sprint("reply ", i), 10+i)
			ids = append(ids, c.ID)
		}
		got, err := w.s.ResolveComment(ctx, seeAll, ids[1], w.colleague.ID, true, at(20))
		if err != nil {
			t.Fatal(err)
		}
		if !got.ResolvedAt.Equal(at(20)) || got.ResolvedByID != w.colleague.ID || got.ResolvedByName != w.colleague.Name {
			t.Errorf("resolved = %+v", got)
		}
		got = must(w.s.ResolveComment(ctx, seeAll, ids[1], w.owner.ID, true, at(21)))(t)
		if !got.ResolvedAt.Equal(at(20)) || got.ResolvedByID != w.colleague.ID {
			t.Errorf("resolved again = %+v, want the first resolution kept", got)
		}
		must(w.s.ResolveComment(ctx, seeAll, ids[3], w.owner.ID, true, at(22)))(t)
		threads, total := w.threads(t, w.doc.ID, "resolved", w.owner)
		if diff := cmp.Diff([]string{"thread 1", "> reply 1", "thread 3", "> reply 3"}, bodies(threads)); diff != "" || total != 2 {
			t.Errorf("resolved: total %d (-want +got):\n%s", total, diff)
		}
		page, total, err := w.s.Threads(ctx, quire.CommentFilter{Visibility: seeAll, DocumentID: w.doc.ID, Status: "open", Offset: 1, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"thread 2", "> reply 2"}, bodies(page)); diff != "" || total != 3 {
			t.Errorf("second page of one open thread: total %d (-want +got):\n%s", total, diff)
		}
		if _, total := w.threads(t, w.doc.ID, "all", w.owner); total != 5 {
			t.Errorf("all: total %d, want 5", total)
		}
		got = must(w.s.ResolveComment(ctx, seeAll, ids[1], w.owner.ID, false, at(23)))(t)
		if !got.ResolvedAt.IsZero() || got.ResolvedByID != "" || got.ResolvedByName != "" {
			t.Errorf("reopened = %+v", got)
		}
		if _, total := w.threads(t, w.doc.ID, "open", w.owner); total != 4 {
			t.Errorf("open after the reopen: total %d, want 4", total)
		}
		reply := threads[0].Replies[0]
		_, err = w.s.ResolveComment(ctx, seeAll, reply.ID, w.owner.ID, true, at(24))
		wantFields(t, err, map[string]string{"id": "is a reply: only a thread is resolved or reopened"})
		_, _, err = w.s.Threads(ctx, quire.CommentFilter{Visibility: seeAll, DocumentID: w.doc.ID, Status: "closed", Limit: 1})
		wantFields(t, err, map[string]string{"status": "must be open, resolved or all"})
	})

	t.Run("OpenThreads counts the open threads of each document, leaving out resolved and deleted ones", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		quiet := w.create(t, draft(w.owner, "Quiet"), baseTime)
		w.comment(t, w.doc.ID, w.owner, "", nil, "open", 1)
		w.comment(t, w.doc.ID, w.owner, "", quoting("Alpha", "", ""), "open anchored", 2)
		resolved := w.comment(t, w.doc.ID, w.owner, "", nil, "resolved", 3)
		must(w.s.ResolveComment(ctx, seeAll, resolved.ID, w.owner.ID, true, at(4)))(t)
		gone := w.comment(t, w.doc.ID, w.owner, "", nil, "deleted", 5)
		if err := w.s.DeleteComment(ctx, seeAll, gone.ID, at(6)); err != nil {
			t.Fatal(err)
		}
		ids := []string{quiet.ID, w.doc.ID, unknownID, "a\x00b"}
		for range 150 { // more than one batch
			ids = append(ids, quiet.ID)
		}
		ids = append(ids, w.doc.ID)
		got := must(w.s.OpenThreads(ctx, ids))(t)
		if diff := cmp.Diff(map[string]int{w.doc.ID: 2}, got); diff != "" {
			t.Errorf("OpenThreads (-want +got):\n%s", diff)
		}
		if got := must(w.s.OpenThreads(ctx, nil))(t); len(got) != 0 {
			t.Errorf("OpenThreads(nil) = %v", got)
		}
	})

	t.Run("the events of a comment's write name it, and a write that changes nothing records none", func(t *testing.T) {
		w := newCommentWorld(t, open, "Alpha one.")
		ctx := t.Context()
		ev := func(action, id string) *quire.Event {
			return quire.NewEvent(action, at(9), nil, quire.RequestInfo{}).On("comment", id, "").With("document_id", w.doc.ID)
		}
		c := &quire.Comment{DocumentID: w.doc.ID, AuthorID: w.owner.ID, Body: "hello"}
		if err := w.s.Recording(ev("comment.created", "")).CreateComment(ctx, seeAll, c, at(1)); err != nil {
			t.Fatal(err)
		}
		for _, step := range []func(s quire.Store) error{
			func(s quire.Store) error {
				_, err := s.ResolveComment(ctx, seeAll, c.ID, w.owner.ID, true, at(2))
				return err
			},
			func(s quire.Store) error {
				_, err := s.ResolveComment(ctx, seeAll, c.ID, w.owner.ID, true, at(3))
				return err
			},
			func(s quire.Store) error {
				_, err := s.EditComment(ctx, seeAll, c.ID, w.owner.ID, "hello", at(4))
				return err
			},
			func(s quire.Store) error {
				_, err := s.EditComment(ctx, seeAll, c.ID, w.outsider.ID, "hi", at(4))
				return err
			},
			func(s quire.Store) error { return s.DeleteComment(ctx, seeAll, unknownID, at(5)) },
		} {
			_ = step(w.s.Recording(ev("comment.x", c.ID)))
		}
		evs := auditEvents(t, w.s, quire.AuditFilter{})
		var got []string
		for _, e := range evs {
			got = append(got, e.Action+" "+e.Target.ID)
		}
		if diff := cmp.Diff([]string{"comment.x " + c.ID, "comment.created " + c.ID}, got); diff != "" {
			t.Errorf("events, newest first (-want +got):\n%s", diff)
		}
	})
}

// TwoDocumentsWithThreads makes, for the engines' tests of their
// migrations of comments, an editor and two documents of s, the second
// with a thread and a reply to it (comments version 2), and returns the
// editor's id and the documents' ids.
func TwoDocumentsWithThreads(t *testing.T, s quire.Store) (authorID string, docs [2]string) {
	t.Helper()
	ctx := t.Context()
	u := NewEditor(t, s, "ada@example.com")
	for i := range docs {
		d := draft(u, "Notes")
		if err := s.CreateDocument(ctx, d, baseTime); err != nil {
			t.Fatal(err)
		}
		docs[i] = d.ID
	}
	root := &quire.Comment{DocumentID: docs[1], AuthorID: u.ID, Body: "a thread"}
	if err := s.CreateComment(ctx, seeAll, root, at(0)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateComment(ctx, seeAll, &quire.Comment{DocumentID: docs[1], ParentID: root.ID, AuthorID: u.ID, Body: "a reply"}, at(0)); err != nil {
		t.Fatal(err)
	}
	return u.ID, docs
}

// WantThreadsFull checks, for the engines' tests of their migrations, that
// document docID of s has comments version seq and one place left for a
// thread: a thread by authorID takes it and the next one is LIMIT_REACHED.
func WantThreadsFull(t *testing.T, s quire.Store, authorID, docID string, seq quire.CommentsVersion) {
	t.Helper()
	ctx := t.Context()
	if v, ok := s.(commentVersions); ok {
		if got := must(v.CommentsSeq(ctx, seeAll, docID))(t); got != seq {
			t.Errorf("comments version %+v, want %+v", got, seq)
		}
	}
	create := func() error {
		return s.CreateComment(ctx, seeAll, &quire.Comment{DocumentID: docID, AuthorID: authorID, Body: "new"}, at(1))
	}
	if err := create(); err != nil {
		t.Fatalf("the last place: %v", err)
	}
	wantCode(t, create(), quire.ELIMITREACHED)
}
