package acceptance

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// TestBrowserFinding searches and sees why each result matched, then walks
// the folder tree beside the documents to a parent folder whose documents
// all sit in its subfolders, and opens its page.
func TestBrowserFinding(t *testing.T) {
	ctx := newChrome(t)
	e, _ := demoEnv(t)
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))

	do(t, ctx, "search",
		chromedp.SetValue(id("search"), "incident runbook"),
		chromedp.Click(id("search-button")),
		waitVisible(css("#documents mark")),
		screenshot("search.png"),
	)
	// The first result's title and snippet mark the words searched, and a
	// snippet holds no element but marks.
	marks := read(t, ctx, "marks", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#documents li:first-child mark')).map(m => m.textContent.toLowerCase())`))
	others := read(t, ctx, "other elements", chromedp.Evaluate[int](
		`document.querySelectorAll('#documents .snippet *:not(mark)').length`))
	title := read(t, ctx, "first title", chromedp.Evaluate[string](
		`document.querySelector('#documents li:first-child h2').textContent.trim()`))
	if title != "Incident response runbook" || !containsAll(marks, "incident", "runbook") || others != 0 {
		t.Fatalf("first result %q with marks %q and %d other elements in snippets", title, marks, others)
	}

	do(t, ctx, "pick a parent folder in the tree",
		chromedp.Click(id("clear-filters")),
		waitVisible(id("folder-tree")),
		chromedp.Click(chromedp.Search(`//details[@id="folder-tree"]//a[text()="Engineering"]`)),
		waitVisible(id("documents")),
		waitVisible(css(`#folder-tree a[aria-current="true"]`)),
	)
	count := read(t, ctx, "count", chromedp.Text(id("result-count")))
	current := read(t, ctx, "current folder", chromedp.Text(css(`#folder-tree a[aria-current="true"]`)))
	if !strings.Contains(count, "in Engineering and its subfolders") || current != "Engineering" {
		t.Fatalf("after picking Engineering in the tree: count %q, current %q", count, current)
	}
	do(t, ctx, "screenshot", screenshot("folders.png"))

	do(t, ctx, "only the folder's own documents",
		chromedp.Click(id("only-folder")),
		waitVisible(id("show-subfolders")),
	)
	empty := read(t, ctx, "empty", chromedp.Text(id("no-results")))
	if !strings.Contains(empty, "No documents directly in Engineering, but") {
		t.Fatalf("Engineering alone says %q", empty)
	}

	do(t, ctx, "open the folder page from the breadcrumb of a document",
		chromedp.Click(id("show-subfolders")),
		waitVisible(id("documents")),
		chromedp.Click(css("#documents h2 a")),
		waitVisible(id("doc-crumbs")),
		chromedp.Click(css(`#doc-crumbs a[href^="/folders/"]`)),
		waitVisible(id("subfolders")),
	)
	crumbs := read(t, ctx, "folder page", chromedp.Evaluate[[]string](
		`[document.querySelector('h1').textContent.trim(), document.getElementById('folder-docs-below').textContent.trim().slice(0, 41)]`))
	if diff := cmp.Diff([]string{"Engineering", "No documents directly in this folder, but"}, crumbs); diff != "" {
		t.Errorf("Engineering's page (-want +got):\n%s", diff)
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
