package acceptance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/documents"
)

// A writer shares a page with an image; a second browser, with no account
// and no session, opens the link and sees the page and its image; once
// the link is revoked it is a 404.
func TestBrowserShareLink(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Release dashboard"), Visibility: documents.Some("department"),
		Content: documents.Some("# Release dashboard\n")})
	b := e.signedIn("grace@example.com")
	if status, _, fileURL := b.upload(doc.ID, "build-times.png", diagramPNG(), true); status != 201 {
		t.Fatalf("upload: %d", status)
	} else if _, err := e.docs.Update(context.Background(), e.actor(grace), doc.ID, documents.DocumentInput{
		Content: documents.Some("# Release dashboard\n\nThe build times:\n\n![build times](" + fileURL + ")\n")}, time.Time{}); err != nil {
		t.Fatal(err)
	}

	do(t, ctx, "sign in, open the page and create a share link",
		signInByCookie(e, "grace@example.com", testPassword),
		chromedp.Navigate(e.server.URL+"/documents/"+doc.ID),
		chromedp.Click(id("share-document")),
		waitVisible(id("create-share")),
		chromedp.Click(id("create-share")),
		waitVisible(css("#share-list .share-url")),
	)
	link := read(t, ctx, "the link", chromedp.Value(css("#share-list .share-url")))
	if !strings.HasPrefix(link, e.server.URL+"/s/") {
		t.Fatalf("link %q", link)
	}

	anon := newSession(t, ctx)
	do(t, anon, "open the link in a browser without an account",
		chromedp.Navigate(link),
		waitVisible(id("doc-title")),
	)
	title := read(t, anon, "the title", chromedp.Text(id("doc-title")))
	loaded := read(t, anon, "the image", poll[int](
		`(() => { const i = document.querySelector("#doc-body img"); return i && i.complete && i.naturalWidth === 240 ? 1 : 0; })()`))
	cookies := read(t, anon, "cookies", chromedp.Evaluate[string](`document.cookie`))
	if title != "Release dashboard" || loaded != 1 || cookies != "" {
		t.Fatalf("title %q, image loaded %d, cookies %q", title, loaded, cookies)
	}
	do(t, anon, "screenshot", screenshot("share-link.png"))

	do(t, ctx, "revoke the link",
		chromedp.Navigate(e.server.URL+"/documents/"+doc.ID),
		chromedp.Click(id("share-document")),
		chromedp.Click(css("#share-list button.danger")),
		waitVisible(id("no-shares")),
	)
	do(t, anon, "open the link again", chromedp.Navigate(link), waitVisible(css("h1")))
	if h := read(t, anon, "the heading", chromedp.Text(css("h1"))); h != "Page not found" {
		t.Fatalf("after revoke the link shows %q", h)
	}
}
