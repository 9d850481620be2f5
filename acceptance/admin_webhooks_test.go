package acceptance

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"quire/documents"
)

func TestAdminWebhookPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root, admin := e.signedInUser("root@example.com", "admin", "")
	ed := e.user("ed@example.com", "editor", "")

	editor := e.signedIn(ed.Email)
	for _, path := range []string{"/admin/webhooks", "/admin/webhooks/x"} {
		if p := editor.get(path); p.Status != http.StatusForbidden {
			t.Errorf("GET %s as an editor: %d", path, p.Status)
		}
	}
	if p := editor.post("/admin/webhooks", url.Values{"url": {"https://8.8.8.8/"}, "events": {"*"}}); p.Status != http.StatusForbidden {
		t.Errorf("POST /admin/webhooks as an editor: %d", p.Status)
	}

	p := admin.get("/admin/webhooks")
	if p.Status != http.StatusOK || p.byID("webhooks") != nil || !strings.Contains(p.Body, "No webhooks yet") {
		t.Fatalf("empty list: %d", p.Status)
	}
	// A private address is refused, and the form keeps what was typed.
	p = admin.post("/admin/webhooks", url.Values{"url": {"http://127.0.0.1:8080/hook"}, "events": {"document.*"}})
	if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "URL") {
		t.Fatalf("private URL: %d", p.Status)
	}
	if v, _ := p.value("url"); v != "http://127.0.0.1:8080/hook" {
		t.Errorf("the refused form shows url %q", v)
	}
	p = admin.post("/admin/webhooks", url.Values{"url": {"https://8.8.8.8/hook"}, "events": {"document.*, folder.created"}})
	if p.Status != http.StatusCreated {
		t.Fatalf("create: %d", p.Status)
	}
	if n := p.byID("webhook-secret-value"); n == nil || !strings.HasPrefix(attr(n, "value"), "whsec_") {
		t.Fatal("the secret is not shown once")
	}
	list := admin.get("/admin/webhooks")
	links := list.links("webhooks")
	if len(links) != 1 || !strings.Contains(list.text("webhooks"), "document.*, folder.created") {
		t.Fatalf("list: %v %q", links, list.text("webhooks"))
	}
	if strings.Contains(list.Body, "whsec_") {
		t.Error("the list shows the secret")
	}
	hookPage := links[0]

	// A document change is queued for it and shows in the log.
	e.document(root, documents.DocumentInput{Title: documents.Some("Queued")})
	p = admin.get(hookPage)
	if !strings.Contains(p.text("deliveries"), "document.created") || !strings.Contains(p.text("deliveries"), "Pending") {
		t.Fatalf("deliveries: %q", p.text("deliveries"))
	}
	if strings.Contains(p.Body, "whsec_") {
		t.Error("the webhook page shows the secret")
	}

	// Paused, then deleted.
	p = admin.post(hookPage, url.Values{"url": {"https://8.8.8.8/hook"}, "events": {"*"}})
	if p.Status != http.StatusSeeOther || !strings.HasSuffix(p.Header.Get("Location"), "?m=webhook-saved") {
		t.Fatalf("save: %d %s", p.Status, p.Header.Get("Location"))
	}
	if p := admin.get(hookPage); strings.Contains(p.Body, `id="webhook-active" name="active" type="checkbox" checked`) {
		t.Error("the webhook is still active after saving without the box")
	}
	p = admin.post(hookPage+"/delete", url.Values{})
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/admin/webhooks?m=webhook-deleted" {
		t.Fatalf("delete: %d %s", p.Status, p.Header.Get("Location"))
	}
	if p := admin.get(hookPage); p.Status != http.StatusNotFound {
		t.Errorf("deleted webhook page: %d", p.Status)
	}
}
