package acceptance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"quire"
	"quire/auth"
	"quire/comments"
	"quire/documents"
)

// threadSeen is a thread as the document page shows it.
type threadSeen struct {
	ID      string
	Quote   string // "" for a comment on the whole page
	Author  string
	Body    string
	Replies []string // "author: body"
}

// threadsOf returns the threads of the list with that id (threads or
// outdated-threads) on p.
func threadsOf(p *page, listID string) []threadSeen {
	list := p.byID(listID)
	if list == nil {
		return nil
	}
	var out []threadSeen
	for _, li := range findAll(list, func(n *html.Node) bool { return n.Data == "li" && strings.Contains(attr(n, "class"), "thread") }) {
		t := threadSeen{ID: strings.TrimPrefix(attr(li, "id"), "thread-")}
		if q := find(li, func(n *html.Node) bool { return n.Data == "blockquote" }); q != nil {
			t.Quote = textOf(q)
		}
		cs := findAll(li, func(n *html.Node) bool { return n.Data == "article" })
		for i, c := range cs {
			author := textOf(find(c, func(n *html.Node) bool { return attr(n, "class") == "author" }))
			body := ""
			if b := find(c, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "comment-body") }); b != nil {
				body = textOf(b)
			} else {
				body = "(deleted)"
			}
			if i == 0 {
				t.Author, t.Body = author, body
			} else {
				t.Replies = append(t.Replies, author+": "+body)
			}
		}
		out = append(out, t)
	}
	return out
}

// reactionsOf returns the reaction buttons of comment id on p, as
// "emoji count pressed".
func reactionsOf(p *page, id string) []string {
	c := p.byID("comment-" + id)
	if c == nil {
		return nil
	}
	var out []string
	for _, b := range findAll(c, func(n *html.Node) bool { return n.Data == "button" && hasAttr(n, "aria-pressed") }) {
		out = append(out, textOf(b)+" "+attr(b, "aria-pressed"))
	}
	return out
}

// formsOf returns the actions of the forms in the element with that id.
func formsOf(p *page, id string) []string {
	var out []string
	for _, f := range findAll(p.byID(id), func(n *html.Node) bool { return n.Data == "form" }) {
		out = append(out, attr(f, "action"))
	}
	return out
}

// commentLocation checks that p is a 303 back to document docID and
// returns the id of the thread it points at.
func commentLocation(t *testing.T, p *page, docID string) string {
	t.Helper()
	if p.Status != http.StatusSeeOther {
		t.Fatalf("status %d, want 303; error %q %q", p.Status, p.text("page-error"), p.text("comment-error"))
	}
	loc := p.Header.Get("Location")
	path, frag, _ := strings.Cut(loc, "#")
	if !strings.HasPrefix(path, "/documents/"+docID) {
		t.Fatalf("Location %q, want the document page", loc)
	}
	return strings.TrimPrefix(frag, "thread-")
}

const commentedText = "The first step is to page the on-call engineer.\n\n" +
	"Then open the incident channel and say what you see.\n\n" +
	"## Afterwards\n\nWrite the postmortem; the first step is to collect the timeline."

