package acceptance

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"quire"
	"quire/attachments"
	"quire/audit"
	"quire/auth"
	"quire/comments"
	"quire/documents"
	"quire/httpapi"
	"quire/idempotency"
	"quire/internal/sqlitetest"
	"quire/internal/syncbuf"
	"quire/internal/testclock"
	"quire/internal/testpass"
	"quire/live"
	"quire/notify"
	"quire/passkey"
	"quire/secretkey"
	"quire/share"
	"quire/sqlite"
	"quire/sso"
	"quire/transfer"
	"quire/web"
	"quire/webhook"
)

// testPassword is the password of every user env.user makes.
const testPassword = "correct horse battery staple 42"

// env is quire as the binary serves it (the API with the web application
// routed behind it) on a fresh SQLite file.
type env struct {
	t     testing.TB
	store quire.Store
	auth  *auth.Service
	docs  *documents.Service
	// users is the auth service env.user makes users through: auth's
	// configuration but for the hash of their password, cheapHash.
	users  *auth.Service
	server *httptest.Server
	clock  *testclock.Clock // shared by the services
	logs   *syncBuffer
	// xfer is the transfer service the API and the pages share, as in
	// quire serve.
	xfer *transfer.Service
	// shares are the share links, the API's and the pages'.
	shares *share.Service
	// comments is the comments service the pages use.
	comments *comments.Service
	// notify is the notifications service of the API and the pages.
	notify *notify.Service
	// live is the live editing server (withLive), nil without.
	live *live.Service
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer = syncbuf.Buffer

type envConfig struct {
	auth func(*auth.Config)
	http func(*httpapi.Config, *web.Config)
	sso  func(quire.Store, *auth.Service) *sso.Service // sso_test.go
	// sharesPerMinute is the per-address limit of share pages (the
	// default when 0).
	sharesPerMinute int
	// server configures the HTTP server (its timeouts, as quire serve
	// sets them).
	server func(*http.Server)
	// live serves live editing (package live) as quire serve does: the
	// web application's live route and the API's presence.
	live bool
}

// withLive turns live editing on (browser_live_test.go).
func withLive() envOption { return func(c *envConfig) { c.live = true } }

type envOption func(*envConfig)

func withAuth(f func(*auth.Config)) envOption { return func(c *envConfig) { c.auth = f } }

func withHTTP(f func(*httpapi.Config, *web.Config)) envOption {
	return func(c *envConfig) { c.http = f }
}

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	var cfg envConfig
	for _, o := range opts {
		o(&cfg)
	}
	// In memory (package tmpfs): these tests are about pages, not
	// durability. A copy of a file migrated once for the process: under the
	// race detector the migrations take seconds, a copy a fraction of that.
	db, err := sqlite.Open(context.Background(), sqlitetest.Migrated(t))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	clk := testclock.New(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	// The public URL is the test server's own, so that mailed links lead
	// back to it: take the listener before configuring the services.
	srv := httptest.NewUnstartedServer(nil)
	ac := auth.DefaultConfig()
	ac.Now = clk.Now
	ac.PublicURL = "http://" + srv.Listener.Addr().String()
	// These tests check what a sign-in answers, not how the server sheds
	// an overload: under -race on two busy cores, 20 hashes in a row
	// outlast the 5 s queue wait and would be answered 503.
	ac.HashQueueWait = 10 * time.Minute
	if cfg.auth != nil {
		cfg.auth(&ac)
	}
	as, err := auth.New(db, ac, logger)
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	uc := ac
	uc.HashPassword = func(string) (string, error) { return cheapHash(), nil }
	us, err := auth.New(db, uc, logger)
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	ds := documents.New(db, documents.Config{Now: clk.Now})
	// Every service once, shared by the API and the pages, as quire serve
	// builds them (cmd/quire).
	svc := httpapi.Services{
		Auth: as, Documents: ds,
		Audit:       audit.New(db, clk.Now),
		Idempotency: idempotency.New(db, idempotency.Config{Now: clk.Now}),
		Attachments: attachments.New(db, attachments.Config{Now: clk.Now}),
		Webhooks:    webhook.New(db, webhook.Config{Now: clk.Now}),
		Passkeys:    passkey.New(db, as, logger),
		Comments:    comments.New(db, comments.Config{Now: clk.Now}),
		Notify: notify.New(db, notify.Config{Now: clk.Now, Key: []byte("the notification test key"),
			PublicURL: ac.PublicURL}),
	}
	svc.Transfer = transfer.New(ds, svc.Attachments, ac.PublicURL)
	svc.Shares = share.New(db, ds, share.Config{Key: testKey(t), PublicURL: ac.PublicURL, Now: clk.Now, PerMinute: cfg.sharesPerMinute})
	hc := httpapi.Config{MaxBody: 2 << 20, Now: clk.Now}
	wc := web.Config{MaxBody: 2 << 20, Keys: svc.Idempotency, Audit: svc.Audit, Webhooks: svc.Webhooks,
		Passkeys: svc.Passkeys, Files: svc.Attachments, Transfer: svc.Transfer,
		Shares: svc.Shares, Comments: svc.Comments, OpenThreads: db, Notify: svc.Notify, Watches: db}
	var lv *live.Service
	if cfg.live {
		lv = live.New(db, ds, live.Config{Now: clk.Now, MaxText: 2 << 20}, logger)
		wc.Live, svc.Live = lv, lv
	}
	if cfg.http != nil {
		cfg.http(&hc, &wc)
	}
	if cfg.sso != nil {
		wc.SSO = cfg.sso(db, as)
	}
	shutdown := make(chan struct{})
	wc.Shutdown = shutdown
	pages, err := web.New(wc, as, ds, logger)
	if err != nil {
		t.Fatalf("web.New: %v", err)
	}
	api := httpapi.New(hc, db, svc, logger)
	srv.Config.Handler = api.Front(httpapi.Routes(api.API(), pages))
	if cfg.server != nil {
		cfg.server(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	if lv != nil {
		// Live connections are hijacked: the server's Close does not end
		// them. This cleanup runs before it, as in quire serve.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			lv.Shutdown(ctx)
		})
	}
	// The bell's streams end when the server stops, as in quire serve
	// (Close waits for every request, and a browser keeps a stream open):
	// this cleanup runs before Close.
	t.Cleanup(func() { close(shutdown) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", tail(logs.String(), 6000))
		}
	})
	return &env{t: t, store: db, auth: as, docs: ds, users: us, server: srv, clock: clk, logs: logs, xfer: wc.Transfer, shares: wc.Shares, comments: svc.Comments, notify: svc.Notify, live: lv}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// user creates an active user with testPassword, through the auth
// service (e.users: the same but for the hash), with cheapHash as its
// hash.
func (e *env) user(email, role, department string) quire.User {
	e.t.Helper()
	name, _, _ := strings.Cut(email, "@")
	u, _, err := e.users.CreateUser(context.Background(), auth.NewUser{
		Email: email, Name: strings.ToUpper(name[:1]) + name[1:], Role: role, Department: department, Password: testPassword,
	})
	if err != nil {
		e.t.Fatalf("create user %s: %v", email, err)
	}
	return *u
}

// cheapHash is testPassword's hash at a test's cost (testpass.Hash).
func cheapHash() string { return testpass.Hash(testPassword) }

// actor is u as the services see it when u calls.
func (e *env) actor(u quire.User) quire.Actor {
	e.t.Helper()
	fresh, err := e.store.UserByID(context.Background(), u.ID)
	if err != nil {
		e.t.Fatalf("user %s: %v", u.Email, err)
	}
	return quire.Actor{User: *fresh}
}

// document creates a document owned by u.
func (e *env) document(u quire.User, in documents.DocumentInput) *quire.Document {
	e.t.Helper()
	d, err := e.docs.Create(context.Background(), e.actor(u), in)
	if err != nil {
		e.t.Fatalf("create document: %v", err)
	}
	return d
}

// get reads a document as u.
func (e *env) get(u quire.User, id string) *quire.Document {
	e.t.Helper()
	d, err := e.docs.Get(context.Background(), e.actor(u), id)
	if err != nil {
		e.t.Fatalf("get document %s: %v", id, err)
	}
	return d
}

// browser is an HTTP client with its own cookies that does not follow
// redirects, so that tests see every answer.
type browser struct {
	e      *env
	client *http.Client
	header http.Header // sent with every request
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, header: http.Header{}, client: &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// page is an answer: status, headers, and the parsed body.
type page struct {
	Status int
	Header http.Header
	Body   string
	Doc    *html.Node
}

func (b *browser) do(method, path string, form url.Values, header http.Header) *page {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.e.server.URL+path, body)
	if err != nil {
		b.e.t.Fatalf("%s %s: %v", method, path, err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range b.header {
		req.Header[k] = v
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	p := &page{Status: resp.StatusCode, Header: resp.Header, Body: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		if p.Doc, err = html.Parse(bytes.NewReader(raw)); err != nil {
			b.e.t.Fatalf("%s %s: parse HTML: %v", method, path, err)
		}
	}
	return p
}

func (b *browser) get(path string) *page { b.e.t.Helper(); return b.do("GET", path, nil, nil) }

func (b *browser) post(path string, form url.Values) *page {
	b.e.t.Helper()
	return b.do("POST", path, form, nil)
}

// login signs in through the sign-in form.
func (b *browser) login(email, password string) {
	b.e.t.Helper()
	p := b.post("/login", url.Values{"email": {email}, "password": {password}})
	if p.Status != http.StatusSeeOther {
		b.e.t.Fatalf("sign in as %s: status %d, error %q", email, p.Status, p.text("page-error"))
	}
}

// cookie returns the session cookie the browser holds ("" for none).
func (b *browser) cookie() string {
	u, _ := url.Parse(b.e.server.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "auth_token" {
			return c.Value
		}
	}
	return ""
}

// HTML helpers: find elements by id or by a predicate, read text and
// attributes, and render an element's children back to HTML.

func (p *page) byID(id string) *html.Node {
	if p.Doc == nil {
		return nil
	}
	return find(p.Doc, func(n *html.Node) bool { return attr(n, "id") == id })
}

// text returns the trimmed text of the element with that id ("" when absent).
func (p *page) text(id string) string {
	n := p.byID(id)
	if n == nil {
		return ""
	}
	return textOf(n)
}

// value returns the value of the form control named name (a textarea's
// text, without the newline the parser drops).
func (p *page) value(name string) (string, bool) {
	n := find(p.Doc, func(n *html.Node) bool {
		return (n.Data == "input" || n.Data == "textarea" || n.Data == "select") && attr(n, "name") == name
	})
	if n == nil {
		return "", false
	}
	switch n.Data {
	case "textarea":
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			b.WriteString(c.Data)
		}
		return b.String(), true
	case "select":
		opt := find(n, func(o *html.Node) bool { return o.Data == "option" && hasAttr(o, "selected") })
		if opt == nil {
			return "", true
		}
		return attr(opt, "value"), true
	}
	return attr(n, "value"), true
}

// links returns the href of every link in the element with that id (the
// whole page when id is "").
func (p *page) links(id string) []string {
	root := p.Doc
	if id != "" {
		root = p.byID(id)
	}
	var out []string
	for _, n := range findAll(root, func(n *html.Node) bool { return n.Data == "a" && hasAttr(n, "href") }) {
		out = append(out, attr(n, "href"))
	}
	return out
}

func find(root *html.Node, pred func(*html.Node) bool) *html.Node {
	all := findAll(root, pred)
	if len(all) == 0 {
		return nil
	}
	return all[0]
}

func findAll(root *html.Node, pred func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if root == nil {
		return nil
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && pred(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// innerHTML renders the children of n.
func innerHTML(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		html.Render(&b, c)
	}
	return b.String()
}

// testKey is the server's secret key of the tests (secretkey.Load).
func testKey(t testing.TB) *secretkey.Key {
	k, err := secretkey.FromValue("the secret key of quire's tests")
	if err != nil {
		t.Fatal(err)
	}
	return k
}
