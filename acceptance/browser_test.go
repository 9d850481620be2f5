package acceptance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/documents"
	"quire/internal/notice"
	"quire/mail"
	"quire/mail/mailtest"
)

// Browser tests drive Debian's Chromium, headless, through chromedp. Without
// Chromium they are skipped, loudly, unless QUIRE_REQUIRE_BROWSER=1 (as in
// CI), which makes a missing browser a failure.

// updateScreenshots makes the browser tests write their screenshots where
// the README shows them (go test ./acceptance -run Browser -update-screenshots, or
// QUIRE_UPDATE_SCREENSHOTS=1). Without it they go to each test's temporary
// directory: a test run leaves the tracked files as they were (PNGs are
// never taken twice alike, and every later build would say -dirty).
var updateScreenshots = flag.Bool("update-screenshots", os.Getenv("QUIRE_UPDATE_SCREENSHOTS") == "1",
	"write the browser tests' screenshots into ../screenshots, which the README shows")

// screenshotDir is where the README's screenshots live.
const screenshotDir = "../screenshots"

// screenshotDirKey is the key, in a browser context, of the directory that
// screenshot writes to.
type screenshotDirKey struct{}

var browserNotice sync.Once

func chromiumPath() string {
	if p := os.Getenv("QUIRE_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// newChrome returns a context for a tab of its own for one test, in a
// browser context of its own (its own cookies and storage, as a private
// window has), limited to the test's time budget, in the headless Chromium
// that the tests of this process share: it starts on first use and stops
// in TestMain. The tab and its browser context are closed when the test
// ends. newChrome makes the test parallel, but no more than browserTabs
// tests have a tab at once, and a test's 90 s start when it has its tab:
// tabs without a bound, rendering side by side on a loaded machine, overran
// the budget.
func newChrome(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if _, err := os.Stat(path); err != nil {
		msg := "Chromium not found at " + path + " (install Debian's chromium package, or set QUIRE_CHROMIUM)"
		if os.Getenv("QUIRE_REQUIRE_BROWSER") == "1" {
			t.Fatalf("QUIRE_REQUIRE_BROWSER=1: %s", msg)
		}
		msg = "Chromium NOT AVAILABLE: browser tests SKIPPED (" + msg + "); set QUIRE_REQUIRE_BROWSER=1 to make this a failure."
		// t.Skip is only visible with -v: say it once where everyone looks.
		browserNotice.Do(func() { notice.Print(msg) })
		t.Skip(msg)
	}
	t.Parallel()
	browserTabs <- struct{}{}
	t.Cleanup(func() { <-browserTabs })
	browserCtx, err := sharedChrome()
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	tab, cancelTab := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelTab)
	// A tab opened beside the browser's first one has a taller viewport
	// (1280x773) than that first tab had (1280x717), where each test ran
	// when each started its own Chromium: keep the pages and the
	// screenshots the README shows as they were.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 717), quietTab()); err != nil {
		t.Fatalf("open a tab in a new browser context: %v", err)
	}
	ctx, cancel := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(cancel)
	dir := t.TempDir()
	if *updateScreenshots {
		dir = screenshotDir
	}
	return context.WithValue(ctx, screenshotDirKey{}, dir)
}

// browserTabs holds a place for each browser test that has a tab open:
// two at a time keep both cores of a small machine busy without starving
// either tab.
var browserTabs = make(chan struct{}, 2)

// chrome is the Chromium of this test process, started by sharedChrome.
var chrome struct {
	once    sync.Once
	ctx     context.Context // the browser's first tab, which stays open
	err     error
	stop    func() // ends the browser and removes its profile
	dataDir string
}