// TestCommentsOnTheDocumentPage follows a thread through the plain forms
// of the document page: a comment on a quote, a reply, reactions, an edit,
// refusals shown with the typed text kept, resolve and the filter, a
// quote the text loses, and deletes.
func TestCommentsOnTheDocumentPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	grace, gb := e.signedInUser("grace@example.com", "editor", "Engineering") // owner, writer
	_, ab := e.signedInUser("alan@example.com", "viewer", "Engineering")      // may comment
	_, lb := e.signedInUser("linus@example.com", "editor", "Research")        // cannot see it
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Incident runbook"), Content: documents.Some(commentedText),
		Visibility: documents.Some("department")})
	other := e.document(grace, documents.DocumentInput{Title: documents.Some("Other"), Content: documents.Some("Other text"),
		Visibility: documents.Some("department")})
	docPath := "/documents/" + doc.ID

	var root, reply string
	t.Run("a viewer comments on a quote and lands on the thread", func(t *testing.T) {
		p := ab.post(docPath+"/comments", url.Values{"body": {"Which **channel**?"}, "quote": {"open the incident channel"},
			"prefix": {"Then "}, "suffix": {" and say"}, "idempotency_key": {"k-new-1"}})
		root = commentLocation(t, p, doc.ID)
		page := gb.get(docPath)
		want := []threadSeen{{ID: root, Quote: "open the incident channel", Author: "Alan", Body: "Which channel?"}}
		if diff := cmp.Diff(want, threadsOf(page, "threads")); diff != "" {
			t.Errorf("threads (-want +got):\n%s", diff)
		}
		li := page.byID("thread-" + root)
		got := []string{attr(li, "data-quote"), attr(li, "data-prefix"), attr(li, "data-suffix"), attr(li, "data-state"), page.text("thread-count")}
		if diff := cmp.Diff([]string{"open the incident channel", "Then ", " and say", "attached", "1 open thread"}, got); diff != "" {
			t.Errorf("thread's anchor and count (-want +got):\n%s", diff)
		}
		body := find(li, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "comment-body") })
		if b := find(body, func(n *html.Node) bool { return n.Data == "strong" }); b == nil || textOf(b) != "channel" {
			t.Errorf("the body is not rendered as Markdown: %q", innerHTML(li))
		}
	})
	t.Run("the same form sent twice adds one comment", func(t *testing.T) {
		p := ab.post(docPath+"/comments", url.Values{"body": {"Which **channel**?"}, "quote": {"open the incident channel"},
			"prefix": {"Then "}, "suffix": {" and say"}, "idempotency_key": {"k-new-1"}})
		if again := commentLocation(t, p, doc.ID); again != root {
			t.Errorf("the repeat points at %q, want the first comment %q", again, root)
		}
		if n := len(threadsOf(gb.get(docPath), "threads")); n != 1 {
			t.Errorf("%d threads after a repeated form, want 1", n)
		}
	})
	t.Run("the owner replies and reacts", func(t *testing.T) {
		p := gb.post(docPath+"/comments", url.Values{"body": {"#incidents"}, "parent_id": {root}})
		if got := commentLocation(t, p, doc.ID); got != root {
			t.Fatalf("a reply goes back to thread %q, want %q", got, root)
		}
		if p := gb.post(docPath+"/comments/"+root+"/reactions", url.Values{"react": {"on:👍"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("react: status %d", p.Status)
		}
		if p := ab.post(docPath+"/comments/"+root+"/reactions", url.Values{"react": {"on:🎉"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("react: status %d", p.Status)
		}
		page := ab.get(docPath)
		threads := threadsOf(page, "threads")
		if len(threads) != 1 || len(threads[0].Replies) != 1 || threads[0].Replies[0] != "Grace: #incidents" {
			t.Fatalf("threads %+v", threads)
		}
		reply = strings.TrimPrefix(attr(find(page.byID("thread-"+root), func(n *html.Node) bool {
			return n.Data == "article" && attr(n, "id") != "comment-"+root
		}), "id"), "comment-")
		if diff := cmp.Diff([]string{"👍 1 false", "🎉 1 true"}, reactionsOf(page, root)); diff != "" {
			t.Errorf("reactions as Alan sees them (-want +got):\n%s", diff)
		}
		if p := ab.post(docPath+"/comments/"+root+"/reactions", url.Values{"react": {"off:🎉"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("take back: status %d", p.Status)
		}
		if diff := cmp.Diff([]string{"👍 1 false"}, reactionsOf(ab.get(docPath), root)); diff != "" {
			t.Errorf("reactions after Alan took his back (-want +got):\n%s", diff)
		}
	})
	t.Run("each one is offered what they may do", func(t *testing.T) {
		base := docPath + "/comments/"
		cases := []struct {
			who  string
			b    *browser
			want []string
		}{
			// Alan wrote the root: edit, delete, resolve; on Grace's reply
			// only reactions.
			{"alan", ab, []string{base + root + "/reactions", base + root + "/edit", base + root + "/delete",
				base + reply + "/reactions", "/documents/" + doc.ID + "/comments", base + root + "/resolve"}},
			// Grace owns the document and may write: delete and resolve
			// Alan's root, edit her reply.
			{"grace", gb, []string{base + root + "/reactions", base + root + "/delete",
				base + reply + "/reactions", base + reply + "/edit", base + reply + "/delete", "/documents/" + doc.ID + "/comments", base + root + "/resolve"}},
		}
		for _, c := range cases {
			if diff := cmp.Diff(c.want, formsOf(c.b.get(docPath+"/comments/"+root), "thread-"+root)); diff != "" {
				t.Errorf("%s's forms on the thread's page (-want +got):\n%s", c.who, diff)
			}
		}
		// The column keeps Resolve and links to the thread's page for
		// the rest; comments.js offers what data-can lists.
		column := []struct {
			who  string
			b    *browser
			want []string
		}{
			{"alan", ab, []string{"react edit delete", "react", docPath + "/comments/" + root + "#reply-form-" + root,
				docPath + "/comments/" + root, base + root + "/resolve"}},
			{"grace", gb, []string{"react delete", "react edit delete", docPath + "/comments/" + root + "#reply-form-" + root,
				docPath + "/comments/" + root, base + root + "/resolve"}},
		}
		for _, c := range column {
			p := c.b.get(docPath)
			li := p.byID("thread-" + root)
			replyLink := find(li, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "reply-link") })
			more := find(li, func(n *html.Node) bool { return attr(n, "class") == "thread-link" })
			got := []string{attr(p.byID("comment-"+root), "data-can"), attr(p.byID("comment-"+reply), "data-can"),
				attr(replyLink, "href"), attr(more, "href")}
			got = append(got, formsOf(p, "thread-"+root)[1:]...) // after the root's reactions
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s's column: [root's data-can, reply's data-can, Reply, More, forms] (-want +got):\n%s", c.who, diff)
			}
		}
	})
	t.Run("the author edits; someone else's edit is refused", func(t *testing.T) {
		if p := ab.post(docPath+"/comments/"+root+"/edit", url.Values{"body": {"Which channel, #incidents?"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("edit: status %d", p.Status)
		}
		if p := gb.post(docPath+"/comments/"+root+"/edit", url.Values{"body": {"Defaced"}}); p.Status != http.StatusForbidden {
			t.Errorf("Grace edits Alan's comment: status %d, want 403", p.Status)
		}
		page := gb.get(docPath)
		if got := threadsOf(page, "threads")[0].Body; got != "Which channel, #incidents?" {
			t.Errorf("body %q", got)
		}
		if !strings.Contains(textOf(page.byID("comment-"+root)), "(edited)") {
			t.Errorf("the edited comment does not say so")
		}
	})
	t.Run("a refused comment shows the page again with the text kept", func(t *testing.T) {
		long := strings.Repeat("x", quire.MaxCommentBody+1)
		p := ab.post(docPath+"/comments", url.Values{"body": {long}, "quote": {"page the on-call engineer"}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", p.Status)
		}
		body, _ := p.value("body")
		quote, _ := p.value("quote")
		got := []any{p.byID("comment-error") != nil, body == long, quote, p.text("err-body") != "", p.byID("doc-body") != nil}
		if diff := cmp.Diff([]any{true, true, "page the on-call engineer", true, true}, got); diff != "" {
			t.Errorf("[error shown, body kept, quote kept, field error, document shown] (-want +got):\n%s", diff)
		}
		p = ab.post(docPath+"/comments", url.Values{"body": {"Where is this?"}, "quote": {"not in the text"}})
		if p.Status != http.StatusBadRequest || p.text("err-anchor") == "" {
			t.Errorf("a quote not in the text: status %d, anchor error %q", p.Status, p.text("err-anchor"))
		}
		p = gb.post(docPath+"/comments/"+reply+"/edit", url.Values{"body": {"  "}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("empty edit: status %d, want 400", p.Status)
		}
		if ed := find(p.byID("comment-"+reply), func(n *html.Node) bool { return n.Data == "details" && attr(n, "class") == "edit-comment" }); ed == nil || !hasAttr(ed, "open") {
			t.Errorf("the refused edit's form is not open")
		}
		if n := len(threadsOf(gb.get(docPath), "threads")); n != 1 {
			t.Errorf("%d threads after refusals, want 1", n)
		}
	})
	t.Run("a comment is reached only through its own document", func(t *testing.T) {
		for _, path := range []string{"/documents/" + other.ID + "/comments/" + root + "/resolve", docPath + "/comments/01890000-0000-7000-8000-000000000000/delete"} {
			if p := gb.post(path, url.Values{}); p.Status != http.StatusNotFound {
				t.Errorf("POST %s: status %d, want 404", path, p.Status)
			}
		}
		for _, path := range []string{docPath + "/comments", docPath + "/comments/" + root + "/reactions", docPath + "/comments/" + root + "/resolve"} {
			if p := lb.post(path, url.Values{"body": {"hello"}, "react": {"on:👍"}}); p.Status != http.StatusNotFound {
				t.Errorf("someone who cannot see the document: POST %s: status %d, want 404", path, p.Status)
			}
		}
	})
	t.Run("a page comment, then resolve moves a thread behind the filter", func(t *testing.T) {
		pageComment := commentLocation(t, gb.post(docPath+"/comments", url.Values{"body": {"Looks good overall."}}), doc.ID)
		p := ab.post(docPath+"/comments/"+root+"/resolve", url.Values{"comments": {"open"}})
		if got := commentLocation(t, p, doc.ID); got != root {
			t.Errorf("resolve goes back to %q", got)
		}
		open := gb.get(docPath)
		if diff := cmp.Diff([]string{pageComment}, ids(threadsOf(open, "threads"))); diff != "" {
			t.Errorf("open threads (-want +got):\n%s", diff)
		}
		resolved := gb.get(docPath + "?comments=resolved")
		if diff := cmp.Diff([]string{root}, ids(threadsOf(resolved, "threads"))); diff != "" {
			t.Errorf("resolved threads (-want +got):\n%s", diff)
		}
		if note := resolved.text("resolved-" + root); !strings.HasPrefix(note, "Resolved by Alan") {
			t.Errorf("resolved note %q", note)
		}
		if got := attr(resolved.byID("threads-resolved"), "aria-current"); got != "page" {
			t.Errorf("the Resolved filter is not marked current")
		}
		all := gb.get(docPath + "?comments=all")
		if diff := cmp.Diff([]string{root, pageComment}, ids(threadsOf(all, "threads"))); diff != "" {
			t.Errorf("all threads (-want +got):\n%s", diff)
		}
		if got := commentLocation(t, gb.post(docPath+"/comments/"+root+"/reopen", url.Values{"comments": {"resolved"}}), doc.ID); got != root {
			t.Errorf("reopen goes back to %q", got)
		}
		if diff := cmp.Diff([]string{root, pageComment}, ids(threadsOf(gb.get(docPath), "threads"))); diff != "" {
			t.Errorf("open threads after reopen (-want +got):\n%s", diff)
		}
	})
	t.Run("a thread whose quote the text lost is shown apart", func(t *testing.T) {
		cur := e.get(grace, doc.ID)
		if _, err := e.docs.Update(context.Background(), e.actor(grace), doc.ID, documents.DocumentInput{
			Content: documents.Some(strings.Replace(commentedText, "open the incident channel", "open a bridge", 1))}, cur.UpdatedAt); err != nil {
			t.Fatal(err)
		}
		p := gb.get(docPath)
		if diff := cmp.Diff([]string{root}, ids(threadsOf(p, "outdated-threads"))); diff != "" {
			t.Errorf("outdated threads (-want +got):\n%s", diff)
		}
		if got := attr(p.byID("thread-"+root), "data-state"); got != "outdated" {
			t.Errorf("data-state %q", got)
		}
	})
	t.Run("deletes: the root stays as a placeholder while it has a reply", func(t *testing.T) {
		if p := ab.post(docPath+"/comments/"+reply+"/delete", url.Values{}); p.Status != http.StatusForbidden {
			t.Errorf("Alan deletes Grace's reply: status %d, want 403", p.Status)
		}
		if p := gb.post(docPath+"/comments/"+root+"/delete", url.Values{"idempotency_key": {"k-del-1"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("the owner deletes the root: status %d", p.Status)
		}
		if p := gb.post(docPath+"/comments/"+root+"/delete", url.Values{"idempotency_key": {"k-del-1"}}); p.Status != http.StatusSeeOther {
			t.Errorf("the same delete sent again: status %d, want the first answer", p.Status)
		}
		got := threadsOf(gb.get(docPath), "outdated-threads")
		want := []threadSeen{{ID: root, Quote: "open the incident channel", Author: "Alan", Body: "(deleted)", Replies: []string{"Grace: #incidents"}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after deleting the root (-want +got):\n%s", diff)
		}
	})
}

func ids(threads []threadSeen) []string {
	var out []string
	for _, t := range threads {
		out = append(out, t.ID)
	}
	return out
}

// TestDocumentListShowsOpenThreads: each listed document says how many
// open threads it has; resolved ones do not count.
func TestDocumentListShowsOpenThreads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	grace, gb := e.signedInUser("grace@example.com", "editor", "Engineering")
	a := e.actor(grace)
	busy := e.document(grace, documents.DocumentInput{Title: documents.Some("Busy"), Content: documents.Some("Some text")})
	quiet := e.document(grace, documents.DocumentInput{Title: documents.Some("Quiet"), Content: documents.Some("Other text")})
	var last *quire.Comment
	for i := range 3 {
		c, err := e.comments.Create(context.Background(), a, busy.ID, comments.Input{Body: fmt.Sprintf("Remark %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		last = c
	}
	if _, err := e.comments.Resolve(context.Background(), a, last.ID, true); err != nil {
		t.Fatal(err)
	}
	p := gb.get("/documents")
	counts := map[string]string{}
	for _, n := range findAll(p.byID("documents"), func(n *html.Node) bool { return attr(n, "class") == "open-threads" }) {
		counts[attr(n, "href")] = attr(n, "aria-label")
	}
	want := map[string]string{"/documents/" + busy.ID + "#comments": "2 open comment threads"}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("open thread counts (-want +got):\n%s", diff)
	}
	_ = quiet
}

// threadedDoc is a document with n threads of a reply each, half of them
// on quotes of its text, and a browser of its owner.
func threadedDoc(t testing.TB, e *env, n int) (*quire.Document, quire.User, *browser) {
	t.Helper()
	owner, b := e.signedInUser(fmt.Sprintf("owner%d@example.com", n), "editor", "Engineering")
	a := e.actor(owner)
	var text strings.Builder
	for i := range n {
		fmt.Fprintf(&text, "Paragraph %d says something worth a remark, sentence number %d.\n\n", i, i)
	}
	doc := e.document(owner, documents.DocumentInput{Title: documents.Some("Threaded"), Content: documents.Some(text.String()),
		Visibility: documents.Some("department")})
	ctx := context.Background()
	for i := range n {
		in := comments.Input{Body: fmt.Sprintf("A remark about *paragraph* %d, with a [link](/documents/%s).", i, doc.ID)}
		if i%2 == 0 {
			in.Anchor = &comments.AnchorInput{Quote: fmt.Sprintf("sentence number %d.", i)}
		}
		c, err := e.comments.Create(ctx, a, doc.ID, in)
		if err != nil {
			t.Fatalf("thread %d: %v", i, err)
		}
		if _, err := e.comments.Create(ctx, a, doc.ID, comments.Input{ParentID: c.ID, Body: "Agreed."}); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if _, err := e.comments.React(ctx, a, c.ID, "👍", true); err != nil {
			t.Fatal(err)
		}
	}
	return doc, owner, b
}

// TestDocumentPageWithThreadsIsLinear compares what the document page
// costs per thread with 25 threads and with 100: its size and the bytes the
// server allocated to make it, each view right after a change of the
// comments, so that the server does not show what it kept: after an edit
// it reads and writes the threads anew, after a reaction it reads their
// reactions anew. Sizes and allocations, not times. Not parallel: it
// measures the allocations of the whole process.
func TestDocumentPageWithThreadsIsLinear(t *testing.T) {
	const small, large = 25, 100
	var size, alloc, allocReacted [2]float64
	for i, n := range []int{small, large} {
		e := newEnv(t)
		doc, owner, b := threadedDoc(t, e, n)
		c := &folderChain{e: e, b: b}
		first, err := e.comments.List(context.Background(), e.actor(owner), doc.ID, comments.ListParams{Limit: 1})
		if err != nil || len(first.Threads) == 0 {
			t.Fatalf("no thread: %v", err)
		}
		var allocs, reacted []uint64
		for j := range 6 {
			var err error
			if j%2 == 0 {
				_, err = e.comments.Edit(context.Background(), e.actor(owner), first.Threads[0].ID, fmt.Sprintf("Edited, %d times.", j))
			} else {
				_, err = e.comments.React(context.Background(), e.actor(owner), first.Threads[0].ID, "🎉", j%4 == 1)
			}
			if err != nil {
				t.Fatal(err)
			}
			status, got, a := c.request(t, "GET", "/documents/"+doc.ID, nil, 64<<20)
			if status != http.StatusOK {
				t.Fatalf("%d threads: status %d", n, status)
			}
			size[i] = float64(got) / float64(n)
			if j%2 == 0 {
				allocs = append(allocs, a)
			} else {
				reacted = append(reacted, a)
			}
		}
		if got := len(threadsOf(b.get("/documents/"+doc.ID), "threads")); got != n {
			t.Fatalf("the page shows %d threads, want %d", got, n)
		}
		alloc[i] = float64(slices.Min(allocs)) / float64(n)
		allocReacted[i] = float64(slices.Min(reacted)) / float64(n)
	}
	t.Logf("bytes sent per thread: %.0f at %d, %.0f at %d; bytes allocated per thread after an edit: %.0f, %.0f; after a reaction: %.0f, %.0f",
		size[0], small, size[1], large, alloc[0], alloc[1], allocReacted[0], allocReacted[1])
	if allocReacted[1] > 1.5*allocReacted[0] {
		t.Errorf("the work after a reaction grows faster than the threads: %.0f bytes allocated per thread at %d, %.0f at %d",
			allocReacted[0], small, allocReacted[1], large)
	}
	if size[1] > 1.5*size[0] {
		t.Errorf("the page grows faster than its threads: %.0f bytes per thread at %d, %.0f at %d", size[0], small, size[1], large)
	}
	if alloc[1] > 1.5*alloc[0] {
		t.Errorf("the work grows faster than the threads: %.0f bytes allocated per thread at %d, %.0f at %d", alloc[0], small, alloc[1], large)
	}
}

// BenchmarkDocumentPageWithThreads measures the document page with 200
// threads (a reply and a reaction each, half on quotes) against the same
// page without comments, in the same run, and reports the ratios: of a
// view right after a reaction was added or taken back (the reactions of
// the threads are read anew, "after-reaction"), of the view after it,
// whose threads and column the server kept ("ratio"), of a view right
// after a comment was edited (the threads are read and written anew,
// "after-edit"), and of a view by another reader after that ("other").
//
//	go test ./acceptance -run '^$' -bench DocumentPageWithThreads -benchtime 100x -count 3
func BenchmarkDocumentPageWithThreads(b *testing.B) {
	e := newEnv(b)
	doc, owner, br := threadedDoc(b, e, 200)
	bare := e.document(owner, documents.DocumentInput{Title: documents.Some("Bare"), Content: documents.Some(doc.Content)})
	_, other := e.signedInUser("other@example.com", "editor", "Engineering")
	c, o := &folderChain{e: e, b: br}, &folderChain{e: e, b: other}
	get := func(c *folderChain, path string) time.Duration {
		start := time.Now()
		if status, _, _ := c.request(b, "GET", path, nil, 64<<20); status != http.StatusOK {
			b.Fatalf("GET %s: status %d", path, status)
		}
		return time.Since(start)
	}
	get(c, "/documents/"+doc.ID) // the render cache warm for both
	get(c, "/documents/"+bare.ID)
	ctx := context.Background()
	page, err := e.comments.List(ctx, e.actor(owner), doc.ID, comments.ListParams{Limit: 1})
	if err != nil || len(page.Threads) == 0 {
		b.Fatalf("no thread to react to: %v", err)
	}
	first := page.Threads[0].ID
	// The service's part: the two pages of 100 threads the page reads.
	list := func() time.Duration {
		start := time.Now()
		for page := 1; page <= 2; page++ {
			if _, err := e.comments.List(ctx, e.actor(owner), doc.ID, comments.ListParams{Page: page, Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var reacted, with, edited, others, without, threads time.Duration
	on := false
	for i := 0; b.Loop(); i++ {
		on = !on
		if _, err := e.comments.React(ctx, e.actor(owner), first, "🎉", on); err != nil {
			b.Fatal(err)
		}
		reacted += get(c, "/documents/"+doc.ID)
		with += get(c, "/documents/"+doc.ID)
		if _, err := e.comments.Edit(ctx, e.actor(owner), first, fmt.Sprintf("Edited, %d times.", i)); err != nil {
			b.Fatal(err)
		}
		edited += get(c, "/documents/"+doc.ID)
		others += get(o, "/documents/"+doc.ID)
		without += get(c, "/documents/"+bare.ID)
		threads += list()
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(reacted), "ms/page-after-reaction")
	b.ReportMetric(ms(with), "ms/page-with-200-threads")
	b.ReportMetric(ms(edited), "ms/page-after-edit")
	b.ReportMetric(ms(without), "ms/page-without")
	b.ReportMetric(ms(threads), "ms/reading-200-threads")
	b.ReportMetric(float64(reacted)/float64(without), "ratio-after-reaction")
	b.ReportMetric(float64(with)/float64(without), "ratio")
	b.ReportMetric(float64(edited)/float64(without), "ratio-after-edit")
	b.ReportMetric(float64(others)/float64(without), "ratio-other")
}

// TestCommentsEscape: what people write (a name, a quote, a body) reaches
// the comments column as text, never as markup, in text and in attributes
// alike (comments_html.go writes the threads by hand).
func TestCommentsEscape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, b := e.signedInUser("grace@example.com", "editor", "Engineering")
	const name = `<img src=x onerror="window.__pwned=1"> Eve "&' `
	eve, _, err := e.auth.CreateUser(context.Background(), auth.NewUser{Email: "eve@example.com", Name: name, Role: "viewer",
		Department: "Engineering", Password: testPassword})
	if err != nil {
		t.Fatal(err)
	}
	doc := e.document(owner, documents.DocumentInput{Title: documents.Some("Escapes"), Visibility: documents.Some("department"),
		Content: documents.Some("Write `<script>alert(\"1\")</script>` & \"quotes\" here.")})
	quote := `<script>alert("1")</script> & "quotes"`
	c, err := e.comments.Create(context.Background(), e.actor(*eve), doc.ID, comments.Input{
		Body:   `<script>window.__pwned=2</script> **bold** <img src=x onerror="window.__pwned=3"> "&'`,
		Anchor: &comments.AnchorInput{Quote: quote, Suffix: " here."},
	})
	if err != nil {
		t.Fatal(err)
	}
	const replyBody = "</textarea><script>window.__pwned=4</script>"
	reply, err := e.comments.Create(context.Background(), e.actor(owner), doc.ID, comments.Input{ParentID: c.ID, Body: replyBody})
	if err != nil {
		t.Fatal(err)
	}
	p := b.get("/documents/" + doc.ID)
	col := p.byID("comments")
	thread := b.get("/documents/" + doc.ID + "/comments/" + c.ID)
	isDangerous := func(n *html.Node) bool {
		if n.Data == "script" || n.Data == "img" {
			return true
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				return true
			}
		}
		return false
	}
	dangerous := findAll(col, isDangerous)
	li := p.byID("thread-" + c.ID)
	dangerous = append(dangerous, findAll(thread.byID("comments"), isDangerous)...)
	edit := find(thread.byID("comments"), func(n *html.Node) bool { return n.Data == "textarea" && attr(n, "id") == "edit-"+reply.ID })
	editText := ""
	if edit != nil && edit.FirstChild != nil {
		editText = edit.FirstChild.Data
	}
	shown := strings.TrimSpace(name)
	got := []any{len(dangerous), attr(li, "data-quote"), attr(li, "data-suffix"), attr(li, "aria-label"), threadsOf(p, "threads")[0].Quote,
		threadsOf(p, "threads")[0].Author, editText}
	want := []any{0, quote, " here.", "Thread by " + shown, quote, shown, replyBody}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("[dangerous elements, data-quote, data-suffix, label, quote, author, the edit form's text] (-want +got):\n%s", diff)
	}
}

// TestCommentThreadPage: the page of one thread, which the column links
// to, holds every form its reader may use; a reply refused there is shown
// there again; it is NOT_FOUND, as the document, for whoever cannot see
// the document, and for a comment of another document.
func TestCommentThreadPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	grace, gb := e.signedInUser("grace@example.com", "editor", "Engineering")
	_, lb := e.signedInUser("linus@example.com", "editor", "Research") // cannot see it
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Incident runbook"), Content: documents.Some(commentedText),
		Visibility: documents.Some("department")})
	other := e.document(grace, documents.DocumentInput{Title: documents.Some("Other"), Content: documents.Some("Other text"),
		Visibility: documents.Some("department")})
	ctx := context.Background()
	root, err := e.comments.Create(ctx, e.actor(grace), doc.ID, comments.Input{Body: "Which **channel**?",
		Anchor: &comments.AnchorInput{Quote: "open the incident channel"}})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := e.comments.Create(ctx, e.actor(grace), doc.ID, comments.Input{ParentID: root.ID, Body: "#incidents"})
	if err != nil {
		t.Fatal(err)
	}
	threadPath := "/documents/" + doc.ID + "/comments/" + root.ID
	base := "/documents/" + doc.ID + "/comments/"

	t.Run("it shows the thread with its forms, from the root or a reply", func(t *testing.T) {
		for _, path := range []string{threadPath, base + reply.ID} {
			p := gb.get(path + "?comments=all")
			if p.Status != http.StatusOK {
				t.Fatalf("GET %s: status %d", path, p.Status)
			}
			want := []threadSeen{{ID: root.ID, Quote: "open the incident channel", Author: "Grace", Body: "Which channel?", Replies: []string{"Grace: #incidents"}}}
			if diff := cmp.Diff(want, threadsOf(p, "threads")); diff != "" {
				t.Errorf("GET %s: thread (-want +got):\n%s", path, diff)
			}
			forms := formsOf(p, "thread-"+root.ID)
			wantForms := []string{base + root.ID + "/reactions", base + root.ID + "/edit", base + root.ID + "/delete",
				base + reply.ID + "/reactions", base + reply.ID + "/edit", base + reply.ID + "/delete",
				"/documents/" + doc.ID + "/comments", base + root.ID + "/resolve"}
			if diff := cmp.Diff(wantForms, forms); diff != "" {
				t.Errorf("GET %s: forms (-want +got):\n%s", path, diff)
			}
			for _, id := range []string{"reply-form-" + root.ID, "react-" + reply.ID, "edit-form-" + reply.ID, "delete-" + reply.ID} {
				if p.byID(id) == nil {
					t.Errorf("GET %s: no element %s for the column's links", path, id)
				}
			}
			if st, _ := p.value("comments"); st != "all" {
				t.Errorf("GET %s: the forms send the filter %q back, want all", path, st)
			}
			if got := attr(p.byID("back-to-document"), "href"); got != "/documents/"+doc.ID+"?comments=all#thread-"+root.ID {
				t.Errorf("GET %s: back link %q", path, got)
			}
		}
	})
	t.Run("a reply refused there is shown there again with its text", func(t *testing.T) {
		long := strings.Repeat("y", quire.MaxCommentBody+1)
		p := gb.post("/documents/"+doc.ID+"/comments", url.Values{"body": {long}, "parent_id": {root.ID}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", p.Status)
		}
		text := ""
		if ta := p.byID("reply-" + root.ID); ta != nil && ta.FirstChild != nil {
			text = ta.FirstChild.Data
		}
		got := []any{p.byID("comment-error") != nil, p.text("err-body") != "", text == long, p.byID("doc-body") == nil}
		if diff := cmp.Diff([]any{true, true, true, true}, got); diff != "" {
			t.Errorf("[error shown, field error, text kept, on the thread's page] (-want +got):\n%s", diff)
		}
	})
	t.Run("it is not found for whoever cannot see it", func(t *testing.T) {
		cases := []struct {
			who  string
			b    *browser
			path string
		}{
			{"someone who cannot see the document", lb, threadPath},
			{"the thread under another document", gb, "/documents/" + other.ID + "/comments/" + root.ID},
			{"an unknown comment", gb, base + "01890000-0000-7000-8000-000000000000"},
			{"an id of the wrong form", gb, base + "nope"},
		}
		for _, c := range cases {
			if p := c.b.get(c.path); p.Status != http.StatusNotFound {
				t.Errorf("%s: GET %s: status %d, want 404", c.who, c.path, p.Status)
			}
		}
	})
}

// TestCommentsColumnFollowsItsReaderAndItsChanges: the column of threads
// a server keeps as written (comments.go, columns) is each reader's own and
// shows at once what changed: another reader's view, a new reaction, a
// renamed author, a role that no longer lets its reader resolve.
func TestCommentsColumnFollowsItsReaderAndItsChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root, rb := e.signedInUser("root@example.com", "admin", "Engineering")
	grace, gb := e.signedInUser("grace@example.com", "editor", "Engineering") // owner, writer
	alan, ab := e.signedInUser("alan@example.com", "viewer", "Engineering")   // the author
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some(commentedText),
		Visibility: documents.Some("department")})
	c, err := e.comments.Create(context.Background(), e.actor(alan), doc.ID, comments.Input{Body: "Which channel?"})
	if err != nil {
		t.Fatal(err)
	}
	docPath := "/documents/" + doc.ID
	column := func(b *browser) (author, can string, reactions []string, resolve bool) {
		t.Helper()
		p := b.get(docPath)
		art := p.byID("comment-" + c.ID)
		if art == nil {
			t.Fatalf("no comment %s on the page", c.ID)
		}
		author = textOf(find(art, func(n *html.Node) bool { return attr(n, "class") == "author" }))
		resolve = slices.Contains(formsOf(p, "thread-"+c.ID), docPath+"/comments/"+c.ID+"/resolve")
		return author, attr(art, "data-can"), reactionsOf(p, c.ID), resolve
	}
	check := func(who string, b *browser, wantAuthor, wantCan string, wantReactions []string, wantResolve bool) {
		t.Helper()
		for range 2 { // the second view is the one a server kept
			author, can, reactions, resolve := column(b)
			if author != wantAuthor || can != wantCan || resolve != wantResolve || !slices.Equal(reactions, wantReactions) {
				t.Errorf("%s sees author %q, data-can %q, reactions %q, resolve %v; want %q, %q, %q, %v",
					who, author, can, reactions, resolve, wantAuthor, wantCan, wantReactions, wantResolve)
			}
		}
	}
	check("alan", ab, "Alan", "react edit delete", nil, true)
	check("grace", gb, "Alan", "react delete", nil, true)

	if _, err := e.comments.React(context.Background(), e.actor(alan), c.ID, "👍", true); err != nil {
		t.Fatal(err)
	}
	check("alan after his reaction", ab, "Alan", "react edit delete", []string{"👍 1 true"}, true)
	check("grace after alan's reaction", gb, "Alan", "react delete", []string{"👍 1 false"}, true)
	check("root, an administrator", rb, "Alan", "react delete", []string{"👍 1 false"}, true)

	name := "Alan Turing"
	if _, err := e.auth.UpdateUser(context.Background(), e.actor(root), alan.ID, auth.UserChange{Name: &name}); err != nil {
		t.Fatal(err)
	}
	check("grace after alan's new name", gb, "Alan Turing", "react delete", []string{"👍 1 false"}, true)

	role := "viewer"
	if _, err := e.auth.UpdateUser(context.Background(), e.actor(root), grace.ID, auth.UserChange{Role: &role}); err != nil {
		t.Fatal(err)
	}
	// Grace still owns the document (delete), but may no longer write it
	// (resolve someone else's thread).
	check("grace as a viewer", gb, "Alan Turing", "react delete", []string{"👍 1 false"}, false)
}

// TestLastChangeIsTheDocumentsNotItsComments: the document page's "Last
// changed by" names the latest change of the document of each kind
// (created, saved, restored from the trash, a version restored), whatever
// its comments' events came after it (they name the document as their
// target too, and audit.Service.LastChange reads one step of an index per
// kind rather than walk them).
func TestLastChangeIsTheDocumentsNotItsComments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	grace, gb := e.signedInUser("grace@example.com", "editor", "Engineering")
	ed := e.user("ed@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("One."),
		Visibility: documents.Some("department")})
	discuss := func() {
		t.Helper()
		for i := range 3 {
			if _, err := e.comments.Create(ctx, e.actor(ed), doc.ID, comments.Input{Body: fmt.Sprint("Remark ", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	says := func(when, want string) {
		t.Helper()
		if got := gb.get("/documents/" + doc.ID).text("last-change"); !strings.Contains(got, want) {
			t.Errorf("%s: the page says %q, want %q", when, got, want)
		}
	}
	discuss()
	says("created, then discussed", "Last changed by Grace")
	says("created, then discussed", "(created)")
	if _, err := e.docs.Update(ctx, e.actor(ed), doc.ID, documents.DocumentInput{Content: documents.Some("Two.")}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	discuss()
	says("saved by Ed, then discussed", "Last changed by Ed")
	if err := e.docs.Delete(ctx, e.actor(grace), doc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.docs.RestoreFromTrash(ctx, e.actor(grace), doc.ID); err != nil {
		t.Fatal(err)
	}
	discuss()
	says("restored from the trash, then discussed", "(restored from the trash)")
	if _, err := e.docs.Restore(ctx, e.actor(ed), doc.ID, 1, time.Time{}); err != nil {
		t.Fatal(err)
	}
	discuss()
	says("a version restored, then discussed", "(a version restored)")
}

// TestCommentsWindowFollowsReactions: a window of threads a node keeps
// follows the reactions made since it read them, whichever way it reads
// them again: one reaction to one of its comments (that comment's alone),
// one to a comment outside it (nothing), several (all of its comments').
// Each time it shows what the store has, for a reader who made some.
func TestCommentsWindowFollowsReactions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	grace := e.user("grace@example.com", "editor", "Engineering")
	ed := e.user("ed@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("One."),
		Visibility: documents.Some("department")})
	var ids []string
	for i := range 3 {
		c, err := e.comments.Create(ctx, e.actor(grace), doc.ID, comments.Input{Body: fmt.Sprint("Thread ", i)})
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.comments.Create(ctx, e.actor(ed), doc.ID, comments.Input{ParentID: c.ID, Body: "A reply"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID, r.ID)
	}
	// The window of the first two threads, and what the store says of
	// each comment (Thread reads the store).
	check := func(when string) {
		t.Helper()
		w, err := e.comments.Window(ctx, e.actor(ed), doc.ID, "open", 0, 2, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range w.Threads {
			stored, err := e.comments.Thread(ctx, e.actor(ed), th.ID)
			if err != nil {
				t.Fatal(err)
			}
			for j, c := range append([]quire.Comment{th}, th.Replies...) {
				want := append([]quire.Comment{*stored}, stored.Replies...)[j]
				if diff := cmp.Diff(want.Reactions, c.Reactions); diff != "" {
					t.Errorf("%s: comment %q's reactions in the window (-store +window):\n%s", when, c.Body, diff)
				}
				var counts []quire.Reaction
				for _, r := range want.Reactions {
					counts = append(counts, quire.Reaction{Emoji: r.Emoji, Count: r.Count})
				}
				if diff := cmp.Diff(counts, w.Reactions[c.ID]); diff != "" {
					t.Errorf("%s: comment %q's counts (-store +window):\n%s", when, c.Body, diff)
				}
			}
		}
	}
	react := func(who quire.User, id, emoji string, on bool) {
		t.Helper()
		if _, err := e.comments.React(ctx, e.actor(who), id, emoji, on); err != nil {
			t.Fatal(err)
		}
	}
	check("at first")
	react(ed, ids[1], "👍", true)
	check("after one reaction to a reply in the window")
	react(grace, ids[0], "🎉", true)
	check("after one reaction to a thread in the window")
	react(grace, ids[4], "👍", true)
	check("after one reaction to a thread outside the window")
	react(grace, ids[1], "👍", true)
	react(ed, ids[2], "🚀", true)
	react(ed, ids[0], "🎉", true)
	check("after three reactions")
	react(ed, ids[0], "🎉", false)
	check("after a reaction taken back")
	react(ed, ids[2], "🚀", false)
	check("after the last reaction of a comment taken back")
}
