package acceptance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"quire/documents"
)

// blockquoteDepth returns how deep block quotes nest under n.
func blockquoteDepth(n *html.Node) int {
	depth := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		depth = max(depth, blockquoteDepth(c))
	}
	if n.Type == html.ElementNode && n.Data == "blockquote" {
		depth++
	}
	return depth
}

func TestDocumentContentPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor, reader := e.signedInUser("ed@example.com", "editor", "Engineering")
	_, viewer := e.signedInUser("vi@example.com", "viewer", "Engineering")

	t.Run("150 KB of block quote markers render on the page", func(t *testing.T) {
		doc := e.document(editor, documents.DocumentInput{
			Title: documents.Some("Quotes"), Content: documents.Some(strings.Repeat(">", 150_000) + " end"),
		})
		for _, path := range []string{"/documents/" + doc.ID, "/documents/" + doc.ID + "/versions/1"} {
			p := reader.get(path)
			if p.Status != http.StatusOK {
				t.Fatalf("%s: status %d", path, p.Status)
			}
			body := p.byID("doc-body")
			if body == nil {
				t.Fatalf("%s: no doc-body", path)
			}
			if d := blockquoteDepth(body); d != 16 {
				t.Errorf("%s: block quotes %d deep, want 16", path, d)
			}
			if text := p.text("doc-body"); !strings.HasSuffix(text, strings.Repeat(">", 100)+" end") {
				t.Errorf("%s: the markers past the limit are not the text: %q", path, tail(text, 200))
			}
		}
	})

	private := e.document(editor, documents.DocumentInput{
		Title: documents.Some("Plans"), Content: documents.Some("# Plans\n\nThe *secret* plans."),
	})
	t.Run("a render seen by its author is not shown to a reader who may not see it", func(t *testing.T) {
		if p := reader.get("/documents/" + private.ID); p.Status != http.StatusOK || !strings.Contains(p.Body, "<em>secret</em>") {
			t.Fatalf("author: status %d", p.Status)
		}
		p := viewer.get("/documents/" + private.ID)
		if p.Status != http.StatusNotFound || strings.Contains(p.Body, "secret") {
			t.Errorf("viewer: status %d, page has the content: %v", p.Status, strings.Contains(p.Body, "secret"))
		}
	})
	t.Run("a changed document shows its new content, an old version its own", func(t *testing.T) {
		current := e.get(editor, private.ID)
		if _, err := e.docs.Update(context.Background(), e.actor(editor), private.ID, documents.DocumentInput{
			Content: documents.Some("# Plans\n\nThe *public* plans."),
		}, current.UpdatedAt); err != nil {
			t.Fatal(err)
		}
		if p := reader.get("/documents/" + private.ID); !strings.Contains(p.Body, "<em>public</em>") {
			t.Errorf("current: %q", p.text("doc-body"))
		}
		if p := reader.get("/documents/" + private.ID + "/versions/1"); !strings.Contains(p.Body, "<em>secret</em>") {
			t.Errorf("version 1: %q", p.text("doc-body"))
		}
	})
}
