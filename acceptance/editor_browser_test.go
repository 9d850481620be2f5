package acceptance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"quire/documents"
)

// The edit page's content is typed into the editor (web/editor: CodeMirror
// in place of the textarea). The textarea stays the form's field, hidden,
// and follows the editor: tests read the content from it
// (chromedp.Value(id("content"))) and type into the editor, key by key.

// theEditor is the editor's editable element.
var theEditor = css("#doc-form .cm-content")

// typeInEditor types text at the editor's cursor, key by key, as a person
// would; a line break is the Enter key (pressEnter: chromedp.SendKeys
// would send its text again in an event the editor cannot cancel, and the
// editor would break the line twice).
func typeInEditor(text string) action {
	steps := []action{waitVisible(theEditor), chromedp.Focus(theEditor)}
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			steps = append(steps, pressEnter())
		}
		if line != "" {
			steps = append(steps, chromedp.KeyEvent(line))
		}
	}
	return chromedp.Steps(steps...)
}

// editorCtrlKey presses a key in the editor, with Ctrl: kb.Home and kb.End go
// to the start and the end of the text.
func editorCtrlKey(key string) action {
	return chromedp.Steps(
		chromedp.Focus(theEditor),
		chromedp.KeyEvent(key, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
	)
}

// editorToEnd puts the cursor at the end of the text (Ctrl+End).
func editorToEnd() action { return editorCtrlKey(kb.End) }

// editorToStart puts the cursor at the start of the text (Ctrl+Home).
func editorToStart() action { return editorCtrlKey(kb.Home) }

// selectInEditor selects the first occurrence of s in the editor's text,
// as a person's drag over it would, so that what is typed next replaces it.
func selectInEditor(s string) action {
	return chromedp.Steps(waitVisible(theEditor), chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		found, err := chromedp.Evaluate[bool](`(() => {
			const s = `+jsString(s)+`, v = window.quireEditor.view, i = v.state.doc.toString().indexOf(s);
			if (i < 0) { return false; }
			v.focus();
			v.dispatch({selection: {anchor: i, head: i + s.length}, scrollIntoView: true});
			return true;
		})()`)(ctx, tgt)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("the editor does not hold %q", s)
		}
		return nil
	}))
}

// replaceInEditor selects old in the editor and types new over it.
func replaceInEditor(old, new string) action {
	return chromedp.Steps(selectInEditor(old), typeInEditor(new))
}

// selectAllInEditor selects the whole text (Ctrl+A), so that what is
// typed next replaces it.
func selectAllInEditor() action { return editorCtrlKey("a") }

// TestEditPageAllowsTheEditorsStylesOnly: the edit pages (a document's,
// a new one) load the editor with a nonce of their own, and their CSP
// allows <style> elements with that nonce and nothing more than every
// other page allows; each response has a fresh one.
func TestEditPageAllowsTheEditorsStylesOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed, b := e.signedInUser("ed@example.com", "editor", "Engineering")
	doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("First step.\n")})
	seen := map[string]bool{}
	for _, path := range []string{"/documents/" + doc.ID + "/edit", "/documents/" + doc.ID + "/edit", "/documents/new"} {
		p := b.get(path)
		if p.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, p.Status)
		}
		script := find(p.Doc, func(n *html.Node) bool {
			return n.Data == "script" && strings.HasPrefix(attr(n, "src"), "/static/live.js?v=")
		})
		if script == nil {
			t.Fatalf("GET %s: no script of the editor", path)
		}
		nonce := attr(script, "nonce")
		if len(nonce) < 22 || seen[nonce] {
			t.Fatalf("GET %s: nonce %q (seen before: %v)", path, nonce, seen[nonce])
		}
		seen[nonce] = true
		want := strings.Replace(wantCSP, "style-src 'self';", "style-src 'self' 'nonce-"+nonce+"';", 1)
		if got := p.Header.Get("Content-Security-Policy"); got != want {
			t.Errorf("GET %s: CSP\n%s\nwant\n%s", path, got, want)
		}
	}
}

