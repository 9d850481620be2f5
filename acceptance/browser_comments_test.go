package acceptance

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"quire/comments"
	"quire/documents"
)

const browserCommentText = "# Incident response\n\n" +
	"The first step is to page the on-call engineer.\n\n" +
	"Then open the **incident channel** and say what you see.\n\n" +
	"- Keep the channel for facts.\n- Post the status page within *ten* minutes.\n\n" +
	"Write the postmortem; the first step is to collect the timeline."

// dragJS scrolls the element matched by selector into view and returns
// where a mouse drag selects its text from its character start to its end:
// the viewport's coordinates of the left edge of that character and of the
// right edge of its last one.
const dragJS = `(function (selector, start) {
  const el = document.querySelector(selector);
  el.scrollIntoView({block: "center"});
  const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const first = w.nextNode();
  let last = first, n;
  while ((n = w.nextNode())) { if (n.data.trim()) { last = n; } }
  const r = document.createRange();
  r.setStart(first, start);
  r.setEnd(first, start + 1);
  const a = r.getBoundingClientRect();
  r.setStart(last, last.data.trimEnd().length - 1);
  r.setEnd(last, last.data.trimEnd().length);
  const b = r.getBoundingClientRect();
  return [a.left + 1, a.top + a.height / 2, b.right - 1, b.top + b.height / 2];
})`

// drag selects text with the mouse, from (x1, y1) to (x2, y2).
func drag(p []float64) action {
	held := func(q *input.DispatchMouseEventParams) { q.Button, q.Buttons = input.MouseButtonLeft, 1 }
	return chromedp.Steps(
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, p[0], p[1]),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, p[0], p[1], held, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (p[0]+p[2])/2, (p[1]+p[3])/2, held),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, p[2], p[3], held),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, p[2], p[3], held, chromedp.ClickCount(1)),
	)
}

