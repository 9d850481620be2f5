package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"quire"
	"quire/documents"
)

// bulkForm reads the list page's bulk form: its hidden fields, and the ids
// of the checkboxes that belong to it.
func bulkForm(t *testing.T, p *page) (hidden url.Values, ids []string) {
	t.Helper()
	f := p.byID("bulk")
	if f == nil {
		t.Fatalf("no bulk form on the list (status %d)", p.Status)
	}
	if attr(f, "method") != "post" || attr(f, "action") != "/documents/bulk" {
		t.Fatalf("bulk form posts %s to %s", attr(f, "method"), attr(f, "action"))
	}
	hidden = url.Values{}
	for _, in := range findAll(f, func(n *html.Node) bool { return n.Data == "input" && attr(n, "type") == "hidden" }) {
		hidden.Set(attr(in, "name"), attr(in, "value"))
	}
	for _, box := range findAll(p.Doc, func(n *html.Node) bool {
		return n.Data == "input" && attr(n, "type") == "checkbox" && attr(n, "name") == "ids"
	}) {
		if attr(box, "form") != "bulk" {
			t.Errorf("checkbox %s does not belong to the bulk form", attr(box, "value"))
		}
		// Each checkbox is labelled, for a screen reader.
		id := attr(box, "id")
		if id == "" || find(p.Doc, func(n *html.Node) bool { return n.Data == "label" && attr(n, "for") == id }) == nil {
			t.Errorf("checkbox %s has no label", attr(box, "value"))
		}
		ids = append(ids, attr(box, "value"))
	}
	for _, name := range []string{"status", "visibility", "folder_id"} {
		sel := find(f, func(n *html.Node) bool { return n.Data == "select" && attr(n, "name") == name })
		if sel == nil {
			t.Fatalf("no %s choice in the bulk form", name)
		}
		if find(p.Doc, func(n *html.Node) bool { return n.Data == "label" && attr(n, "for") == attr(sel, "id") }) == nil {
			t.Errorf("the %s choice has no label", name)
		}
	}
	return hidden, ids
}

