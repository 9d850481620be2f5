package acceptance

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"quire/documents"
)

// activityRows returns the actions of the Activity page's rows, in order.
func activityRows(p *page) []string {
	var out []string
	for _, n := range findAll(p.Doc, func(n *html.Node) bool { return attr(n, "class") == "event" }) {
		out = append(out, attr(n, "data-action"))
	}
	return out
}

func TestActivityPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Both users exist before either signs in: the expected rows below
	// list the two creations, then the two sign-ins.
	ed := e.user("ed@example.com", "editor", "Engineering")
	e.user("root@example.com", "admin", "")
	eb := e.signedIn("ed@example.com")
	admin := e.signedIn("root@example.com")

	// A change made through the pages: a save in the editor.
	doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("one")})
	if p := eb.post("/documents/"+doc.ID, editForm(doc, "two")); p.Status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.Status, p.text("page-error"))
	}

	t.Run("only administrators see it, and only they are offered it", func(t *testing.T) {
		if p := eb.get("/activity"); p.Status != http.StatusForbidden {
			t.Errorf("an editor opening /activity: %d", p.Status)
		}
		if eb.get("/documents").byID("activity-link") != nil {
			t.Error("an editor is offered the Activity page")
		}
		if admin.get("/documents").byID("activity-link") == nil {
			t.Error("an administrator is not offered the Activity page")
		}
	})

	t.Run("it lists the events newest first, with who, from where and which request", func(t *testing.T) {
		p := admin.get("/activity")
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		got := activityRows(p)
		// The test clock stands still: events of one time are ordered by
		// id, which grows with each event.
		want := []string{"document.updated", "document.created", "auth.login", "auth.login", "user.created", "user.created", "department.created"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("rows %v, want %v", got, want)
		}
		row := find(p.Doc, func(n *html.Node) bool { return attr(n, "data-action") == "document.updated" })
		text := textOf(row)
		for _, want := range []string{"Ed", "document: Runbook", "127.0.0.1", "fields: [\"content\"]"} {
			if !strings.Contains(text, want) {
				t.Errorf("the save's row %q lacks %q", text, want)
			}
		}
		if strings.Contains(p.Body, testPassword) || strings.Contains(p.Body, "two") && strings.Contains(text, "two") {
			t.Error("the page shows a secret or the document's text")
		}
	})

	t.Run("filters narrow it and a bad one is said", func(t *testing.T) {
		if got := activityRows(admin.get("/activity?action=document.")); strings.Join(got, " ") != "document.updated document.created" {
			t.Errorf("action=document.: %v", got)
		}
		if got := activityRows(admin.get("/activity?actorId=" + ed.ID)); strings.Join(got, " ") != "document.updated document.created auth.login" {
			t.Errorf("actorId: %v", got)
		}
		if got := activityRows(admin.get("/activity?targetId=" + doc.ID)); strings.Join(got, " ") != "document.updated document.created" {
			t.Errorf("targetId: %v", got)
		}
		if got := activityRows(admin.get("/activity?until=2000-01-01")); len(got) != 0 {
			t.Errorf("until 2000: %v", got)
		}
		p := admin.get("/activity?since=yesterday&limit=999")
		if p.Status != http.StatusBadRequest || p.text("err-since") == "" || p.text("err-limit") == "" {
			t.Errorf("bad filters: %d, since %q, limit %q", p.Status, p.text("err-since"), p.text("err-limit"))
		}
	})

	t.Run("its pages follow the cursor", func(t *testing.T) {
		var got []string
		path := "/activity?limit=3"
		for range 10 {
			p := admin.get(path)
			got = append(got, activityRows(p)...)
			next := p.byID("next-page")
			if next == nil {
				break
			}
			path = attr(next, "href")
			if u, err := url.Parse(path); err != nil || u.Query().Get("limit") != "3" {
				t.Fatalf("next page %q keeps no filter", path)
			}
		}
		all := activityRows(admin.get("/activity"))
		if strings.Join(got, " ") != strings.Join(all, " ") {
			t.Errorf("paged %v, want %v", got, all)
		}
	})

	t.Run("the document page says who changed it last", func(t *testing.T) {
		p := eb.get("/documents/" + doc.ID)
		if got := p.text("last-change"); !strings.Contains(got, "Last changed by Ed") {
			t.Errorf("last change %q", got)
		}
	})
}
