package acceptance

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/comments"
	"quire/documents"
)

// TestBrowserMentionNotifies: Ada mentions Bob in a comment, choosing him
// in the mention picker with the keyboard; Bob's bell, on a page he has
// open, shows 1 without a reload; the mail reaches the SMTP server, and its
// one-click unsubscribe switches his mail off; he opens the notification
// from the bell and lands on the thread, which marks it read.
func TestBrowserMentionNotifies(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t) // the bell's stream with its defaults: a poll every 2 s
	ada := e.user("ada@example.com", "editor", "Engineering")
	bob := e.user("bob@example.com", "editor", "Engineering")
	e.user("bonnie@example.com", "editor", "Engineering")
	doc := e.document(ada, documents.DocumentInput{Title: documents.Some("Incident runbook"),
		Content: documents.Some("# Incident runbook\n\nPage the on-call engineer first."), Visibility: documents.Some("department")})
	smtp := e.mailOut(t)
	// The notifications worker as quire serve runs it: a fan-out every
	// second, and the mails that are due.
	workerCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.notify.Run(workerCtx, time.Second, slog.New(slog.NewTextHandler(e.logs, nil)))
	}()
	t.Cleanup(func() { stop(); <-done })

	bobTab := newSession(t, ctx)
	do(t, bobTab, "Bob signs in", signInByCookie(e, "bob@example.com", testPassword))
	do(t, bobTab, "Bob's page is open, no count on the bell", waitVisible(id("bell")))
	if hidden := read(t, bobTab, "bell count hidden", chromedp.Evaluate[bool](`document.getElementById("bell-count").hidden`)); !hidden {
		t.Fatal("the bell shows a count before anything happened")
	}
	// The page marks the bell live once the stream's first count arrived.
	do(t, bobTab, "the stream is open", waitReady(css("#bell[data-live]")))

	do(t, ctx, "Ada signs in and opens the document", signInByCookie(e, "ada@example.com", testPassword),
		chromedp.Navigate(e.server.URL+"/documents/"+doc.ID), waitVisible(id("new-body")))
	do(t, ctx, "Ada types @Bo in the comment form",
		chromedp.Click(id("new-body")), chromedp.SendKeys(id("new-body"), "Can you check this, @Bo"),
		waitVisible(css(`#mention-picker li[role="option"]`)))
	options := read(t, ctx, "the picker's people", poll[[]string](
		`(() => { const o = [...document.querySelectorAll('#mention-picker li[role="option"]')]; return o.length === 2 && o.map(li => li.textContent + (li.getAttribute("aria-selected") === "true" ? " (selected)" : "")); })()`))
	if diff := cmp.Diff([]string{"Bob (selected)", "Bonnie"}, options); diff != "" {
		t.Errorf("the picker (-want +got):\n%s", diff)
	}
	aria := read(t, ctx, "the textarea's state", chromedp.Evaluate[[]string](
		`(() => { const t = document.getElementById("new-body"); return [t.getAttribute("aria-expanded"), t.getAttribute("aria-controls"), t.getAttribute("aria-activedescendant"), document.getElementById("mention-picker").getAttribute("role")]; })()`))
	if diff := cmp.Diff([]string{"true", "mention-picker", "mention-option-0", "listbox"}, aria); diff != "" {
		t.Errorf("aria (-want +got):\n%s", diff)
	}
	do(t, ctx, "down to Bonnie, up to Bob, Enter",
		chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowUp), pressEnter())
	body := read(t, ctx, "the comment", poll[string](`document.getElementById("mention-picker").hidden && document.getElementById("new-body").value`))
	if want := "Can you check this, [@Bob](mention:" + bob.ID + ") "; body != want {
		t.Fatalf("the comment is %q, want %q", body, want)
	}
	sent := time.Now()
	do(t, ctx, "Ada posts it", chromedp.Click(id("post-comment")), waitVisible(css(".flash")))
	mention := read(t, ctx, "the mention in the thread", chromedp.Text(css("#threads .mention")))
	if mention != "@Bob" {
		t.Errorf("the thread shows %q for the mention", mention)
	}

	count := read(t, bobTab, "Bob's bell, without a reload", poll[string](
		`(() => { const c = document.getElementById("bell-count"); return !c.hidden && c.textContent; })()`))
	t.Logf("the bell showed the mention %v after the comment was posted", time.Since(sent).Round(10*time.Millisecond))
	label := read(t, bobTab, "the bell's label", chromedp.Evaluate[string](`document.getElementById("bell").getAttribute("aria-label")`))
	if diff := cmp.Diff([]string{"1", "Notifications, 1 unread"}, []string{count, label}); diff != "" {
		t.Errorf("Bob's bell (-want +got):\n%s", diff)
	}
	if nav := read(t, bobTab, "navigations", chromedp.Evaluate[int](`performance.getEntriesByType("navigation").length`)); nav != 1 {
		t.Errorf("%d navigations: the page was reloaded", nav)
	}

	threads, err := e.comments.List(context.Background(), e.actor(ada), doc.ID, comments.ListParams{})
	if err != nil || len(threads.Threads) != 1 {
		t.Fatalf("threads: %v", err)
	}
	thread := threads.Threads[0].ID

	// The instant mail waits for more of a burst (and is not sent once
	// Bob has read it): let the time pass.
	e.clock.Advance(2 * time.Minute)
	msgs := smtp.Wait(t, 1, 60*time.Second)
	if diff := cmp.Diff([]string{bob.Email}, msgs[0].To); diff != "" {
		t.Fatalf("the mail's recipients (-want +got):\n%s", diff)
	}
	parsed := msgs[0].MustParse(t)
	if !strings.Contains(parsed.Text, e.server.URL+"/documents/"+doc.ID+"#comment-"+thread) {
		t.Errorf("the mail does not link to the thread:\n%s", parsed.Text)
	}
	unsub := regexp.MustCompile(`^<(.+)>$`).FindStringSubmatch(parsed.Header.Get("List-Unsubscribe"))
	if unsub == nil || parsed.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Fatalf("List-Unsubscribe %q, List-Unsubscribe-Post %q", parsed.Header.Get("List-Unsubscribe"), parsed.Header.Get("List-Unsubscribe-Post"))
	}
	// What a mail client does on "Unsubscribe" (RFC 8058): a POST of
	// List-Unsubscribe=One-Click, without cookies.
	resp, err := http.Post(unsub[1], "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	setting, err := e.notify.Email(context.Background(), e.actor(bob))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{http.StatusOK, quire.NotifyEmailOff}, []any{resp.StatusCode, setting}); diff != "" {
		t.Errorf("one-click unsubscribe: status and Bob's mail setting (-want +got):\n%s", diff)
	}
	do(t, bobTab, "Bob opens the notification from the bell",
		chromedp.Click(id("bell")), waitVisible(css("#notifications a.notification-link")),
		screenshot("notifications.png"),
		chromedp.Click(css("#notifications a.notification-link")), waitVisible(id("comment-"+thread)))
	at := read(t, bobTab, "where Bob is", chromedp.Location())
	if want := e.server.URL + "/documents/" + doc.ID + "#comment-" + thread; at != want {
		t.Errorf("Bob is at %s, want %s", at, want)
	}
	// Following it marked it read: the bell goes back to no count.
	read(t, bobTab, "the bell, read", poll[bool](`document.getElementById("bell-count").hidden`))
}

// pressEnter presses Enter as a keyboard does: one key down that carries
// its text, which the page may cancel (chromedp.KeyEvent sends the text in
// an event of its own, which a page cannot cancel).
func pressEnter() action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		down := input.DispatchKeyEventParams{Type: kb.KeyDown, Key: "Enter", Code: "Enter",
			WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Text: "\r", UnmodifiedText: "\r"}
		up := down
		up.Type, up.Text, up.UnmodifiedText = kb.KeyUp, "", ""
		for _, p := range []input.DispatchKeyEventParams{down, up} {
			if _, err := cdp.Call(ctx, tgt, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	})
}
