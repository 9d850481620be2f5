package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire"
	"quire/documents"
	"quire/live/livetest"
)

// Live editing in Chromium against the real live server (package live,
// through the web application's GET /documents/{id}/live), each person in
// a browser context of their own (README "Live editing: the browser").

// liveEditorText is the editor's text, in the page.
const liveEditorText = `window.quireEditor.text()`

// waitJS waits until js is true in the page: a wait for a condition, with
// the test's own deadline as the only bound.
func waitJS(js string) action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := poll[bool](js)(ctx, tgt)
		return err
	})
}

// joinLive signs in and opens the document's edit page, and waits until
// the editor holds the live text (the status line says so).
func joinLive(t *testing.T, tab context.Context, e *env, email, docID string) {
	t.Helper()
	do(t, tab, email+" joins", signInByCookie(e, email, testPassword),
		chromedp.Navigate(e.server.URL+"/documents/"+docID+"/edit"), waitVisible(theEditor),
		waitJS(`(t => t.startsWith("Live:") || t.startsWith("You are following"))(document.getElementById("live-status").textContent)`))
}

// storedContent waits until the document's stored content is want (a
// version saved from the live text) and fails with what it holds after
// livetest.HangGuard: a guard against a hang, no measure.
func storedContent(t *testing.T, e *env, u quire.User, docID, want string) *quire.Document {
	t.Helper()
	deadline := time.Now().Add(livetest.HangGuard)
	for {
		d := e.get(u, docID)
		if d.Content == want {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stored content is %q, want %q", d.Content, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBrowserLiveTwoPeopleTypeAtOnce: Grace and Linus type into the same
// paragraph at once, key by key, interleaved; both editors converge with
// every key kept, in each person's order. Save in live mode posts no form
// (no conflict page, though the live text moved the document on): it
// waits until everything is confirmed and goes to the document; when the
// last editor leaves, the server saves the live text as a version.
func TestBrowserLiveTwoPeopleTypeAtOnce(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	e.user("linus@example.com", "editor", "Engineering")
	doc := liveRunbook(e, grace)
	other := newSession(t, ctx)
	tabs := []context.Context{ctx, other}
	joinLive(t, ctx, e, "grace@example.com", doc.ID)
	joinLive(t, other, e, "linus@example.com", doc.ID)
	for _, tab := range tabs {
		do(t, tab, "the cursor after Hello", waitJS(liveEditorText+` === "Hello World"`),
			selectInEditor(" World"), chromedp.KeyEvent(kb.ArrowLeft))
	}

	typed := []string{"abcdefghijklmnop", "ABCDEFGHIJKLMNOP"}
	// Interleaved: each key of one person, then one of the other's, each
	// waiting for the browser to take it, and both tabs at once.
	typeAtOnce(t, tabs, typed)
	n := len("Hello World") + len(typed[0]) + len(typed[1])
	var texts []string
	for _, tab := range tabs {
		texts = append(texts, read(t, tab, "the editor, confirmed", poll[string](
			fmt.Sprintf(`window.quireEditor.unsent() === 0 && %s.length === %d && %s`, liveEditorText, n, liveEditorText))))
	}
	if texts[0] != texts[1] {
		t.Fatalf("the editors differ:\n%q\n%q", texts[0], texts[1])
	}
	want := texts[0]
	if !strings.HasPrefix(want, "Hello") || !strings.HasSuffix(want, " World") {
		t.Errorf("the text around the typing changed: %q", want)
	}
	for _, keys := range typed {
		if !subsequence(keys, want) {
			t.Errorf("%q is not in %q in the order typed", keys, want)
		}
	}

	// Save, in each tab: no form is posted, the page goes to the
	// document once everything is confirmed.
	for _, tab := range tabs {
		do(t, tab, "save", chromedp.Click(id("save-document")), waitPath("/documents/"+doc.ID))
		if n := read(t, tab, "conflict page", chromedp.Evaluate[int](`document.querySelectorAll("#conflict").length`)); n != 0 {
			t.Fatal("Save in live mode showed the conflict page")
		}
	}
	d := storedContent(t, e, grace, doc.ID, want)
	if d.Version <= doc.Version {
		t.Errorf("version %d after the live session, was %d", d.Version, doc.Version)
	}
}

// TestBrowserLiveFollowersAndCursors: a person who may only view the
// document follows it read-only (the editor does not take their typing,
// the page has no Save and none of the document's other fields, keeps no
// draft, and its preview follows the live text); each editor's cursor
// shows with their name in the others' editors, the follower's does not
// (their page sends none, and the server would drop it); the page lists
// who is editing and who is viewing.
func TestBrowserLiveFollowersAndCursors(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	e.user("linus@example.com", "editor", "Engineering")
	e.user("ada@example.com", "viewer", "Engineering")
	doc := liveRunbook(e, grace)
	linus, ada := newSession(t, ctx), newSession(t, ctx)
	joinLive(t, ctx, e, "grace@example.com", doc.ID)
	joinLive(t, linus, e, "linus@example.com", doc.ID)
	joinLive(t, ada, e, "ada@example.com", doc.ID)

	if st := read(t, ada, "status", chromedp.Text(id("live-status"))); !strings.HasPrefix(st, "You are following") {
		t.Errorf("the viewer's status line says %q", st)
	}
	if n := read(t, ada, "save", chromedp.Evaluate[int](`document.querySelectorAll("#save-document, #attach").length`)); n != 0 {
		t.Errorf("the viewer's page offers Save or attachments (%d)", n)
	}
	// None of the form's other fields: nothing of the follower's to type
	// in, nothing kept as a draft; the hidden textarea is read-only too.
	if got := read(t, ada, "the other fields", chromedp.Evaluate[[]any](`[
		Array.from(document.querySelectorAll("#doc-form input:not([type=hidden]), #doc-form select, #doc-form button[type=submit]")).map(el => el.id || el.name),
		document.getElementById("doc-form").hasAttribute("data-draft-key"),
		document.getElementById("content").readOnly]`)); fmt.Sprint(got) != "[[] false true]" {
		t.Errorf("the viewer's form: [fields, keeps a draft, textarea read-only] = %v, want [[] false true]", got)
	}
	// What the follower's page sends on its live connection, from now on.
	do(t, ada, "watch the socket", chromedp.Evaluate[chromedp.Void](`(() => {
		window.sentLive = [];
		const send = WebSocket.prototype.send;
		WebSocket.prototype.send = function (data) { window.sentLive.push(String(data)); return send.call(this, data); };
	})()`))
	// The editor is not editable: a click leaves no cursor there and the
	// keys go nowhere.
	do(t, ada, "the viewer types", chromedp.Click(theEditor), chromedp.KeyEvent("xyz"))
	do(t, ctx, "Grace types", editorToEnd(), typeInEditor("!"))
	for _, tab := range []context.Context{ctx, linus, ada} {
		do(t, tab, "converge", waitJS(`window.quireEditor.unsent() === 0 && `+liveEditorText+` === "Hello World!"`))
	}
	if got := read(t, ada, "editable", chromedp.Evaluate[string](`document.querySelector("#doc-form .cm-content").getAttribute("contenteditable")`)); got != "false" {
		t.Errorf("the viewer's editor is contenteditable=%q", got)
	}
	// The follower's preview (shown in a wide window) renders the live
	// text, through POST /preview, open to a reader.
	do(t, ada, "the follower's preview", waitVisible(id("preview-pane")),
		waitJS(`document.querySelector("#preview-body p") !== null && document.querySelector("#preview-body p").textContent === "Hello World!"`))

	// Ada selects a word, at the current count, and her page's timers run
	// past the editor's cursor delay (150 ms; timers fire in the order of
	// their deadlines): an editor's page would have sent its cursor.
	do(t, ada, "Ada selects", chromedp.Evaluate[chromedp.Void](`(() => {
		const v = window.quireEditor.view;
		v.dispatch({selection: {anchor: 0, head: 5}});
		window.pastCursorDelay = false;
		setTimeout(() => { window.pastCursorDelay = true; }, 400);
	})()`), waitJS(`window.pastCursorDelay`))

	// Linus's cursor, at the start, shows with his name to Grace and Ada.
	do(t, linus, "Linus moves", editorToStart())
	for _, tab := range []context.Context{ctx, ada} {
		do(t, tab, "Linus's cursor label", waitJS(`Array.from(document.querySelectorAll(".cm-remote-name")).some(n => n.textContent === "Linus")`))
	}
	do(t, ctx, "presence", waitJS(`(p => p.includes("Editing: Grace, Linus.") && p.includes("Ada"))(document.getElementById("live-presence").textContent)`))
	// The follower's selection shows nowhere, and her page sent none.
	for _, tab := range []context.Context{ctx, linus} {
		if labels := read(t, tab, "labels", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".cm-remote-name")).map(n => n.textContent)`)); slices.Contains(labels, "Ada") {
			t.Errorf("the follower's cursor label shows to another: %q", labels)
		}
	}
	if sent := read(t, ada, "sent", chromedp.Evaluate[[]string](`window.sentLive`)); slices.ContainsFunc(sent, func(m string) bool { return strings.Contains(m, `"type":"cursor"`) }) {
		t.Errorf("the follower's page sent its cursor: %q", sent)
	}

	// Ada goes back to the document's page: it says who is there live.
	do(t, ada, "back to the document", chromedp.Click(id("leave-live")), waitPath("/documents/"+doc.ID),
		waitVisible(id("follow-live")))
	if here := read(t, ada, "who is here", chromedp.Text(id("live-here"))); !strings.Contains(here, "editing: Grace, Linus.") {
		t.Errorf("the document page says %q", here)
	}
}

// TestBrowserLiveAPIWriteDuringSession: a PUT of the content through the
// HTTP API, with a personal API token, while two people edit it live
// reaches both editors; one with a stale baseUpdatedAt is still 409
// DOCUMENT_CONFLICT and changes nothing; what they type after it is kept
// on top of it.
func TestBrowserLiveAPIWriteDuringSession(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	e.user("linus@example.com", "editor", "Engineering")
	doc := liveRunbook(e, grace)
	token := e.apiToken("grace@example.com", "write")
	other := newSession(t, ctx)
	tabs := []context.Context{ctx, other}
	joinLive(t, ctx, e, "grace@example.com", doc.ID)
	joinLive(t, other, e, "linus@example.com", doc.ID)

	path := "/api/documentation/documents/" + doc.ID
	var got struct {
		Document struct {
			Content   string `json:"content"`
			UpdatedAt string `json:"updated_at"`
		} `json:"document"`
		Code string `json:"code"`
	}
	if code := e.apiJSON("GET", path, token, "", &got); code != http.StatusOK {
		t.Fatalf("GET: %d", code)
	}
	base := got.Document.UpdatedAt
	put := func(content, base string) int {
		t.Helper()
		body, err := json.Marshal(map[string]string{"content": content, "baseUpdatedAt": base})
		if err != nil {
			t.Fatal(err)
		}
		return e.apiJSON("PUT", path, token, string(body), &got)
	}
	if code := put("Written through the API", base); code != http.StatusOK || got.Document.Content != "Written through the API" {
		t.Fatalf("PUT during the session: %d %+v", code, got)
	}
	for _, tab := range tabs {
		do(t, tab, "the API's text arrives", waitJS(liveEditorText+` === "Written through the API"`))
	}
	// The same base again is stale now.
	if code := put("A stale write", base); code != http.StatusConflict || got.Code != "DOCUMENT_CONFLICT" {
		t.Fatalf("a stale PUT: %d %q, want 409 DOCUMENT_CONFLICT", code, got.Code)
	}
	do(t, other, "Linus types on top", editorToEnd(), typeInEditor("."))
	for _, tab := range tabs {
		do(t, tab, "converge", waitJS(`window.quireEditor.unsent() === 0 && `+liveEditorText+` === "Written through the API."`))
	}
}

// apiToken signs email in and returns the secret of a new personal API
// token of scope ("read" or "write"), as the account page makes one.
func (e *env) apiToken(email, scope string) string {
	e.t.Helper()
	ctx := context.Background()
	sess, err := e.auth.Login(ctx, quire.RequestInfo{IP: "192.0.2.1"}, email, testPassword, "")
	if err != nil {
		e.t.Fatalf("sign in %s: %v", email, err)
	}
	a, err := e.auth.Authenticate(ctx, sess.Token)
	if err != nil {
		e.t.Fatal(err)
	}
	_, secret, err := e.auth.CreateAPIToken(ctx, a, "live test", scope, nil)
	if err != nil {
		e.t.Fatalf("create an API token: %v", err)
	}
	return secret
}

// apiJSON sends a request of the API with token as its bearer, and
// decodes the answer's JSON into out; it returns the status.
func (e *env) apiJSON(method, path, token, body string, out any) int {
	e.t.Helper()
	req, err := http.NewRequest(method, e.server.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		e.t.Fatalf("%s %s: %d, %v", method, path, res.StatusCode, err)
	}
	return res.StatusCode
}

// TestBrowserLiveOfflineAndBack: one browser loses the network, types,
// and comes back while the other typed meanwhile: nothing is lost, both
// converge with both texts.
func TestBrowserLiveOfflineAndBack(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	e.user("linus@example.com", "editor", "Engineering")
	doc := liveRunbook(e, grace)
	other := newSession(t, ctx)
	tabs := []context.Context{ctx, other}
	joinLive(t, ctx, e, "grace@example.com", doc.ID)
	joinLive(t, other, e, "linus@example.com", doc.ID)

	do(t, ctx, "Grace goes offline", offline(true),
		waitJS(`document.getElementById("live-status").textContent.startsWith("Connection lost")`))
	do(t, ctx, "Grace types offline", editorToEnd(), typeInEditor(" from Grace"))
	do(t, other, "Linus types meanwhile", editorToStart(), typeInEditor("Linus: "),
		waitJS(`window.quireEditor.unsent() === 0`))
	if n := read(t, ctx, "unsent", chromedp.Evaluate[int](`window.quireEditor.unsent()`)); n == 0 {
		t.Fatal("Grace's changes were confirmed while offline")
	}
	do(t, ctx, "Grace is back", offline(false))
	want := "Linus: Hello World from Grace"
	for _, tab := range tabs {
		do(t, tab, "converge", waitJS(`window.quireEditor.unsent() === 0 && `+liveEditorText+` === `+jsString(want)))
	}
}

// offline cuts the tab's network (the browser's offline event, and every
// request refused) or gives it back.
func offline(on bool) action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tgt, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tgt, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{Offline: on, DownloadThroughput: -1, UploadThroughput: -1}},
		}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tgt, network.OverrideNetworkState, network.OverrideNetworkStateParams{
			Offline: on, DownloadThroughput: -1, UploadThroughput: -1,
		})
		return err
	})
}

// waitPath waits until the tab shows the page at path, through the
// navigation that leads there (whose steps may fail while the page is
// replaced).
func waitPath(path string) action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		for {
			u, err := chromedp.Location()(ctx, tgt)
			if pu, perr := url.Parse(u); err == nil && perr == nil && pu.Path == path {
				if _, err := chromedp.Evaluate[bool](`document.readyState === "complete"`)(ctx, tgt); err == nil {
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s at %s: %w", path, u, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// TestBrowserLiveRestoreDraft: on a live page a kept draft's content is
// not put over the live text (it would be pushed as one change over
// everyone's work): a draft that differs only in its content is not
// offered, and restoring one brings back its other fields only.
func TestBrowserLiveRestoreDraft(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := liveRunbook(e, grace)
	joinLive(t, ctx, e, "grace@example.com", doc.ID)
	key := "quire.draft." + grace.ID + "/" + doc.ID
	// keep writes a draft as draft.js keeps one: the form's fields, with
	// some changed.
	keep := func(changed string) action {
		return chromedp.Evaluate[chromedp.Void](`(() => {
			const fields = {};
			for (const el of document.getElementById("doc-form").elements) {
				if (el.name && el.type !== "hidden" && el.type !== "submit" && el.type !== "button") { fields[el.name] = el.value; }
			}
			Object.assign(fields, ` + changed + `);
			localStorage.setItem(` + jsString(key) + `, JSON.stringify({v: 1, id: "d1", savedAt: Date.now(), base: "", baseVersion: "", fields}));
		})()`)
	}

	do(t, ctx, "a draft of the content alone", keep(`{content: "Old text"}`), chromedp.Reload(), waitVisible(theEditor),
		waitJS(`document.getElementById("live-status").textContent.startsWith("Live:")`))
	if shown := read(t, ctx, "notice", chromedp.Evaluate[bool](`!document.getElementById("draft-notice").hidden`)); shown {
		t.Error("a draft of the content alone is offered on a live page")
	}

	// Ctrl+S in live mode posts nothing: it says once everything is on
	// the server, and the page stays.
	do(t, ctx, "Ctrl+S", editorToEnd(), typeInEditor("!"), chromedp.KeyEvent("s", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		waitJS(`document.getElementById("live-status").textContent.startsWith("Saved live") && window.quireEditor.unsent() === 0`))
	if path := read(t, ctx, "path", chromedp.Evaluate[string](`location.pathname`)); path != "/documents/"+doc.ID+"/edit" {
		t.Errorf("Ctrl+S went to %s", path)
	}

	do(t, ctx, "a draft of the title and the content", keep(`{title: "Old title", content: "Old text"}`), chromedp.Reload(),
		waitVisible(id("restore-draft")), waitJS(`document.getElementById("live-status").textContent.startsWith("Live:")`),
		chromedp.Click(id("restore-draft")), waitNotVisible(id("draft-notice")))
	if title := read(t, ctx, "title", chromedp.Value(id("title"))); title != "Old title" {
		t.Errorf("the title is %q after restoring", title)
	}
	if got := read(t, ctx, "text", chromedp.Evaluate[string](liveEditorText+` + "|" + window.quireEditor.unsent()`)); got != "Hello World!|0" {
		t.Errorf("the live text and its unsent changes are %q after restoring", got)
	}
}

// TestBrowserLiveWithoutJavaScript: with live editing on, a browser
// without JavaScript edits in the classic form, whose Save writes the
// content as before.
func TestBrowserLiveWithoutJavaScript(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := liveRunbook(e, grace)
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword),
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tgt, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.Navigate(e.server.URL+"/documents/"+doc.ID+"/edit"), waitVisible(id("content")))
	if n := read(t, ctx, "editor", chromedp.Evaluate[int](`document.querySelectorAll(".cm-content").length`)); n != 0 {
		t.Fatal("the editor ran with JavaScript disabled")
	}
	do(t, ctx, "edit and save", chromedp.SetValue(id("content"), "Hello World, saved by the form"),
		chromedp.Click(id("save-document")), waitPath("/documents/"+doc.ID), waitVisible(id("doc-body")))
	if d := e.get(grace, doc.ID); d.Content != "Hello World, saved by the form" {
		t.Errorf("the stored content is %q", d.Content)
	}
}

// liveRunbook is the document the live browser tests edit: grace's
// "Hello World", seen by her department.
func liveRunbook(e *env, grace quire.User) *quire.Document {
	return e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("Hello World"),
		Visibility: documents.Some("department")})
}

// typeAtOnce types typed[i] into tabs[i], key by key, in every tab at
// once, each key waiting for its browser to take it.
func typeAtOnce(t *testing.T, tabs []context.Context, typed []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(tabs))
	for i, tab := range tabs {
		wg.Go(func() {
			for _, r := range typed[i] {
				if err := chromedp.Do(tab, chromedp.KeyEvent(string(r))); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("typing in tab %d: %v", i, err)
		}
	}
}
