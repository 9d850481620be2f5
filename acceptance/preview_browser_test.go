package acceptance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"

	"quire/documents"
)

// TestBrowserPreview types in the editor and watches the preview follow,
// works its button with the keyboard alone, saves with Ctrl+S, and looks
// at the form 390 px wide.
func TestBrowserPreview(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, untimedHighlighting())
	grace := e.user("grace@example.com", "editor", "Engineering")
	const content = "Deploys go out from the main branch, after review.\n\n# Before you start\n\n- [x] Access to the cluster\n- [ ] A reviewer\n\n" +
		"# Deploy\n\n```bash\n# build and push the image\nmake image && docker push \"$REGISTRY/quire:$TAG\"\n```\n\n" +
		"```go\n// Ready reports whether the server answers.\nfunc Ready(ctx context.Context, url string) error {\n\treturn ping(ctx, url, 3)\n}\n```\n\n" +
		"| Step | Who |\n|---|---|\n| Review | A second engineer |\n| Deploy | The author |\n"
	d := e.document(grace, documents.DocumentInput{Title: documents.Some("Deploying quire"), Content: documents.Some(content)})

	previewHas := func(js string) action {
		return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := poll[bool](js)(ctx, tgt)
			return err
		})
	}
	do(t, ctx, "open the editor",
		signInByCookie(e, "grace@example.com", testPassword),
		chromedp.Navigate(e.server.URL+"/documents/"+d.ID+"/edit"),
		waitVisible(id("doc-form")),
		// A wide window shows the preview without being asked.
		waitVisible(id("preview-pane")),
		previewHas(`document.querySelector("#preview-body #h-deploy") !== null && document.querySelector("#preview-body .hl-k") !== null`),
	)
	if diff := cmp.Diff(
		[]any{"true", "Hide preview", true},
		read(t, ctx, "toggle", chromedp.Evaluate[[]any](`[document.getElementById("preview-toggle").getAttribute("aria-expanded"),
			document.getElementById("preview-toggle").textContent,
			document.getElementById("preview-pane").getBoundingClientRect().left > document.querySelector("#doc-form .cm-editor").getBoundingClientRect().right]`)),
	); diff != "" {
		t.Errorf("[aria-expanded, label, preview beside the editor] (-want +got):\n%s", diff)
	}
	want := read(t, ctx, "the server's rendering", chromedp.Evaluate[string](`document.getElementById("preview-body").innerHTML`))

	do(t, ctx, "type a heading at the top",
		editorToStart(),
		typeInEditor("# Typed live\n\nA *new* line.\n\n"),
		previewHas(`document.querySelector("#preview-body h2#h-typed-live") !== null && document.querySelector("#preview-body em") !== null`),
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(() => {
				window.scrollTo(0, document.querySelector("#doc-form .cm-editor").getBoundingClientRect().top + window.scrollY - 130);
				const pane = document.getElementById("preview-pane");
				pane.scrollTop = document.getElementById("h-typed-live").getBoundingClientRect().top - pane.getBoundingClientRect().top - 12;
				return true;
			})()`)(ctx, tgt)
			return err
		}),
		chromedp.Sleep(300*time.Millisecond), // the scroll painted: a screenshot, not an assertion
		screenshot("preview.png"),
	)
	if got := read(t, ctx, "the preview after typing", chromedp.Evaluate[string](`document.getElementById("preview-body").innerHTML`)); !strings.HasSuffix(got, want[strings.Index(want, "<h2 id=\"h-before-you-start\""):]) {
		t.Errorf("the rest of the preview changed:\n%s\nwant the end of\n%s", got, want)
	}

	do(t, ctx, "Tab from the editor reaches the preview button", chromedp.Focus(theEditor), chromedp.KeyEvent(kb.Tab))
	if got := read(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); got != "preview-toggle" {
		t.Fatalf("after the editor, Tab focuses %q", got)
	}
	do(t, ctx, "Enter hides the preview", chromedp.KeyEvent(kb.Enter), waitNotVisible(id("preview-pane")))
	hidden := read(t, ctx, "hidden", chromedp.Evaluate[[]string](`[document.getElementById("preview-toggle").getAttribute("aria-expanded"),
		document.getElementById("preview-toggle").textContent, document.getElementById("preview-status").textContent]`))
	do(t, ctx, "Space shows it again", chromedp.KeyEvent(" "), waitVisible(id("preview-pane")))
	shown := read(t, ctx, "shown", chromedp.Evaluate[[]string](`[document.getElementById("preview-toggle").getAttribute("aria-expanded"),
		document.getElementById("preview-toggle").textContent, document.getElementById("preview-status").textContent]`))
	if diff := cmp.Diff([][]string{{"false", "Show preview", "Preview hidden."}, {"true", "Hide preview", "Preview shown."}}, [][]string{hidden, shown}); diff != "" {
		t.Errorf("[aria-expanded, label, status] (-want +got):\n%s", diff)
	}

	do(t, ctx, "390 px wide, the preview goes below the editor",
		chromedp.EmulateViewport(390, 844),
		previewHas(`document.getElementById("preview-pane").getBoundingClientRect().top >= document.querySelector("#doc-form .cm-editor").getBoundingClientRect().bottom`),
	)
	if w := read(t, ctx, "page width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
		t.Errorf("the form is %d px wide in a 390 px window", w)
	}
	do(t, ctx, "back to a wide window", chromedp.EmulateViewport(1280, 860))

	do(t, ctx, "Ctrl+S saves",
		chromedp.Focus(theEditor),
		chromedp.KeyEvent("s", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		waitVisible(id("doc-body")),
	)
	flash := read(t, ctx, "flash", chromedp.Text(css(".flash")))
	saved := e.get(grace, d.ID)
	if diff := cmp.Diff([]any{"Changes saved.", "# Typed live\n\nA *new* line.\n\n" + content, 2}, []any{flash, saved.Content, saved.Version}); diff != "" {
		t.Errorf("after Ctrl+S (-want +got):\n%s", diff)
	}
	page := read(t, ctx, "the document page", chromedp.Evaluate[string](`document.getElementById("doc-body").innerHTML`))
	do(t, ctx, "the editor again", chromedp.Navigate(e.server.URL+"/documents/"+d.ID+"/edit"), waitVisible(id("preview-pane")),
		previewHas(`document.querySelector("#preview-body #h-typed-live") !== null`))
	if preview := read(t, ctx, "preview", chromedp.Evaluate[string](`document.getElementById("preview-body").innerHTML`)); preview != page {
		t.Errorf("the preview differs from the document page:\n%s\n%s", preview, page)
	}
}
