package acceptance

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/documents"
)

// dialogs watches the JavaScript dialogs of one tab. A beforeunload dialog
// is answered "leave" when leave is set and "stay" otherwise; each dialog
// is recorded before it is answered, so that a navigation it held up
// cannot finish before the test can see it.
type dialogs struct {
	seen  chan cdppage.DialogType
	leave atomic.Bool
}

func watchDialogs(ctx context.Context) *dialogs {
	d := &dialogs{seen: make(chan cdppage.DialogType, 32)}
	d.leave.Store(true)
	events := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			d.seen <- ev.Type
			accept := ev.Type != cdppage.DialogTypeBeforeunload || d.leave.Load()
			chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: accept})
		}
	}()
	return d
}

// next waits for the next dialog and returns its type.
func (d *dialogs) next(t *testing.T, ctx context.Context, step string) cdppage.DialogType {
	t.Helper()
	select {
	case typ := <-d.seen:
		return typ
	case <-ctx.Done():
		t.Fatalf("%s: no dialog opened: %v", step, ctx.Err())
		return ""
	}
}

// none checks that no dialog has opened since the last look.
func (d *dialogs) none(t *testing.T, step string) {
	t.Helper()
	select {
	case typ := <-d.seen:
		t.Fatalf("%s: a %s dialog opened", step, typ)
	default:
	}
}

// draftKey is where the edit page of a document keeps its draft.
func draftKey(u quire.User, docID string) string { return "quire.draft." + u.ID + "/" + docID }

// draftHolds waits until the kept draft's content is the editor's.
func draftHolds(key string) action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := poll[bool](`(() => {
			const d = JSON.parse(localStorage.getItem(`+jsString(key)+`) || "null");
			return !!d && d.fields.content === document.getElementById("content").value &&
				d.fields.title === document.getElementById("title").value;
		})()`)(ctx, tgt)
		return err
	})
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// emptyField empties a field of the form (chromedp.Clear empties only the
// value attribute, which a field typed in no longer follows).
func emptyField(name string) action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := chromedp.Evaluate[string](`document.getElementById(`+jsString(name)+`).value = ""`)(ctx, tgt)
		return err
	})
}

// form reads the title and content of the edit page.
func form(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return []string{read(t, ctx, "title", chromedp.Value(id("title"))), read(t, ctx, "content", chromedp.Value(id("content")))}
}

func TestBrowserAsksBeforeLeavingUnsavedChanges(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("First step.\n")})
	edit := e.server.URL + "/documents/" + doc.ID + "/edit"
	dlg := watchDialogs(ctx)
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))

	t.Run("a form typed in and put back as it was does not ask", func(t *testing.T) {
		do(t, ctx, "type and undo",
			chromedp.Navigate(edit),
			waitVisible(id("doc-form")),
			chromedp.SendKeys(id("title"), "x"),
			chromedp.SendKeys(id("title"), "\b"),
		)
		if got := read(t, ctx, "title", chromedp.Value(id("title"))); got != "Runbook" {
			t.Fatalf("title %q after typing and deleting a letter", got)
		}
		do(t, ctx, "leave", chromedp.Navigate(e.server.URL+"/documents"), waitVisible(id("result-count")))
		dlg.none(t, "leaving an unchanged form")
	})

	t.Run("a changed form asks, and staying keeps the text", func(t *testing.T) {
		do(t, ctx, "type",
			chromedp.Navigate(edit),
			waitVisible(id("doc-form")),
			typeInEditor("Second step."),
		)
		typed := form(t, ctx)
		dlg.leave.Store(false)
		// The Cancel link is a plain link: the page is asked whether to
		// leave, and the dialog answered "stay".
		do(t, ctx, "click Cancel", chromedp.Click(css(`#doc-form .actions a.button`)))
		if typ := dlg.next(t, ctx, "cancel with changes"); typ != cdppage.DialogTypeBeforeunload {
			t.Fatalf("dialog %q, want beforeunload", typ)
		}
		location := read(t, ctx, "location", chromedp.Location())
		if diff := cmp.Diff([]any{edit, typed}, []any{location, form(t, ctx)}); diff != "" {
			t.Fatalf("after choosing to stay (-want +got):\n%s", diff)
		}
		dlg.leave.Store(true)
		do(t, ctx, "leave", chromedp.Navigate(e.server.URL+"/documents"), waitVisible(id("result-count")))
		if typ := dlg.next(t, ctx, "leave with changes"); typ != cdppage.DialogTypeBeforeunload {
			t.Fatalf("dialog %q, want beforeunload", typ)
		}
	})

	t.Run("a reload of a changed form asks", func(t *testing.T) {
		do(t, ctx, "type and reload",
			chromedp.Navigate(edit),
			waitVisible(id("doc-form")),
			chromedp.SendKeys(id("summary"), "Short."),
			chromedp.Reload(),
			waitVisible(id("doc-form")),
		)
		if typ := dlg.next(t, ctx, "reload with changes"); typ != cdppage.DialogTypeBeforeunload {
			t.Fatalf("dialog %q, want beforeunload", typ)
		}
	})

	t.Run("saving does not ask", func(t *testing.T) {
		do(t, ctx, "type and save",
			chromedp.Navigate(edit),
			waitVisible(id("doc-form")),
			chromedp.SendKeys(id("tags"), "ops"),
			chromedp.Click(id("save-document")),
			waitVisible(id("doc-body")),
		)
		dlg.none(t, "saving")
		if got := e.get(grace, doc.ID).Tags; !cmp.Equal(got, []string{"ops"}) {
			t.Errorf("tags %q after the save", got)
		}
	})

	t.Run("a new document with a title asks", func(t *testing.T) {
		do(t, ctx, "type a title and leave",
			chromedp.Navigate(e.server.URL+"/documents/new"),
			waitVisible(id("doc-form")),
			chromedp.SendKeys(id("title"), "Notes"),
			chromedp.Navigate(e.server.URL+"/documents"),
			waitVisible(id("result-count")),
		)
		if typ := dlg.next(t, ctx, "leave a new document"); typ != cdppage.DialogTypeBeforeunload {
			t.Fatalf("dialog %q, want beforeunload", typ)
		}
	})

	t.Run("a new document untouched does not ask", func(t *testing.T) {
		// The new-document page may offer the draft left just above: it
		// is discarded first, then the page is left untouched.
		do(t, ctx, "open and leave",
			chromedp.Navigate(e.server.URL+"/documents/new"),
			waitVisible(id("draft-notice")),
			chromedp.Click(id("discard-draft")),
			chromedp.Click(id("title")),
			chromedp.Navigate(e.server.URL+"/documents"),
			waitVisible(id("result-count")),
		)
		dlg.none(t, "leaving an untouched new document")
	})
}

