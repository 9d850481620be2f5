package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"quire"
	"quire/documents"
)

// editForm is the form the editor posts for doc, with content typed.
func editForm(doc *quire.Document, content string) url.Values {
	return url.Values{
		"title": {doc.Title}, "summary": {doc.Summary}, "content": {content}, "content_type": {doc.ContentType},
		"status": {doc.Status}, "visibility": {doc.Visibility}, "folder_id": {doc.FolderID},
		"tags": {strings.Join(doc.Tags, ", ")}, "baseUpdatedAt": {doc.UpdatedAt.Format("2006-01-02T15:04:05.000000Z07:00")},
		"baseVersion": {"1"},
	}
}

// formAction returns the action of the form with that id, and the
// formaction of the button with buttonID inside it ("" when absent).
func formAttrs(p *page, formID, buttonID string) (action, buttonAction string) {
	if f := p.byID(formID); f != nil {
		action = attr(f, "action")
	}
	if b := p.byID(buttonID); b != nil {
		buttonAction = attr(b, "formaction")
	}
	return action, buttonAction
}

func TestTrashPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed, b := e.signedInUser("ed@example.com", "editor", "Engineering")
	e.user("col@example.com", "editor", "Engineering")
	e.user("sal@example.com", "editor", "Sales")

	t.Run("the delete page says the document goes to the trash", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Runbook")})
		p := b.get("/documents/" + doc.ID)
		if got := p.text("delete-document"); got != "Move to trash" {
			t.Errorf("delete button %q", got)
		}
		p = b.get("/documents/" + doc.ID + "/delete")
		if got := p.text("confirm-delete"); got != "Move to trash" || !strings.Contains(p.Body, "go to the trash") {
			t.Errorf("confirmation button %q", got)
		}
	})

	t.Run("a delete is answered with a notice whose Undo restores the document", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Undo me"), Content: documents.Some("kept")})
		p := b.post("/documents/"+doc.ID+"/delete", url.Values{})
		loc := p.Header.Get("Location")
		if p.Status != http.StatusSeeOther || loc != "/documents?m=deleted&undo="+doc.ID {
			t.Fatalf("delete: %d to %q", p.Status, loc)
		}
		p = b.get(loc)
		form := find(p.Doc, func(n *html.Node) bool { return n.Data == "form" && attr(n, "action") == "/trash/"+doc.ID+"/restore" })
		if !strings.Contains(p.Body, "Document moved to the trash.") || form == nil || p.byID("undo-delete") == nil {
			t.Fatalf("no notice with an Undo form: %s", p.Body)
		}
		p = b.post("/trash/"+doc.ID+"/restore", url.Values{})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/documents/"+doc.ID+"?m=untrashed" {
			t.Fatalf("undo: %d to %q", p.Status, p.Header.Get("Location"))
		}
		if got := e.get(ed, doc.ID); got.Content != "kept" || got.Version != 1 {
			t.Errorf("after undo: %+v", got)
		}
		// An undo parameter that is not an id is not put in the page.
		p = b.get("/documents?m=deleted&undo=" + url.QueryEscape(`"><script>`))
		if p.byID("undo-delete") != nil {
			t.Error("an Undo for a malformed id")
		}
	})

	t.Run("the trash page restores for any writer and deletes forever for the owner only", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Shared notes"), Visibility: documents.Some("department")})
		if err := e.docs.Delete(context.Background(), e.actor(ed), doc.ID); err != nil {
			t.Fatal(err)
		}
		col := e.signedIn("col@example.com")
		p := col.get("/trash")
		if p.Status != http.StatusOK || !strings.Contains(p.text("trash"), "Shared notes") {
			t.Fatalf("trash page: %d %s", p.Status, p.Body)
		}
		if links := p.links("trash"); len(links) != 0 {
			t.Errorf("a colleague is offered %q", links)
		}
		if got := col.get("/trash/" + doc.ID + "/delete"); got.Status != http.StatusForbidden {
			t.Errorf("a colleague's delete-forever page: %d", got.Status)
		}
		if got := col.post("/trash/"+doc.ID+"/delete", url.Values{}); got.Status != http.StatusForbidden {
			t.Errorf("a colleague's delete forever: %d", got.Status)
		}
		sal := e.signedIn("sal@example.com")
		if p := sal.get("/trash"); strings.Contains(p.Body, "Shared notes") || p.byID("trash-empty") == nil {
			t.Errorf("another department sees it in the trash")
		}
		if got := sal.post("/trash/"+doc.ID+"/restore", url.Values{}); got.Status != http.StatusNotFound {
			t.Errorf("another department's restore: %d", got.Status)
		}

		p = b.get("/trash")
		if links := p.links("trash"); len(links) != 1 || links[0] != "/trash/"+doc.ID+"/delete" {
			t.Fatalf("the owner is offered %q", links)
		}
		if p := b.get("/trash/" + doc.ID + "/delete"); p.byID("confirm-purge") == nil {
			t.Fatalf("no confirmation: %s", p.Body)
		}
		if p := b.post("/trash/"+doc.ID+"/delete", url.Values{}); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/trash?m=purged" {
			t.Fatalf("delete forever: %d to %q", p.Status, p.Header.Get("Location"))
		}
		if _, err := e.docs.Trashed(context.Background(), e.actor(ed), doc.ID); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("after delete forever: %v", err)
		}
	})

	t.Run("a cross-origin restore is refused", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Guarded")})
		if err := e.docs.Delete(context.Background(), e.actor(ed), doc.ID); err != nil {
			t.Fatal(err)
		}
		p := b.do("POST", "/trash/"+doc.ID+"/restore", url.Values{}, http.Header{"Sec-Fetch-Site": {"cross-site"}})
		if p.Status != http.StatusForbidden {
			t.Fatalf("status %d", p.Status)
		}
		if _, err := e.docs.Trashed(context.Background(), e.actor(ed), doc.ID); err != nil {
			t.Errorf("restored cross-origin: %v", err)
		}
	})

	t.Run("a save that meets a deleted document keeps the text and offers both ways out", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Plan"), Content: documents.Some("old text")})
		typed := "my long typed text\nsecond line"
		if err := e.docs.Delete(context.Background(), e.actor(e.user("del@example.com", "admin", "")), doc.ID); err != nil {
			t.Fatal(err)
		}
		form := editForm(doc, typed)
		p := b.post("/documents/"+doc.ID, form)
		if p.Status != http.StatusNotFound || p.byID("gone") == nil {
			t.Fatalf("save after delete: %d %s", p.Status, p.Body)
		}
		if got, _ := p.value("content"); got != typed {
			t.Errorf("the editor holds %q, want the typed text", got)
		}
		if msg := p.text("gone-message"); !strings.Contains(msg, "Del moved the document to the trash") {
			t.Errorf("message %q", msg)
		}
		action, restore := formAttrs(p, "doc-form", "restore-and-edit")
		if action != "/documents" || restore != "/trash/"+doc.ID+"/restore" || p.byID("save-as-new") == nil {
			t.Fatalf("form to %q, restore button to %q", action, restore)
		}

		// Restore from trash, sending the form as the button does.
		resumed := url.Values{"resume": {"edit"}}
		for k, v := range form {
			resumed[k] = v
		}
		p = b.post("/trash/"+doc.ID+"/restore", resumed)
		if p.Status != http.StatusOK {
			t.Fatalf("restore and resume: %d %s", p.Status, p.Body)
		}
		if got, _ := p.value("content"); got != typed {
			t.Errorf("after the restore the editor holds %q, want the typed text", got)
		}
		if base, _ := p.value("baseUpdatedAt"); base != form.Get("baseUpdatedAt") {
			t.Errorf("base %q, want the edit's own %q", base, form.Get("baseUpdatedAt"))
		}
		if action, _ := formAttrs(p, "doc-form", ""); action != "/documents/"+doc.ID {
			t.Errorf("form to %q", action)
		}
		p = b.post("/documents/"+doc.ID, form)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("save after the restore: %d %s", p.Status, p.text("page-error"))
		}
		if got := e.get(ed, doc.ID); got.Content != typed || got.Version != 2 {
			t.Errorf("saved content %q, version %d", got.Content, got.Version)
		}
	})

	t.Run("a refused save that meets a deleted document keeps the text too", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Draft")})
		if err := e.docs.Delete(context.Background(), e.actor(ed), doc.ID); err != nil {
			t.Fatal(err)
		}
		for name, form := range map[string]url.Values{
			"without a base": func() url.Values { f := editForm(doc, "typed"); f.Del("baseUpdatedAt"); return f }(),
			"with conflict markers": func() url.Values {
				f := editForm(doc, "<<<<<<< your version\ntyped\n=======\nold\n>>>>>>> their version")
				f.Set("resolving", "1")
				return f
			}(),
		} {
			p := b.post("/documents/"+doc.ID, form)
			if got, _ := p.value("content"); p.Status != http.StatusNotFound || p.byID("gone") == nil || got != form.Get("content") {
				t.Errorf("%s: %d, editor %q", name, p.Status, got)
			}
		}
	})

	t.Run("a save that meets a document deleted for good saves as a new one", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Gone for good")})
		a := e.actor(ed)
		if err := e.docs.Delete(context.Background(), a, doc.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.docs.Purge(context.Background(), a, doc.ID); err != nil {
			t.Fatal(err)
		}
		form := editForm(doc, "still mine")
		p := b.post("/documents/"+doc.ID, form)
		if p.Status != http.StatusNotFound || p.byID("restore-and-edit") != nil || p.byID("save-as-new") == nil {
			t.Fatalf("save after purge: %d %s", p.Status, p.Body)
		}
		p = b.post("/documents", form)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("save as new: %d %s", p.Status, p.text("page-error"))
		}
		id := strings.TrimSuffix(strings.TrimPrefix(p.Header.Get("Location"), "/documents/"), "?m=created")
		if got := e.get(ed, id); got.Content != "still mine" || got.Title != "Gone for good" {
			t.Errorf("new document %+v", got)
		}
	})
}
