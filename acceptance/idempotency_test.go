package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"quire"
	"quire/documents"
)

// TestFormsSaveOnce: the create and edit forms carry a key per view, so a
// double submit or a resent form saves once and both answers lead to the
// same place.
func TestFormsSaveOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed, b := e.signedInUser("ed@example.com", "editor", "Engineering")
	fields := func(p *page, names ...string) url.Values {
		v := url.Values{}
		for _, name := range append(names, "idempotency_key", "baseUpdatedAt", "baseVersion") {
			if val, ok := p.value(name); ok {
				v.Set(name, val)
			}
		}
		return v
	}
	count := func() int {
		_, n, err := e.store.ListDocuments(context.Background(), quire.DocumentFilter{Visibility: quire.Visibility{All: true}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("each view of a form has its own key", func(t *testing.T) {
		k1, _ := b.get("/documents/new").value("idempotency_key")
		k2, _ := b.get("/documents/new").value("idempotency_key")
		if k1 == "" || k1 == k2 {
			t.Fatalf("keys %q and %q", k1, k2)
		}
	})

	t.Run("the same create form submitted twice makes one document", func(t *testing.T) {
		form := fields(b.get("/documents/new"), "content_type", "status", "visibility")
		form.Set("title", "Twice")
		before := count()
		first := b.post("/documents", form)
		again := b.post("/documents", form)
		if first.Status != http.StatusSeeOther || again.Status != http.StatusSeeOther {
			t.Fatalf("status %d then %d: %q", first.Status, again.Status, again.text("page-error"))
		}
		if loc := first.Header.Get("Location"); loc == "" || loc != again.Header.Get("Location") {
			t.Fatalf("Location %q then %q", loc, again.Header.Get("Location"))
		}
		if after := count(); after != before+1 {
			t.Fatalf("%d documents after two submits, want %d", after, before+1)
		}
		// A new view of the form makes a new document.
		form = fields(b.get("/documents/new"), "content_type", "status", "visibility")
		form.Set("title", "Twice")
		if p := b.post("/documents", form); p.Status != http.StatusSeeOther {
			t.Fatalf("status %d", p.Status)
		}
		if after := count(); after != before+2 {
			t.Fatalf("%d documents, want %d", after, before+2)
		}
	})

	t.Run("the same edit form submitted twice saves one version", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Edited")})
		form := fields(b.get("/documents/"+doc.ID+"/edit"), "title", "content", "content_type", "status", "visibility")
		form.Set("content", "new text")
		first := b.post("/documents/"+doc.ID, form)
		again := b.post("/documents/"+doc.ID, form)
		if first.Status != http.StatusSeeOther || again.Status != http.StatusSeeOther ||
			first.Header.Get("Location") != again.Header.Get("Location") {
			t.Fatalf("answers %d %q then %d %q", first.Status, first.Header.Get("Location"), again.Status, again.Header.Get("Location"))
		}
		vs, err := e.docs.Versions(context.Background(), e.actor(ed), doc.ID)
		if err != nil || len(vs) != 2 {
			t.Fatalf("%d versions (%v), want 2", len(vs), err)
		}
	})
}