// TestBrowserComments: Grace selects a sentence and comments on it; Alan,
// at another computer, sees it highlighted, goes from the highlight to the
// thread and replies; Grace resolves it and it moves behind the filter.
// Then the same on a phone's 390 px screen, where the threads are below
// the text.
func TestBrowserComments(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	e.user("alan@example.com", "viewer", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Incident runbook"), Content: documents.Some(browserCommentText),
		Visibility: documents.Some("department")})
	docURL := e.server.URL + "/documents/" + doc.ID
	alan := newSession(t, ctx)
	do(t, ctx, "Grace signs in", signInByCookie(e, "grace@example.com", testPassword))
	do(t, alan, "Alan signs in", signInByCookie(e, "alan@example.com", testPassword))

	flow := func(t *testing.T, selector string, start int, quote, prefix, suffix, remark, reply string) {
		do(t, ctx, "Grace opens the document", chromedp.Navigate(docURL), waitVisible(id("doc-body")))
		at := read(t, ctx, "where the sentence is", chromedp.Evaluate[[]float64](fmt.Sprintf("%s(%q, %d)", dragJS, selector, start)))
		do(t, ctx, "select it with the mouse", drag(at))
		if selected := read(t, ctx, "selection", chromedp.Evaluate[string](`String(getSelection()).replace(/\s+/g, " ").trim()`)); selected != quote {
			t.Fatalf("selected %q, want %q", selected, quote)
		}
		do(t, ctx, "Comment on the selection",
			waitVisible(id("comment-selection")),
			chromedp.Click(id("comment-selection")),
			waitVisible(id("new-quote-box")),
		)
		fields := read(t, ctx, "the anchor's fields", chromedp.Evaluate[[]string](
			`["new-quote", "new-prefix", "new-suffix"].map(id => document.getElementById(id).value).concat([document.activeElement.id])`))
		if diff := cmp.Diff([]string{quote, prefix, suffix, "new-body"}, fields); diff != "" {
			t.Fatalf("[quote, prefix, suffix, focus] (-want +got):\n%s", diff)
		}
		do(t, ctx, "send the comment",
			chromedp.SendKeys(id("new-body"), remark),
			chromedp.Click(id("post-comment")),
			waitVisible(css(".flash")),
		)
		loc := read(t, ctx, "location", chromedp.Location())
		_, thread, _ := strings.Cut(loc, "#")
		if !strings.HasPrefix(thread, "thread-") {
			t.Fatalf("after commenting the page is at %q, want a thread", loc)
		}

		do(t, alan, "Alan sees the highlighted quote", chromedp.Navigate(docURL), waitVisible(css("#doc-body mark.comment-mark")))
		marked := read(t, alan, "marks", chromedp.Evaluate[string](
			`Array.from(document.querySelectorAll("#doc-body mark.comment-mark")).map(m => m.textContent).join("")`))
		if marked != quote {
			t.Fatalf("highlighted %q, want %q", marked, quote)
		}
		do(t, alan, "the highlight leads to the thread", chromedp.Click(css("#doc-body mark.comment-mark")))
		focused := read(t, alan, "focus", poll[string](`document.activeElement.id === "`+thread+`" && document.activeElement.id`))
		do(t, alan, "and the thread back to the text", chromedp.Click(css("#"+thread+" .show-in-text")))
		back := read(t, alan, "focus", poll[bool](`document.activeElement.matches("mark.comment-mark.active")`))
		do(t, alan, "Alan replies",
			chromedp.Click(css("#"+thread+" .reply-link")),
			waitVisible(css("#"+thread+" textarea[name=body]")),
			chromedp.SendKeys(css("#"+thread+" textarea[name=body]"), reply),
			chromedp.Click(css("#"+thread+" .reply-button")),
			waitVisible(css(".flash")),
		)
		texts := read(t, alan, "the thread", chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("#`+thread+` .comment-body")).map(b => b.textContent.trim())`))
		do(t, alan, "Alan opens the edit form of his reply in place",
			chromedp.Click(css("#"+thread+" .replies .edit-link")),
			waitVisible(css("#"+thread+" .replies textarea[name=body]")),
		)
		editing := read(t, alan, "the edit form", chromedp.Evaluate[[]string](
			`[document.querySelector("#`+thread+` .replies textarea[name=body]").value, document.activeElement.name, location.pathname]`))
		if diff := cmp.Diff([]any{thread, true, []string{remark, reply}, []string{reply, "body", "/documents/" + doc.ID}},
			[]any{focused, back, texts, editing}); diff != "" {
			t.Fatalf("[focus after a click on the highlight, focus back in the text, the thread's comments, "+
				"the edit form opened in place: text, focus, page] (-want +got):\n%s", diff)
		}

		do(t, ctx, "Grace resolves the thread",
			chromedp.Navigate(docURL),
			waitVisible(css("#"+thread+" .resolve-button")),
			chromedp.Click(css("#"+thread+" .resolve-button")),
			waitVisible(id("no-threads")),
		)
		marks := read(t, ctx, "marks", chromedp.Evaluate[int](`document.querySelectorAll("mark.comment-mark").length`))
		do(t, ctx, "and finds it under Resolved",
			chromedp.Click(id("threads-resolved")),
			waitVisible(css("#"+thread+" .resolved-note")),
		)
		note := read(t, ctx, "resolved", chromedp.Text(css("#"+thread+" .resolved-note")))
		if marks != 0 || !strings.HasPrefix(note, "Resolved by Grace") {
			t.Fatalf("after resolving: %d highlights, note %q", marks, note)
		}
	}

	t.Run("on a wide screen the threads are beside the text", func(t *testing.T) {
		flow(t, "#doc-body p:nth-of-type(2)", len("Then "), "open the incident channel and say what you see.",
			"t response The first step is to page the on-call engineer. Then ",
			" Keep the channel for facts. Post the status page within ten min",
			"Which channel is it?", "#incidents, pinned at the top.")
		beside := read(t, ctx, "layout", chromedp.Evaluate[bool](
			`document.getElementById("comments").getBoundingClientRect().left >= document.getElementById("doc-body").getBoundingClientRect().right`))
		if !beside {
			t.Error("the comments are not beside the text")
		}
	})
	t.Run("on a 390 px screen the threads are below the text", func(t *testing.T) {
		for _, c := range []context.Context{ctx, alan} {
			do(t, c, "a phone's screen", chromedp.EmulateViewport(390, 844))
		}
		flow(t, "#doc-body li:nth-of-type(2)", len("Post the "), "status page within ten minutes.",
			"nnel and say what you see. Keep the channel for facts. Post the ",
			" Write the postmortem; the first step is to collect the timeline",
			"Which status page?", "The public one.")
		below := read(t, ctx, "layout", chromedp.Evaluate[bool](
			`document.getElementById("comments").getBoundingClientRect().top >= document.getElementById("doc-body").getBoundingClientRect().bottom`))
		wide := read(t, ctx, "width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
		if !below || !wide {
			t.Errorf("on a phone: threads below the text %v, nothing wider than the screen %v", below, wide)
		}
	})
}

// TestBrowserHighlightsAgreeWithTheServer: quotes the server found in a
// document's reading text (anchor.Text) across headings, § links, a table
// of contents, table cells, a highlighted code block, a hard line break, a
// no-break space and list items are each highlighted by the page's script,
// over exactly their text: the two compute the same reading text.
func TestBrowserHighlightsAgreeWithTheServer(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	content := "# Setup\n\nInstall the tool, then *run* it.\n\n" +
		"| Name | Value |\n|---|---|\n| Alpha | Beta |\n\n" +
		"```go\nfunc main() { fmt.Println(\"hi\") }\n```\n\n" +
		"# Limits\n\nline one\\\nline two and ten&nbsp;minutes.\n\n" +
		"- first item\n- second item\n\n# Last\n\nThe end."
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Tricky"), Content: documents.Some(content)})
	quotes := []string{
		"Setup Install the tool, then run",
		"Alpha Beta",
		`fmt.Println("hi") }`,
		"line one line two",
		"ten minutes.",
		"first item second item Last The end.",
	}
	for _, q := range quotes {
		if _, err := e.comments.Create(context.Background(), e.actor(grace), doc.ID, comments.Input{Body: "About " + q,
			Anchor: &comments.AnchorInput{Quote: q}}); err != nil {
			t.Fatalf("the server refuses %q: %v", q, err)
		}
	}
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))
	do(t, ctx, "open the document", chromedp.Navigate(e.server.URL+"/documents/"+doc.ID), waitVisible(css("#doc-body mark.comment-mark")))
	got := read(t, ctx, "highlights", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("li.thread")).map(li =>
		Array.from(document.querySelectorAll("mark.comment-mark")).filter(m => m.getAttribute("data-threads").split(" ").includes(li.id))
			.map(m => m.textContent).join("").replace(/\s+/g, ""))`))
	var want []string
	for _, q := range quotes {
		want = append(want, strings.Join(strings.Fields(q), ""))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("each thread's highlighted text, without spaces (-want +got):\n%s", diff)
	}
}
