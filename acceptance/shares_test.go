package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"quire/documents"
)

// shareURLs are the values of the share links' fields of a page.
func shareURLs(p *page) []string {
	var out []string
	for _, n := range findAll(p.Doc, func(n *html.Node) bool {
		return n.Type == html.ElementNode && n.Data == "input" && strings.Contains(attr(n, "class"), "share-url")
	}) {
		out = append(out, attr(n, "value"))
	}
	return out
}

// The Share dialog works with plain forms: create (with an expiry), copy
// from the field, revoke; the Administration area lists every share and
// holds the switch.
func TestShareDialogAndAdministration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	grace, b := e.signedInUser("grace@example.com", "editor", "Engineering")
	_, viewer := e.signedInUser("vic@example.com", "viewer", "Engineering")
	_, admin := e.signedInUser("root@example.com", "admin", "")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Visibility: documents.Some("department"),
		Content: documents.Some("Restart it.")})

	p := b.get("/documents/" + doc.ID)
	if p.byID("share-document") == nil || p.byID("create-share") == nil || p.byID("no-shares") == nil {
		t.Fatal("the document page has no Share dialog")
	}
	if v := viewer.get("/documents/" + doc.ID); v.byID("share-document") != nil {
		t.Error("a reader who may not share sees the Share dialog")
	}
	tomorrow := e.clock.Now().AddDate(0, 0, 1).Format("2006-01-02")
	p = b.post("/documents/"+doc.ID+"/shares", url.Values{"expires": {tomorrow}})
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/documents/"+doc.ID+"?m=share-created#shares" {
		t.Fatalf("create: %d %s", p.Status, p.Header.Get("Location"))
	}
	p = b.get("/documents/" + doc.ID + "?m=share-created")
	urls := shareURLs(p)
	if len(urls) != 1 || !strings.HasPrefix(urls[0], e.server.URL+"/s/") || !strings.Contains(p.Body, "<details class=\"share-dialog\" id=\"shares\" open>") {
		t.Fatalf("the dialog lists %v", urls)
	}
	path := strings.TrimPrefix(urls[0], e.server.URL)
	anon := e.browser()
	if s := anon.get(path); s.Status != http.StatusOK || s.text("doc-title") != "Runbook" {
		t.Fatalf("the link: %d", s.Status)
	}
	if p := b.post("/documents/"+doc.ID+"/shares", url.Values{"expires": {"2020-01-01"}}); p.Status != http.StatusBadRequest {
		t.Errorf("an expiry in the past: %d", p.Status)
	}

	a := admin.get("/admin/shares")
	if a.Status != http.StatusOK || !strings.Contains(a.Body, "Runbook") || a.text("sharing-state") != "on" {
		t.Fatalf("the administrators' list: %d %q", a.Status, a.text("sharing-state"))
	}
	if p := b.get("/admin/shares"); p.Status != http.StatusForbidden {
		t.Errorf("an editor opens the administrators' list: %d", p.Status)
	}
	if p := admin.post("/admin/shares/settings", url.Values{"sharing": {"off"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("switch off: %d", p.Status)
	}
	if s := anon.get(path); s.Status != http.StatusNotFound {
		t.Errorf("with sharing off the link answers %d", s.Status)
	}
	admin.post("/admin/shares/settings", url.Values{"sharing": {"on"}})
	if s := anon.get(path); s.Status != http.StatusOK {
		t.Errorf("with sharing on again the link answers %d", s.Status)
	}

	shares, err := e.shares.List(context.Background(), e.actor(grace), doc.ID)
	if err != nil || len(shares) != 1 {
		t.Fatalf("shares %v, %v", shares, err)
	}
	if !shares[0].ExpiresAt.Equal(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("expires %v: want the end of the day chosen", shares[0].ExpiresAt)
	}
	p = b.post("/documents/"+doc.ID+"/shares/"+shares[0].ID+"/revoke", nil)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.Status)
	}
	if s := anon.get(path); s.Status != http.StatusNotFound {
		t.Errorf("a revoked link answers %d", s.Status)
	}
	if anon.cookie() != "" {
		t.Error("the share pages set a cookie")
	}
}