// sharedChrome starts Chromium once per test process and returns the
// context of its first tab, which tests open tabs beside (newChrome).
func sharedChrome() (context.Context, error) {
	chrome.once.Do(func() {
		dir, err := os.MkdirTemp("", "quire-chromium-")
		if err != nil {
			chrome.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(chromiumPath()),
			chromedp.Flag("headless", true),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true),
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("hide-scrollbars", true),
			chromedp.Flag("mute-audio", true),
			chromedp.Flag("password-store", "basic"),
			chromedp.Flag("use-mock-keychain", true),
			chromedp.Flag("lang", "en-GB"),
			chromedp.Flag("font-render-hinting", "none"),
			// Less work per test that no test looks at: no smooth
			// scrolling, no motion, no services that talk to Google,
			// no translation or back-forward cache, no crash reporter.
			chromedp.Flag("disable-smooth-scrolling", true),
			chromedp.Flag("force-prefers-reduced-motion", true),
			//
			// One renderer process per browser context and site, as
			// long as the tab lives, rather than a new one at most
			// navigations: without site isolation, without a new
			// document host and browsing instance for each navigation
			// (RenderDocument, ProactivelySwapBrowsingInstance) and
			// without a spare renderer started ahead of each. The tests'
			// pages are all of one origin, the server's, so isolation
			// between sites has nothing to separate; a page sees the same
			// document, storage and cookies. Six browser tests started
			// 85 renderers with them, 36 without, and Chromium's CPU
			// went from 37.8 to 30.6 s.
			//
			// Nor the browser's own pages that headless Chromium (156)
			// opens in every new window, a new browser context's tab
			// included, though no one sees them: the omnibox's popup as
			// two WebUI pages (chrome://omnibox-popup.top-chrome, and
			// its "AI mode" variant), each in a renderer of its own, and
			// top-chrome WebUI preloaded ahead of use. They were two of
			// the three renderers of each test's tab (150 renderers for
			// the package, 99 without; its Chromium's CPU 128-144 s ->
			// 76 s).
			chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"+
				"BackForwardCache,CalculateNativeWinOcclusion,InterestFeedContentSuggestions,"+
				"CertificateTransparencyComponentUpdater,AutofillServerCommunication,PaintHolding,"+
				"SpareRendererForSitePerProcess,ProactivelySwapBrowsingInstance,RenderDocument,"+
				"WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup,PreloadTopChromeWebUI"),
			chromedp.Flag("disable-site-isolation-trials", true),
			chromedp.Flag("disable-breakpad", true),
			chromedp.Flag("disable-client-side-phishing-detection", true),
			chromedp.Flag("disable-default-apps", true),
			chromedp.Flag("disable-domain-reliability", true),
			chromedp.Flag("disable-software-rasterizer", true),
			chromedp.Flag("metrics-recording-only", true),
			chromedp.Flag("no-pings", true),
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1280, 860),
			chromedp.Env("TZ=UTC"),
		}
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		// The browser outlives every test, so its messages cannot go to
		// one test's log: the routine ones are dropped, errors go to
		// standard error (shown when the package fails, or with -v).
		browserCtx, cancelBrowser := chromedp.NewContext(allocCtx,
			chromedp.WithLogf(func(string, ...any) {}), chromedp.WithErrorf(log.Printf))
		chrome.stop = func() {
			cancelBrowser()
			cancelAlloc()
			os.RemoveAll(dir)
		}
		if err := chromedp.Do(browserCtx); err != nil {
			chrome.stop()
			chrome.stop, chrome.err = nil, err
			return
		}
		chrome.ctx = browserCtx
	})
	return chrome.ctx, chrome.err
}

// stopChrome ends the shared Chromium, if it was started. TestMain calls it.
func stopChrome() {
	if chrome.stop != nil {
		chrome.stop()
	}
}

// newSession opens a tab with its own cookies (a new browser context) in
// the same browser: a second person at another computer.
func newSession(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	c, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(c, quietTab()); err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	return c
}

type action = chromedp.Action[chromedp.Void]

// quietTab turns off, in a tab that chromedp has just opened, the
// DevTools domains chromedp enables on every tab and that no test reads:
// CSS (the renderer reports every style sheet it parses), Network (an
// event for each request and response; the tests that emulate a lost
// connection enable it again for themselves) and Log (console entries).
// Each event costs Chromium's renderer and browser process, and this
// process under the race detector, CPU to send and decode. DOM, Page and
// Runtime, which chromedp's queries, navigations and scripts rely on,
// stay on.
func quietTab() action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		for _, domain := range []string{"CSS", "Network", "Log"} {
			if err := tgt.Call(ctx, domain+".disable", cdp.Empty{}, nil); err != nil {
				return fmt.Errorf("%s.disable: %w", domain, err)
			}
		}
		return nil
	})
}