func TestBrowserKeepsADraft(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("First step.\n")})
	edit := e.server.URL + "/documents/" + doc.ID + "/edit"
	key := draftKey(grace, doc.ID)
	server := []string{"Runbook", "First step.\n"}
	dlg := watchDialogs(ctx)
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))

	do(t, ctx, "type",
		chromedp.Navigate(edit),
		waitVisible(id("doc-form")),
		chromedp.SendKeys(id("title"), " v2"),
		typeInEditor("Second step."),
		draftHolds(key),
	)
	typed := form(t, ctx)

	t.Run("a reload offers the draft and does not apply it", func(t *testing.T) {
		do(t, ctx, "reload", chromedp.Reload(), waitVisible(id("draft-notice")))
		dlg.next(t, ctx, "reload with changes")
		notice := read(t, ctx, "notice", chromedp.Text(id("draft-notice-text")))
		if !strings.HasPrefix(notice, "You have an unsaved draft from ") {
			t.Errorf("notice %q", notice)
		}
		if diff := cmp.Diff(server, form(t, ctx)); diff != "" {
			t.Fatalf("the form before restoring (-want +got):\n%s", diff)
		}
		do(t, ctx, "restore", chromedp.Click(id("restore-draft")), waitNotVisible(id("draft-notice")))
		if diff := cmp.Diff(typed, form(t, ctx)); diff != "" {
			t.Fatalf("the form after restoring (-want +got):\n%s", diff)
		}
	})

	// A crashed tab runs no beforeunload and no pagehide: what was kept
	// while typing is all there is.
	do(t, ctx, "type more", typeInEditor(" Third step."), draftHolds(key))
	typed = form(t, ctx)
	tab, closeTab := chromedp.NewContext(ctx)
	t.Cleanup(closeTab)
	t.Run("a crashed tab's draft is offered in a new tab", func(t *testing.T) {
		crashed := chromedp.Events(ctx, inspector.TargetCrashed)
		// Page.crash gets no answer, or an error: send it aside, and wait
		// for the crash itself.
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go chromedp.Call(cctx, cdppage.Crash, cdp.Empty{})
		for _, err := range crashed {
			if err != nil {
				t.Fatalf("wait for the crash: %v", err)
			}
			break
		}
		do(t, tab, "open the form in a new tab", quietTab(), chromedp.Navigate(edit), waitVisible(id("draft-notice")))
		if diff := cmp.Diff(server, form(t, tab)); diff != "" {
			t.Fatalf("the form before restoring (-want +got):\n%s", diff)
		}
		do(t, tab, "restore", chromedp.Click(id("restore-draft")), waitNotVisible(id("draft-notice")))
		if diff := cmp.Diff(typed, form(t, tab)); diff != "" {
			t.Fatalf("the form after restoring (-want +got):\n%s", diff)
		}
	})

	tabDialogs := watchDialogs(tab)
	t.Run("discard removes the draft", func(t *testing.T) {
		do(t, tab, "reload and discard",
			chromedp.Reload(),
			waitVisible(id("draft-notice")),
			chromedp.Click(id("discard-draft")),
			waitNotVisible(id("draft-notice")),
		)
		tabDialogs.next(t, tab, "reload with a restored draft")
		kept := read(t, tab, "kept draft", chromedp.Evaluate[bool](`localStorage.getItem(`+jsString(key)+`) !== null`))
		if diff := cmp.Diff([]any{server, false}, []any{form(t, tab), kept}); diff != "" {
			t.Fatalf("after discarding [form, draft kept] (-want +got):\n%s", diff)
		}
		do(t, tab, "reload", chromedp.Reload(), waitVisible(id("doc-form")))
		tabDialogs.none(t, "reload of an unchanged form")
		if shown := read(t, tab, "notice shown", chromedp.Evaluate[bool](`!document.getElementById("draft-notice").hidden`)); shown {
			t.Error("the notice is shown again after discarding")
		}
	})

	t.Run("a save refused because the session ended keeps the draft", func(t *testing.T) {
		do(t, tab, "type", typeInEditor("Unsaved step."), draftHolds(key))
		typed := form(t, tab)
		if err := e.store.RevokeUserSessions(context.Background(), grace.ID, "", e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		do(t, tab, "save", chromedp.Click(id("save-document")), waitVisible(id("sign-in")))
		tabDialogs.none(t, "saving")
		do(t, tab, "sign in again and open the form",
			signInByCookie(e, "grace@example.com", testPassword),
			chromedp.Navigate(edit),
			waitVisible(id("draft-notice")),
			chromedp.Click(id("restore-draft")),
			waitNotVisible(id("draft-notice")),
		)
		if diff := cmp.Diff(typed, form(t, tab)); diff != "" {
			t.Fatalf("the form after restoring (-want +got):\n%s", diff)
		}
	})

	t.Run("a save refused as invalid keeps the draft", func(t *testing.T) {
		do(t, tab, "empty the title and save",
			emptyField("title"),
			chromedp.Click(id("save-document")),
			waitVisible(id("page-error")),
		)
		tabDialogs.none(t, "saving")
		content := read(t, tab, "draft content", poll[string](
			`(JSON.parse(localStorage.getItem(`+jsString(key)+`) || "null") || {fields: {}}).fields.content`))
		if !strings.Contains(content, "Unsaved step.") {
			t.Fatalf("kept draft %q after a refused save", content)
		}
		if got := e.get(grace, doc.ID); got.Content != server[1] {
			t.Fatalf("the refused save changed the document: %q", got.Content)
		}
	})

	t.Run("a successful save removes the draft", func(t *testing.T) {
		do(t, tab, "fill the title and save",
			chromedp.SendKeys(id("title"), "Runbook v3"),
			draftHolds(key),
			chromedp.Click(id("save-document")),
			waitVisible(id("doc-body")),
		)
		gone := read(t, tab, "draft removed", poll[bool](`localStorage.getItem(`+jsString(key)+`) === null`))
		saved := e.get(grace, doc.ID)
		if diff := cmp.Diff([]any{true, "Runbook v3"}, []any{gone, saved.Title}); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		if !strings.Contains(saved.Content, "Unsaved step.") {
			t.Errorf("saved content %q", saved.Content)
		}
		do(t, tab, "open the form again", chromedp.Navigate(edit), waitVisible(id("doc-form")))
		if shown := read(t, tab, "notice shown", chromedp.Evaluate[bool](`!document.getElementById("draft-notice").hidden`)); shown {
			t.Error("a notice is shown after the save")
		}
	})

	t.Run("a draft from an older version is saved through the conflict guard", func(t *testing.T) {
		do(t, tab, "type", typeInEditor("Mine."), draftHolds(key))
		typed := form(t, tab)
		before := e.get(grace, doc.ID)
		e.clock.Advance(time.Minute)
		theirs, err := e.docs.Update(context.Background(), e.actor(grace), doc.ID,
			documents.DocumentInput{Content: documents.Some("Theirs.\n")}, before.UpdatedAt)
		if err != nil {
			t.Fatal(err)
		}
		do(t, tab, "reload", chromedp.Reload(), waitVisible(id("draft-notice")))
		tabDialogs.next(t, tab, "reload with changes")
		notice := read(t, tab, "notice", chromedp.Text(id("draft-notice-text")))
		want := fmt.Sprintf("It was started from version %d; the document has been saved since (now version %d).", before.Version, theirs.Version)
		if !strings.Contains(notice, want) {
			t.Errorf("notice %q, want it to say %q", notice, want)
		}
		do(t, tab, "restore and save",
			chromedp.Click(id("restore-draft")),
			waitNotVisible(id("draft-notice")),
			chromedp.Click(id("save-document")),
			waitVisible(id("conflict")),
		)
		if diff := cmp.Diff(typed[1], read(t, tab, "my text", chromedp.Value(id("mine-text")))); diff != "" {
			t.Errorf("the conflict page's own text (-want +got):\n%s", diff)
		}
		if got := e.get(grace, doc.ID); got.Content != theirs.Content {
			t.Errorf("the draft overwrote the newer version: %q", got.Content)
		}
	})
}