func TestBulkChangeFromTheList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	sal := e.user("sal@example.com", "editor", "Sales")
	e.user("vi@example.com", "viewer", "Engineering")
	ctx := context.Background()
	folder, err := e.docs.CreateFolder(ctx, e.actor(ed), documents.FolderInput{Name: documents.Some("Runbooks")})
	if err != nil {
		t.Fatal(err)
	}
	a := e.document(ed, documents.DocumentInput{Title: documents.Some("Alpha")})
	b := e.document(ed, documents.DocumentInput{Title: documents.Some("Beta")})
	hidden := e.document(sal, documents.DocumentInput{Title: documents.Some("Sal's own")})

	br := e.signedIn("ed@example.com")

	t.Run("the list has a checkbox per row and a form that applies to the selection", func(t *testing.T) {
		p := br.get("/documents?status=draft")
		form, ids := bulkForm(t, p)
		slices.Sort(ids)
		want := []string{a.ID, b.ID}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("checkboxes %v, want %v", ids, want)
		}
		if form.Get("idempotency_key") == "" || form.Get("back") != "status=draft" {
			t.Fatalf("hidden fields %v", form)
		}

		// The form as a browser without JavaScript sends it, with an id
		// ed cannot see added by hand.
		form.Set("status", "published")
		form.Set("visibility", "public")
		form.Set("folder_id", folder.ID)
		form["ids"] = []string{a.ID, b.ID, hidden.ID}
		res := br.post("/documents/bulk", form)
		if res.Status != http.StatusSeeOther {
			t.Fatalf("post: %d %s", res.Status, res.Body)
		}
		loc, err := url.Parse(res.Header.Get("Location"))
		if err != nil || loc.Path != "/documents" {
			t.Fatalf("redirect to %q", res.Header.Get("Location"))
		}
		q := loc.Query()
		if q.Get("status") != "draft" || q.Get("m") != "bulk" || q.Get("updated") != "2" || q.Get("failed") != "1" {
			t.Fatalf("redirect query %v", q)
		}
		for _, doc := range []*quire.Document{a, b} {
			got := e.get(ed, doc.ID)
			if got.Status != "published" || got.Visibility != "public" || got.FolderID != folder.ID || got.Version != 2 {
				t.Errorf("%s: %s/%s folder %q version %d", got.Title, got.Status, got.Visibility, got.FolderID, got.Version)
			}
		}
		if got := e.get(sal, hidden.ID); got.Version != 1 || got.Status != "draft" {
			t.Errorf("sal's document was changed: %s version %d", got.Status, got.Version)
		}

		back := br.get(res.Header.Get("Location"))
		if back.Status != http.StatusOK {
			t.Fatalf("back: %d", back.Status)
		}
		outcome := back.text("bulk-outcome")
		if !strings.Contains(outcome, "Changed 2 documents.") || !strings.Contains(outcome, "1 could not be changed.") {
			t.Errorf("outcome %q", outcome)
		}
		if strings.Contains(back.Body, "Sal") {
			t.Error("the outcome names a document ed cannot see")
		}

		t.Run("each document changed is audited as an update", func(t *testing.T) {
			evs, err := e.store.AuditEvents(ctx, quire.AuditFilter{Action: quire.ActionDocumentUpdated, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			var targets []string
			for _, ev := range evs {
				if ev.Target == nil {
					continue
				}
				targets = append(targets, ev.Target.ID)
				if ev.Actor == nil || ev.Actor.ID != ed.ID {
					t.Errorf("event on %s by %v", ev.Target.ID, ev.Actor)
				}
			}
			slices.Sort(targets)
			if !slices.Equal(targets, want) {
				t.Errorf("document.updated events on %v, want %v", targets, want)
			}
		})

		t.Run("the same form sent again is answered as the first and changes nothing", func(t *testing.T) {
			if _, err := e.docs.Update(ctx, e.actor(ed), a.ID, documents.DocumentInput{Status: documents.Some("review")}, time.Time{}); err != nil {
				t.Fatal(err)
			}
			again := br.post("/documents/bulk", form)
			if again.Status != http.StatusSeeOther || again.Header.Get("Location") != res.Header.Get("Location") {
				t.Fatalf("resend: %d to %q, want %q", again.Status, again.Header.Get("Location"), res.Header.Get("Location"))
			}
			if got := e.get(ed, a.ID); got.Status != "review" || got.Version != 3 {
				t.Fatalf("the resend ran again: %s version %d", got.Status, got.Version)
			}
		})
	})

	t.Run("a change that does not fit a document names it", func(t *testing.T) {
		c := e.document(ed, documents.DocumentInput{Title: documents.Some("Gamma")})
		form, _ := bulkForm(t, br.get("/documents"))
		form.Set("visibility", "project")
		form["ids"] = []string{c.ID}
		res := br.post("/documents/bulk", form)
		if res.Status != http.StatusSeeOther {
			t.Fatalf("post: %d", res.Status)
		}
		back := br.get(res.Header.Get("Location"))
		if got := back.links("bulk-invalid"); !slices.Equal(got, []string{"/documents/" + c.ID + "/edit"}) {
			t.Fatalf("invalid list links %v; outcome %q", got, back.text("bulk-outcome"))
		}
		if !strings.Contains(back.text("bulk-outcome"), "No document was changed.") {
			t.Errorf("outcome %q", back.text("bulk-outcome"))
		}
	})

	t.Run("nothing selected, or nothing to change, is said and changes nothing", func(t *testing.T) {
		form, _ := bulkForm(t, br.get("/documents"))
		form.Set("status", "archived")
		res := br.post("/documents/bulk", form)
		if res.Status != http.StatusSeeOther {
			t.Fatalf("post: %d", res.Status)
		}
		back := br.get(res.Header.Get("Location"))
		if !strings.Contains(back.text("bulk-refused"), "select at least one document") {
			t.Fatalf("refusal %q", back.text("bulk-refused"))
		}
		form.Del("status")
		form["ids"] = []string{b.ID}
		back = br.get(br.post("/documents/bulk", form).Header.Get("Location"))
		if back.text("bulk-refused") == "" {
			t.Fatal("no refusal without a change")
		}
		if got := e.get(ed, b.ID); got.Status != "published" {
			t.Fatalf("b changed: %s", got.Status)
		}
	})

	t.Run("a viewer has no form, and its post is refused", func(t *testing.T) {
		vb := e.signedIn("vi@example.com")
		p := vb.get("/documents")
		if p.byID("bulk") != nil || strings.Contains(p.Body, `name="ids"`) {
			t.Fatal("a viewer is offered the bulk form")
		}
		res := vb.post("/documents/bulk", url.Values{"ids": {b.ID}, "status": {"archived"}})
		if res.Status != http.StatusForbidden {
			t.Fatalf("viewer post: %d", res.Status)
		}
	})

	t.Run("a post from another site is refused", func(t *testing.T) {
		res := br.do("POST", "/documents/bulk", url.Values{"ids": {b.ID}, "status": {"archived"}},
			http.Header{"Sec-Fetch-Site": {"cross-site"}})
		if res.Status != http.StatusForbidden {
			t.Fatalf("cross-site post: %d", res.Status)
		}
		if got := e.get(ed, b.ID); got.Status != "published" {
			t.Fatalf("b changed: %s", got.Status)
		}
	})
}
