package acceptance

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"quire/documents"
)

// TestBrowserTrash: a delete answered with Undo, a restore from the trash
// page, and a save that meets a deleted document, which keeps the typed
// text through a restore and a second save, or saves it as a new document.
func TestBrowserTrash(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	linus := e.user("linus@example.com", "admin", "Research")
	bg := context.Background()
	doomed := e.document(grace, documents.DocumentInput{Title: documents.Some("Doomed page"), Content: documents.Some("first words")})
	notes := e.document(grace, documents.DocumentInput{Title: documents.Some("Travel notes"), Content: documents.Some("Lisbon")})
	plan := e.document(grace, documents.DocumentInput{Title: documents.Some("Launch plan"), Content: documents.Some("step one")})

	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))

	do(t, ctx, "delete a document",
		chromedp.Navigate(e.server.URL+"/documents/"+doomed.ID),
		waitVisible(id("delete-document")),
		chromedp.Click(id("delete-document")),
		waitVisible(id("confirm-delete")),
		chromedp.Click(id("confirm-delete")),
		waitVisible(id("undo-delete")),
	)
	flash := read(t, ctx, "flash", chromedp.Text(css(".flash")))
	if !strings.HasPrefix(flash, "Document moved to the trash.") {
		t.Fatalf("flash after delete %q", flash)
	}
	if _, err := e.docs.Get(bg, e.actor(grace), doomed.ID); err == nil {
		t.Fatal("the document is still readable after the delete")
	}
	do(t, ctx, "undo", chromedp.Click(id("undo-delete")), waitVisible(id("doc-body")))
	flash = read(t, ctx, "flash", chromedp.Text(css(".flash")))
	if got := e.get(grace, doomed.ID); flash != "Document restored from the trash." || got.Content != "first words" {
		t.Fatalf("after undo: flash %q, content %q", flash, got.Content)
	}

	if err := e.docs.Delete(bg, e.actor(grace), notes.ID); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "restore from the trash page",
		chromedp.Click(id("trash-link")),
		waitVisible(id("trash")),
		chromedp.Click(css(`tr[data-id="`+notes.ID+`"] button.restore`)),
		waitVisible(id("doc-body")),
	)
	if got := e.get(grace, notes.ID); got.Content != "Lisbon" || got.Version != notes.Version {
		t.Fatalf("restored from the trash page: %+v", got)
	}

	typed := "step one\nstep two, typed while someone deleted the page"
	do(t, ctx, "type in the editor",
		chromedp.Navigate(e.server.URL+"/documents/"+plan.ID+"/edit"),
		waitVisible(id("doc-form")),
		selectAllInEditor(),
		typeInEditor(typed),
	)
	if err := e.docs.Delete(bg, e.actor(linus), plan.ID); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "save meets the deleted document", chromedp.Click(id("save-document")), waitVisible(id("gone")))
	kept := read(t, ctx, "editor content", formValue("content"))
	message := read(t, ctx, "message", chromedp.Text(id("gone-message")))
	if kept != typed || !strings.Contains(message, "Linus moved the document to the trash") {
		t.Fatalf("after the save: editor %q, message %q", kept, message)
	}
	do(t, ctx, "restore from the trash, keeping the text",
		chromedp.Click(id("restore-and-edit")),
		waitVisible(id("save-document")),
	)
	kept = read(t, ctx, "editor content", formValue("content"))
	if kept != typed {
		t.Fatalf("after the restore the editor holds %q", kept)
	}
	do(t, ctx, "save again", chromedp.Click(id("save-document")), waitVisible(id("doc-body")))
	flash = read(t, ctx, "flash", chromedp.Text(css(".flash")))
	got := e.get(grace, plan.ID)
	if diff := cmp.Diff([]any{"Changes saved.", typed, plan.Version + 1}, []any{flash, got.Content, got.Version}); diff != "" {
		t.Fatalf("after saving the restored document (-want +got):\n%s", diff)
	}

	// Deleted for good meanwhile: the text becomes a new document.
	do(t, ctx, "type again",
		chromedp.Navigate(e.server.URL+"/documents/"+plan.ID+"/edit"),
		waitVisible(id("doc-form")),
		editorToEnd(),
		typeInEditor("\nstep three"),
	)
	if err := e.docs.Delete(bg, e.actor(linus), plan.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.docs.Purge(bg, e.actor(linus), plan.ID); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "save meets the purged document", chromedp.Click(id("save-document")), waitVisible(id("gone")))
	do(t, ctx, "save as a new document", chromedp.Click(id("save-as-new")), waitVisible(id("doc-body")))
	location := read(t, ctx, "location", chromedp.Location())
	newID := strings.TrimSuffix(strings.TrimPrefix(location, e.server.URL+"/documents/"), "?m=created")
	if got := e.get(grace, newID); got.Content != typed+"\nstep three" || got.Title != "Launch plan" {
		t.Fatalf("new document %+v", got)
	}
}
