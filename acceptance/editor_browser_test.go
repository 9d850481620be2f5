package acceptance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
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
	steps := []action{chromedp.WaitVisible(theEditor), chromedp.Focus(theEditor)}
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
	return chromedp.Steps(chromedp.WaitVisible(theEditor), chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
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