// do runs browser steps, failing the test with the step's name.
func do(t *testing.T, ctx context.Context, step string, steps ...action) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// read runs one browser action and returns its value.
func read[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// formValue reads the value of the form field with the id name by script,
// not through the node chromedp found: under load that node was sometimes
// gone from chromedp's tree by the time its value was read ("No node with
// given id found", while the editor's script was changing the form around
// the textarea). Call it once the field is known to be there.
func formValue(name string) chromedp.Action[string] {
	return chromedp.Evaluate[string](`document.getElementById(` + strconv.Quote(name) + `).value`)
}

// screenshot saves the viewport as name in screenshots/ with
// -update-screenshots. Without it, no one looks at the picture (it goes
// to the test's temporary directory, removed at its end): the capture is
// still taken, from the same surface, but of a corner of the viewport in
// a cheap JPEG, not the whole viewport in PNG, whose encoding and transfer
// cost Chromium and the test (under the race detector) CPU for nothing.
func screenshot(name string) action {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		capture := chromedp.CaptureScreenshot()
		if !*updateScreenshots {
			capture = func(ctx context.Context, tgt *chromedp.Target) ([]byte, error) {
				q := int64(10)
				r, err := cdp.Call(ctx, tgt, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
					FromSurface: &[]bool{true}[0], Format: cdppage.CaptureScreenshotFormatJpeg, Quality: &q,
					Clip: &cdppage.Viewport{Width: 64, Height: 64, Scale: 1},
				})
				if err != nil {
					return nil, err
				}
				return r.Data, nil
			}
		}
		png, err := capture(ctx, tgt)
		if err != nil {
			return err
		}
		dir, _ := ctx.Value(screenshotDirKey{}).(string)
		if dir == "" {
			return errors.New("screenshot: the context does not come from newChrome")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), png, 0o644)
	})
}

// pollEvery is how often the browser tests' waits look again: a query
// (waitVisible and its kin) asks Chromium again, a poll (poll) runs its
// expression again in the page. chromedp's defaults are 5 ms for a query,
// a round trip of several CDP calls each time, and every animation frame
// for a poll, which makes the page render frames at 60 per second while
// it waits: both burnt CPU, on the test's side under the race detector and
// in Chromium, that the other tests of the machine wanted. 25 ms is below
// what a person notices and a fifth of the query traffic.
const pollEvery = 25 * time.Millisecond

// waitVisible is chromedp.WaitVisible, looking again every pollEvery.
func waitVisible[S chromedp.Selectable](sel S, opts ...chromedp.QueryOption) action {
	return chromedp.WaitVisible(sel, append(opts, chromedp.RetryInterval(pollEvery))...)
}

// waitNotVisible is chromedp.WaitNotVisible, looking again every pollEvery.
func waitNotVisible[S chromedp.Selectable](sel S, opts ...chromedp.QueryOption) action {
	return chromedp.WaitNotVisible(sel, append(opts, chromedp.RetryInterval(pollEvery))...)
}

// waitReady is chromedp.WaitReady, looking again every pollEvery.
func waitReady[S chromedp.Selectable](sel S, opts ...chromedp.QueryOption) action {
	return chromedp.WaitReady(sel, append(opts, chromedp.RetryInterval(pollEvery))...)
}

// waitEnabled is chromedp.WaitEnabled, looking again every pollEvery.
func waitEnabled[S chromedp.Selectable](sel S, opts ...chromedp.QueryOption) action {
	return chromedp.WaitEnabled(sel, append(opts, chromedp.RetryInterval(pollEvery))...)
}

// poll is chromedp.Poll, running expression every pollEvery rather than at
// every animation frame.
func poll[T any](expression string, opts ...chromedp.PollOption) chromedp.Action[T] {
	return chromedp.Poll[T](expression, append(opts, chromedp.WithPollingInterval(pollEvery))...)
}

func id(s string) chromedp.ID   { return chromedp.ID(s) }
func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// signIn fills the sign-in form and waits for the documents page.
func signIn(e *env, email, password string) action {
	return chromedp.Steps(
		chromedp.Navigate(e.server.URL+"/login"),
		waitVisible(id("email")),
		chromedp.SendKeys(id("email"), email),
		chromedp.SendKeys(id("password"), password),
		chromedp.Click(id("sign-in")),
		waitVisible(id("result-count")),
	)
}

