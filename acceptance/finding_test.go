package acceptance

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"quire/documents"
)

// TestSearchShowsHighlights: a search's results show why they matched,
// the matched words in <mark> and everything else escaped.
func TestSearchShowsHighlights(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	e.document(ed, documents.DocumentInput{Title: documents.Some("Deploy <guide>"), Visibility: documents.Some("public"),
		Content: documents.Some("Run `make deploy` & watch the <b>dashboards</b> <script>alert(1)</script>")})
	b := e.signedIn("ed@example.com")
	p := b.get("/documents?search=deplo")
	if p.Status != http.StatusOK {
		t.Fatalf("status %d", p.Status)
	}
	list := p.byID("documents")
	if list == nil {
		t.Fatalf("no results: %s", p.text("result-count"))
	}
	got := innerHTML(list)
	for _, want := range []string{
		`<a href="/documents/`, `"><mark>Deploy</mark> &lt;guide&gt;</a>`,
		`<p class="snippet">Run ` + "`make <mark>deploy</mark>`" + ` &amp; watch the &lt;b&gt;dashboards&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;</p>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("results lack %q:\n%s", want, got)
		}
	}
	// The only elements the highlight brings are marks. (Each row's
	// checkbox of the bulk change and its label are the page's own.)
	for _, n := range findAll(list, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		if n.Data == "input" && attr(n, "class") == "bulk-check" || n.Data == "label" && strings.HasPrefix(attr(n, "for"), "select-") {
			continue
		}
		if !slices.Contains([]string{"ul", "li", "h2", "a", "p", "mark", "span", "time"}, n.Data) {
			t.Errorf("an element %s in the results", n.Data)
		}
	}
}

// TestFolderTreeAndPages: the tree beside the documents, a parent folder's
// count, the folder page's documents and the breadcrumb.
func TestFolderTreeAndPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	a := e.actor(ed)
	ctx := context.Background()
	top, err := e.docs.CreateFolder(ctx, a, documents.FolderInput{Name: documents.Some("Engineering"), ParentID: documents.Some("")})
	if err != nil {
		t.Fatal(err)
	}
	low, err := e.docs.CreateFolder(ctx, a, documents.FolderInput{Name: documents.Some("Runbooks"), ParentID: documents.Some(top.ID)})
	if err != nil {
		t.Fatal(err)
	}
	doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Restart the database"), FolderID: documents.Some(low.ID)})
	b := e.signedIn("ed@example.com")

	t.Run("the documents list has the folder tree beside it", func(t *testing.T) {
		p := b.get("/documents")
		links := p.links("folder-tree")
		want := []string{"/documents", "/documents?folderId=" + top.ID + "&includeSubfolders=true",
			"/documents?folderId=" + low.ID + "&includeSubfolders=true"}
		if !slices.Equal(links, want) {
			t.Errorf("tree links %q, want %q", links, want)
		}
	})
	t.Run("a parent folder holding documents only below says so, not 0 documents", func(t *testing.T) {
		p := b.get("/documents?folderId=" + top.ID)
		if got := p.text("no-results"); !strings.Contains(got, "No documents directly in Engineering, but 1 in its subfolders.") {
			t.Errorf("empty folder says %q", got)
		}
		if got := p.text("result-count"); !strings.HasPrefix(got, "0 documents directly in Engineering") {
			t.Errorf("count says %q", got)
		}
		p = b.get("/documents?folderId=" + top.ID + "&includeSubfolders=true")
		if got := p.text("result-count"); !strings.HasPrefix(got, "1 document in Engineering and its subfolders") {
			t.Errorf("count with subfolders says %q", got)
		}
		if !slices.Contains(p.links("documents"), "/documents/"+doc.ID) {
			t.Errorf("the list with subfolders lacks the document")
		}
	})
	t.Run("a folder page shows its subfolders and documents, and offers those below", func(t *testing.T) {
		p := b.get("/folders/" + top.ID)
		if !slices.Contains(p.links("subfolders"), "/folders/"+low.ID) {
			t.Errorf("subfolders %q", p.links("subfolders"))
		}
		if got := p.text("folder-docs-below"); !strings.Contains(got, "1 in its subfolders") {
			t.Errorf("top folder page says %q", got)
		}
		p = b.get("/folders/" + top.ID + "?includeSubfolders=true")
		if !slices.Contains(p.links("folder-doc-list"), "/documents/"+doc.ID) {
			t.Errorf("folder page with subfolders lacks the document: %q", p.text("folder-doc-count"))
		}
		p = b.get("/folders/" + low.ID)
		if !slices.Contains(p.links("folder-doc-list"), "/documents/"+doc.ID) {
			t.Errorf("folder page lacks its document %s: %q", doc.ID, p.links("folder-doc-list"))
		}
	})
	t.Run("a document's breadcrumb links each level", func(t *testing.T) {
		p := b.get("/documents/" + doc.ID)
		want := []string{"/documents", "/folders/" + top.ID, "/folders/" + low.ID}
		if got := p.links("doc-crumbs"); !slices.Equal(got, want) {
			t.Errorf("breadcrumb %q, want %q", got, want)
		}
	})
}

// TestListPagesAndEmptyStates: a page past the end, the jump form, and
// what an empty list says.
func TestListPagesAndEmptyStates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed, ew := e.signedInUser("ed@example.com", "editor", "Engineering")
	_, vw := e.signedInUser("vi@example.com", "viewer", "Engineering")

	t.Run("an empty list says how to create the first document", func(t *testing.T) {
		p := ew.get("/documents")
		if got := p.text("no-results"); !strings.Contains(got, "No documents yet") || strings.Contains(got, "match") {
			t.Errorf("empty list says %q", got)
		}
		if !slices.Contains(p.links("no-results"), "/documents/new") {
			t.Errorf("no link to create the first document: %q", p.links("no-results"))
		}
		if got := vw.get("/documents").text("no-results"); !strings.Contains(got, "No documents have been shared with you yet") {
			t.Errorf("a viewer's empty list says %q", got)
		}
	})
	for i := range 3 {
		e.document(ed, documents.DocumentInput{Title: documents.Some(fmt.Sprint("Doc ", i))})
	}
	t.Run("a filter that matches nothing says so", func(t *testing.T) {
		p := ew.get("/documents?search=zebra")
		if got := p.text("no-results"); !strings.Contains(got, "No documents match “zebra”.") {
			t.Errorf("search without results says %q", got)
		}
		p = ew.get("/documents?search=zebra&status=review")
		if got := p.text("no-results"); !strings.Contains(got, "No documents match “zebra” with these filters.") {
			t.Errorf("filtered search without results says %q", got)
		}
	})
	t.Run("a page past the end says so and links to the last page", func(t *testing.T) {
		p := ew.get("/documents?limit=1&page=9&sortBy=title")
		if got := p.text("no-results"); !strings.Contains(got, "There is no page 9: this list has 3 pages.") {
			t.Errorf("page past the end says %q", got)
		}
		if got := attr(p.byID("last-page"), "href"); got != "/documents?limit=1&page=3&sortBy=title" {
			t.Errorf("last page link %q", got)
		}
	})
	t.Run("a form jumps to any page, keeping the filters", func(t *testing.T) {
		p := ew.get("/documents?limit=1&sortBy=title")
		form := p.byID("page-jump")
		if form == nil {
			t.Fatal("no page jump form")
		}
		var names []string
		for _, n := range findAll(form, func(n *html.Node) bool { return n.Data == "input" }) {
			names = append(names, attr(n, "name")+"="+attr(n, "value"))
		}
		if want := []string{"sortBy=title", "limit=1", "page=1"}; !slices.Equal(names, want) {
			t.Errorf("jump form inputs %q, want %q", names, want)
		}
		if got := attr(p.byID("jump-page"), "max"); got != "3" {
			t.Errorf("jump max %q", got)
		}
	})
}