// TestBrowserEditorInPlaceOfTheTextarea: on the edit page the editor
// replaces the content's textarea, styled under the page's strict CSP
// (CodeMirror's own <style> elements carry the page's nonce), in Markdown
// mode; what is typed, undone, or put back by "Restore draft" is in the
// form field, and the field's label leads to the editor.
func TestBrowserEditorInPlaceOfTheTextarea(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("First step.\n")})
	edit := e.server.URL + "/documents/" + doc.ID + "/edit"
	do(t, ctx, "open the editor",
		signInByCookie(e, "grace@example.com", testPassword),
		chromedp.Navigate(edit),
		waitVisible(theEditor),
	)
	look := read(t, ctx, "the editor", chromedp.Evaluate[[]any](`(() => {
		const ed = document.querySelector("#doc-form .cm-editor"), area = document.getElementById("content");
		return [area.hidden, area.nextElementSibling === ed, getComputedStyle(ed).display,
			document.querySelector("#doc-form .cm-content").getAttribute("aria-labelledby") === document.querySelector("label[for=content]").id,
			window.quireEditor.text()];
	})()`))
	// display: flex is CodeMirror's own style: its <style> element was
	// allowed by the CSP.
	if diff := cmp.Diff([]any{true, true, "flex", true, "First step.\n"}, look); diff != "" {
		t.Fatalf("[textarea hidden, editor after it, editor's display, labelled, text] (-want +got):\n%s", diff)
	}

	do(t, ctx, "the label focuses the editor; type a heading",
		chromedp.Click(css("label[for=content]")),
		chromedp.KeyEvent(kb.End, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		typeInEditor("# Next\n"),
	)
	if got := read(t, ctx, "the form's content", chromedp.Value(id("content"))); got != "First step.\n# Next\n" {
		t.Fatalf("the form holds %q after typing", got)
	}
	// Markdown mode: the heading is marked up by the editor's parser.
	heading := read(t, ctx, "the heading's mark-up", chromedp.Evaluate[int](
		`Array.from(document.querySelectorAll("#doc-form .cm-line")).filter(l => l.textContent === "# Next" && l.querySelector("span")).length`))
	if heading != 1 {
		t.Errorf("the heading's line is not marked up (%d lines)", heading)
	}
	// Undo (Ctrl+Z) until the word is gone: the editor groups keys typed
	// close together into one step, so some of the heading may go with it.
	do(t, ctx, "type a word", typeInEditor("Oops"))
	got := ""
	for range 10 {
		do(t, ctx, "undo", chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		if got = read(t, ctx, "the form's content", chromedp.Value(id("content"))); !strings.Contains(got, "Oops") {
			break
		}
	}
	if !strings.HasPrefix("First step.\n# Next\n", got) || !strings.HasPrefix(got, "First step.\n") {
		t.Fatalf("the form holds %q after undoing", got)
	}

	do(t, ctx, "type, then reload",
		typeInEditor("Second step."),
		draftHolds(draftKey(grace, doc.ID)),
	)
	typed := read(t, ctx, "typed", chromedp.Value(id("content")))
	dlg := watchDialogs(ctx)
	do(t, ctx, "reload and restore the draft",
		chromedp.Reload(),
		waitVisible(id("draft-notice")),
		chromedp.Click(id("restore-draft")),
		waitNotVisible(id("draft-notice")),
	)
	dlg.next(t, ctx, "reload with changes")
	both := read(t, ctx, "the editor and the form", chromedp.Evaluate[[]string](
		`[window.quireEditor.text(), document.getElementById("content").value,
			document.activeElement.classList.contains("cm-content") ? "the editor" : document.activeElement.tagName]`))
	if diff := cmp.Diff([]string{typed, typed, "the editor"}, both); diff != "" {
		t.Fatalf("after restoring [editor, form, focus] (-want +got):\n%s", diff)
	}
}

// TestBrowserMentionInTheEditor: "@" and the start of a name in the editor
// offer the people who can see the document; Enter takes the one chosen
// (and not the editor: no line break), the mention goes in at the cursor
// and into the form.
func TestBrowserMentionInTheEditor(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	bob := e.user("bob@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("First step."),
		Visibility: documents.Some("department")})
	do(t, ctx, "type @Bo in the editor",
		signInByCookie(e, "grace@example.com", testPassword),
		chromedp.Navigate(e.server.URL+"/documents/"+doc.ID+"/edit"),
		editorToEnd(),
		typeInEditor(" Ask @Bo"),
		waitVisible(css(`#mention-picker li[role="option"]`)),
	)
	aria := read(t, ctx, "the picker", chromedp.Evaluate[[]string](`(() => { const c = document.querySelector("#doc-form .cm-content");
		return [c.getAttribute("aria-expanded"), c.getAttribute("aria-activedescendant"), document.querySelector("#mention-picker li[role=option]").textContent,
			document.getElementById("mention-picker").previousElementSibling.classList.contains("cm-editor") ? "after the editor" : "elsewhere"]; })()`))
	if diff := cmp.Diff([]string{"true", "mention-option-0", "Bob", "after the editor"}, aria); diff != "" {
		t.Fatalf("[aria-expanded, active option, option, place] (-want +got):\n%s", diff)
	}
	do(t, ctx, "Enter takes Bob", pressEnter(), waitNotVisible(id("mention-picker")), typeInEditor("to check."))
	want := "First step. Ask [@Bob](mention:" + bob.ID + ") to check."
	if got := read(t, ctx, "the form's content", chromedp.Value(id("content"))); got != want {
		t.Fatalf("the form holds %q, want %q", got, want)
	}
}