// signInByCookie signs in as signIn does, but through the sign-in form by
// the harness's own HTTP client, and gives the session cookie it got to the
// tab, which then opens the documents page: one page load in Chromium
// rather than two (the sign-in page, then the documents page the form
// leads to), where Chromium's CPU went. The tests about signing in, and
// those that look at the session a browser made, use signIn.
func signInByCookie(e *env, email, password string) action {
	return chromedp.Steps(
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			b := e.browser()
			b.login(email, password)
			token := b.cookie()
			if token == "" {
				return fmt.Errorf("sign in as %s: no session cookie", email)
			}
			_, err := cdp.Call(ctx, tgt, network.SetCookie, network.SetCookieParams{
				Name: "auth_token", Value: token, URL: e.server.URL + "/", Path: "/",
				HTTPOnly: &[]bool{true}[0], SameSite: network.CookieSameSiteLax,
			})
			return err
		}),
		chromedp.Navigate(e.server.URL+"/"),
		waitVisible(id("result-count")),
	)
}

// demoEnv is an env with the demo's people and documents.
func demoEnv(t *testing.T) (*env, map[string]quire.User) {
	e := newEnv(t)
	people := map[string]quire.User{
		"ada":   e.user("ada@example.com", "admin", "Engineering"),
		"grace": e.user("grace@example.com", "editor", "Engineering"),
		"linus": e.user("linus@example.com", "editor", "Research"),
		"alan":  e.user("alan@example.com", "viewer", "Engineering"),
	}
	users := []quire.User{people["ada"], people["grace"], people["linus"], people["alan"]}
	if err := documents.SeedDemo(context.Background(), e.store, users, e.clock.Now()); err != nil {
		t.Fatalf("seed demo: %v", err)
	}
	return e, people
}

func TestBrowserEditingJourney(t *testing.T) {
	ctx := newChrome(t)
	e, people := demoEnv(t)
	grace := people["grace"]

	do(t, ctx, "open the sign-in page",
		chromedp.Navigate(e.server.URL+"/"),
		waitVisible(id("sign-in")),
		screenshot("sign-in.png"),
	)
	do(t, ctx, "sign in", signIn(e, "grace@example.com", testPassword), screenshot("documents.png"))

	do(t, ctx, "search",
		chromedp.SetValue(id("search"), "incident"),
		chromedp.Click(id("search-button")),
		waitVisible(id("clear-filters")),
	)
	titles := read(t, ctx, "result titles", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#documents h2')).map(h => h.textContent.trim())`))
	if len(titles) == 0 || titles[0] != "Incident response runbook" {
		t.Fatalf("search results %q, want the runbook first", titles)
	}

	do(t, ctx, "open the first result",
		chromedp.Click(css("#documents h2 a")),
		waitVisible(id("doc-body")),
		screenshot("document.png"),
	)
	docID := strings.TrimPrefix(read(t, ctx, "location", chromedp.Location()), e.server.URL+"/documents/")
	before := e.get(grace, docID)

	do(t, ctx, "open the editor", chromedp.Click(id("edit-document")), waitVisible(id("doc-form")))
	if content := read(t, ctx, "editor content", formValue("content")); content != before.Content {
		t.Fatalf("the editor holds %q, want the document's content %q", content, before.Content)
	}
	mine := strings.Replace(before.Content, "within 5 minutes", "within 3 minutes", 1)
	do(t, ctx, "edit the first step", replaceInEditor("within 5 minutes", "within 3 minutes"), screenshot("edit.png"))
	if got := read(t, ctx, "the form's content", formValue("content")); got != mine {
		t.Fatalf("after typing in the editor the form holds %q, want %q", got, mine)
	}

	// Meanwhile Linus, in another browser, changes the last line and saves.
	other := newSession(t, ctx)
	do(t, other, "second session opens the editor",
		signInByCookie(e, "linus@example.com", testPassword),
		chromedp.Navigate(e.server.URL+"/documents/"+docID+"/edit"),
		waitVisible(id("doc-form")),
	)
	theirs := strings.Replace(read(t, other, "second session content", formValue("content")),
		"the postmortem starts from it.", "the postmortem starts from it. Keep it in the channel.", 1)
	do(t, other, "second session saves",
		selectInEditor("the postmortem starts from it."),
		chromedp.KeyEvent(kb.ArrowRight), // the cursor after the sentence
		typeInEditor(" Keep it in the channel."),
		chromedp.Click(id("save-document")),
		waitVisible(css(".flash")),
	)
	if flash := read(t, other, "flash", chromedp.Text(css(".flash"))); flash != "Changes saved." {
		t.Fatalf("second session: flash %q", flash)
	}

	do(t, ctx, "the stale save shows the conflict",
		chromedp.Click(id("save-document")),
		waitVisible(id("conflict")),
		screenshot("conflict.png"),
	)
	if status := read(t, ctx, "merge status", chromedp.Text(id("merge-status"))); !strings.Contains(status, "touch different lines") {
		t.Fatalf("merge status %q", status)
	}
	if got := e.get(grace, docID); got.Content != theirs {
		t.Fatalf("the conflict saved something: content %q", got.Content)
	}
	do(t, ctx, "save the merged version", chromedp.Click(id("save-document")), waitVisible(id("doc-body")))
	flash := read(t, ctx, "flash", chromedp.Text(css(".flash")))
	merged := strings.Replace(theirs, "within 5 minutes", "within 3 minutes", 1)
	after := e.get(grace, docID)
	if diff := cmp.Diff([]any{"Changes saved.", merged, before.Version + 2}, []any{flash, after.Content, after.Version}); diff != "" {
		t.Fatalf("after the merge (-want +got):\n%s", diff)
	}

	do(t, ctx, "compare version 1 with the current one",
		chromedp.Click(id("versions-link")),
		waitVisible(id("versions")),
		screenshot("versions.png"),
		chromedp.Click(css(`a[href$="/versions/1/diff"]`)),
		waitVisible(css("table.diff")),
		screenshot("version-diff.png"),
	)
	v1, err := e.docs.Version(context.Background(), e.actor(grace), docID, 1)
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "restore version 1", chromedp.Click(id("restore-version")), waitVisible(id("doc-body")))
	flash = read(t, ctx, "flash", chromedp.Text(css(".flash")))
	restored := e.get(grace, docID)
	if diff := cmp.Diff([]any{"Version restored: it is now the current version.", v1.Content, after.Version + 1},
		[]any{flash, restored.Content, restored.Version}); diff != "" {
		t.Fatalf("after the restore (-want +got):\n%s", diff)
	}

	do(t, ctx, "open the folders", chromedp.Navigate(e.server.URL+"/folders"), waitVisible(id("folders")))
	do(t, ctx, "rename a folder on its own page",
		chromedp.Click(css(`#folders a.folder-name[href^="/folders/"]:not([href="/folders/"])`)),
		waitVisible(id("folder-form")),
		chromedp.SetValue(id("edit-name"), "Renamed folder"),
		chromedp.Click(id("save-folder")),
		waitVisible(css(".flash")),
	)
	flash = read(t, ctx, "flash", chromedp.Text(css(".flash")))
	title := read(t, ctx, "folder title", chromedp.Text(css("h1.folder-title")))
	if diff := cmp.Diff([]string{"Folder saved.", "Renamed folder"}, []string{flash, title}); diff != "" {
		t.Errorf("after renaming a folder (-want +got):\n%s", diff)
	}

	do(t, ctx, "sign out", chromedp.Click(id("sign-out")), waitVisible(id("sign-in")))
	flash = read(t, ctx, "flash", chromedp.Text(css(".flash")))
	do(t, ctx, "open the documents again", chromedp.Navigate(e.server.URL+"/documents"), waitVisible(id("sign-in")))
	location := read(t, ctx, "location", chromedp.Location())
	if diff := cmp.Diff([]string{"You have signed out.", e.server.URL + "/login?next=%2Fdocuments"}, []string{flash, location}); diff != "" {
		t.Errorf("after signing out (-want +got):\n%s", diff)
	}
}

// mailOut delivers e's outbox to an SMTP server of the test's own, which
// it returns, until the test ends.
func (e *env) mailOut(t *testing.T) *mailtest.Server {
	smtp := mailtest.NewServer(t)
	logger := slog.New(slog.NewTextHandler(e.logs, nil))
	sender, err := mail.NewSender(smtp.URL, "", "", logger)
	if err != nil {
		t.Fatal(err)
	}
	workerCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		mail.NewWorker(e.store, sender, logger, mail.WithClock(e.clock.Now), mail.WithPollInterval(20*time.Millisecond)).Run(workerCtx)
	}()
	t.Cleanup(func() { stop(); <-done })
	return smtp
}

func TestBrowserPasswordReset(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	e.user("grace@example.com", "editor", "Engineering")

	smtp := e.mailOut(t)

	do(t, ctx, "ask for a reset link",
		chromedp.Navigate(e.server.URL+"/login"),
		waitVisible(css(`a[href="/forgot-password"]`)),
		chromedp.Click(css(`a[href="/forgot-password"]`)),
		waitVisible(id("email")),
		chromedp.SendKeys(id("email"), "Grace@Example.com"),
		chromedp.Click(id("send-link")),
		waitVisible(id("forgot-sent")),
	)
	if sent := read(t, ctx, "answer", chromedp.Text(id("forgot-sent"))); sent != "If an account exists for that email, a reset link has been sent." {
		t.Fatalf("answer %q", sent)
	}
	msgs := smtp.Wait(t, 1, 20*time.Second)
	parsed, err := msgs[0].Parse()
	if err != nil {
		t.Fatal(err)
	}
	links := parsed.Links()
	if len(links) == 0 || !strings.HasPrefix(links[0], e.server.URL+"/reset-password?token=") {
		t.Fatalf("mail to %v links %q", msgs[0].To, links)
	}

	const newPassword = "a completely new passphrase, long enough"
	do(t, ctx, "open the mailed link",
		chromedp.Navigate(links[0]),
		waitVisible(id("password")),
		screenshot("reset-password.png"),
	)
	// The page's script takes the token out of the address bar.
	search := read(t, ctx, "address", poll[string](`window.location.search === "" ? "stripped" : ""`))
	do(t, ctx, "choose a new password",
		chromedp.SendKeys(id("password"), newPassword),
		chromedp.SendKeys(id("confirm"), newPassword),
		chromedp.Click(id("set-password")),
		waitVisible(id("sign-in")),
	)
	flash := read(t, ctx, "flash", chromedp.Text(css(".flash")))
	if diff := cmp.Diff([]string{"stripped", "Your password has been reset. Sign in with your new password."}, []string{search, flash}); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	do(t, ctx, "sign in with the new password", signIn(e, "grace@example.com", newPassword))
}

func TestBrowserScriptPayloadsDoNotRun(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	const payload = `<script>window.__pwned = 1; alert(1)</script>` +
		`<img src="/nope.png" onerror="window.__pwned = 2; alert(2)">` +
		`<svg onload="window.__pwned = 3"></svg>` +
		`<a id="js-link" href="javascript:window.__pwned = 4">click</a>` +
		`<iframe src="javascript:parent.__pwned = 5"></iframe>`
	var ids []string
	for _, ct := range []string{"html", "markdown"} {
		d := e.document(grace, documents.DocumentInput{
			Title:       documents.Some(`<img src=x onerror="window.__pwned = 6"> ` + ct),
			Summary:     documents.Some(`<script>window.__pwned = 7</script>`),
			ContentType: documents.Some(ct),
			Content:     documents.Some("Before\n\n" + payload + "\n\n[link](javascript:window.__pwned=8)\n\nAfter"),
			Visibility:  documents.Some("public"),
		})
		ids = append(ids, d.ID)
	}

	// Any alert that ran would open a dialog: count them, and close them so
	// that the page goes on.
	var dialogs atomic.Int32
	events := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for _, err := range events {
			if err != nil {
				return
			}
			dialogs.Add(1)
			chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))
	for _, docID := range ids {
		do(t, ctx, "open "+docID,
			chromedp.Navigate(e.server.URL+"/documents/"+docID),
			waitVisible(id("doc-body")),
		)
		// The load event waits for images, so an onerror would have run.
		read(t, ctx, "page loaded", poll[bool](`document.readyState === "complete"`))
		ran := read(t, ctx, "flag", chromedp.Evaluate[bool](`window.__pwned !== undefined`))
		dangerous := read(t, ctx, "dangerous elements", chromedp.Evaluate[int](
			`document.querySelectorAll('#doc-body script, #doc-body iframe, #doc-body svg').length +
			Array.from(document.querySelectorAll('body *')).filter(el => Array.from(el.attributes).some(a => a.name.startsWith('on'))).length +
			Array.from(document.querySelectorAll('a[href]')).filter(a => a.getAttribute('href').trim().toLowerCase().startsWith('javascript:')).length`))
		title := read(t, ctx, "title", chromedp.Text(id("doc-title")))
		got := []any{ran, dangerous, dialogs.Load(), strings.HasPrefix(title, "<img src=x onerror=")}
		if diff := cmp.Diff([]any{false, 0, int32(0), true}, got); diff != "" {
			t.Errorf("document %s: [ran, dangerous elements, dialogs, title shown as text] (-want +got):\n%s", docID, diff)
		}
	}
}
