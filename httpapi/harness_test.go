package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"quire"
	"quire/attachments"
	"quire/audit"
	"quire/auth"
	"quire/comments"
	"quire/documents"
	"quire/idempotency"
	"quire/internal/sqlitetest"
	"quire/internal/testclock"
	"quire/internal/testpass"
	"quire/live"
	"quire/mail"
	"quire/notify"
	"quire/passkey"
	"quire/pgtest"
	"quire/postgres"
	"quire/secretkey"
	"quire/share"
	"quire/sqlite"
	"quire/transfer"
	"quire/web"
	"quire/webhook"
)

// testPassword is the password of every user made by env.user.
const testPassword = "correct horse battery staple 42"

// env is one running quire API on a fresh database, for HTTP tests.
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
	shares *share.Service
	logs   *bytes.Buffer // every log line of the server
	logMu  *sync.Mutex

	clients *sync.Map // source address → *http.Client
}

type envConfig struct {
	open     func(t testing.TB) quire.Store
	ownStore bool // open was set by withStore
	authCfg  func(*auth.Config)
	httpCfg  func(*serverConfig)
}

// serverConfig is what a test may change of the server newEnv builds: its
// HTTP configuration and that of the services built beside it, as the
// composition root (cmd/quire) builds them.
type serverConfig struct {
	Config
	MaxUpload int64          // attachments.Config.MaxUpload
	Webhooks  webhook.Config // its clock is the env's when nil
	Mail      *mail.Worker   // Services.Mail
	// Pages serves the web application beside the API, as quire serve
	// does (the public pages of share links are among them).
	Pages bool
	// SharesPerMinute is the per-address limit of share pages (the
	// default when 0).
	SharesPerMinute int
}

type envOption func(*envConfig)

// withAuthConfig changes the auth configuration before the services start.
func withAuthConfig(f func(*auth.Config)) envOption {
	return func(c *envConfig) { c.authCfg = f }
}

// withHTTPConfig changes the configuration of the server and its services
// before they start.
func withHTTPConfig(f func(*serverConfig)) envOption {
	return func(c *envConfig) { c.httpCfg = f }
}

// withStore runs the env on the store that open returns.
func withStore(open func(t testing.TB) quire.Store) envOption {
	return func(c *envConfig) { c.open, c.ownStore = open, true }
}

// backend is a store the HTTP tests run on.
type backend struct {
	name string
	open func(t testing.TB) quire.Store
}

// backends is the one table of stores: TestMain (main_test.go) runs every
// test of the package once on each, and newEnv opens the current one.
var backends = []backend{
	{"sqlite", openSQLite},
	{"postgres", openPostgres},
}

// current is the backend of the run in progress. Only TestMain sets it,
// between runs, when no test is running.
var current = backends[0]

// openSQLite opens a new SQLite file in memory (package tmpfs): these
// tests are about HTTP, not durability, which TestFullDisk and the sqlite
// package test on a real file system. The file is a copy of one that
// sqlite.Open migrated once for the process: under the race detector the
// migrations take seconds, a copy a fraction of that.
func openSQLite(t testing.TB) quire.Store {
	db, err := sqlite.Open(context.Background(), sqlitetest.Migrated(t))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openPostgres opens a database of its own for t on the server of package
// pgtest (a throwaway one, or QUIRE_TEST_POSTGRES_URL's), dropped when t
// ends: a copy of one that postgres.Open migrated once for the process,
// which costs a fraction of migrating each. pgtest skips t loudly when
// there is no PostgreSQL, or fails it with QUIRE_REQUIRE_POSTGRES=1.
func openPostgres(t testing.TB) quire.Store {
	db, err := postgres.Open(context.Background(), pgtest.StartFrom(t, "migrated", migratePostgres))
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// migratePostgres applies the migrations to the empty database at url.
func migratePostgres(ctx context.Context, url string) error {
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return err
	}
	db.Close()
	return nil
}

// syncWriter serialises writes to the log buffer.
type syncWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (s syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	if _, fuzz := t.(*testing.F); fuzz && current.name != "sqlite" {
		// Fuzzing is a search, not a check of the store: it runs on SQLite.
		t.Skipf("fuzz targets run on sqlite only, not on %s", current.name)
	}
	cfg := envConfig{open: current.open}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.ownStore {
		t.Logf("store: the test's own (withStore), in the %s run", current.name)
	} else {
		t.Logf("store: %s", current.name)
	}
	store := cfg.open(t)
	clk := testclock.New(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	logs, mu := &bytes.Buffer{}, &sync.Mutex{}
	logger := slog.New(slog.NewJSONHandler(syncWriter{mu, logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))

	ac := auth.DefaultConfig()
	ac.Now = clk.Now
	ac.PublicURL = "http://quire.test"
	// These tests check what a sign-in answers, not how the server sheds
	// an overload: under -race on two busy cores, 20 hashes in a row
	// outlast the 5 s queue wait and would be answered 503.
	ac.HashQueueWait = 10 * time.Minute
	if cfg.authCfg != nil {
		cfg.authCfg(&ac)
	}
	as, err := auth.New(store, ac, logger)
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	uc := ac
	uc.HashPassword = func(string) (string, error) { return cheapHash(), nil }
	us, err := auth.New(store, uc, logger)
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	ds := documents.New(store, documents.Config{Now: clk.Now})
	sc := serverConfig{Config: Config{MaxBody: 2 << 20, Now: clk.Now}}
	if cfg.httpCfg != nil {
		cfg.httpCfg(&sc)
	}
	if sc.Webhooks.Now == nil {
		sc.Webhooks.Now = clk.Now
	}
	files := attachments.New(store, attachments.Config{MaxUpload: sc.MaxUpload, Now: clk.Now})
	shares := share.New(store, ds, share.Config{Key: testKey(t), PublicURL: ac.PublicURL, Now: clk.Now, PerMinute: sc.SharesPerMinute})
	svc := Services{
		Auth: as, Documents: ds, Attachments: files, Mail: sc.Mail, Shares: shares,
		Audit:       audit.New(store, clk.Now),
		Idempotency: idempotency.New(store, idempotency.Config{Now: clk.Now}),
		Webhooks:    webhook.New(store, sc.Webhooks),
		Transfer:    transfer.New(ds, files, ac.PublicURL),
		Passkeys:    passkey.New(store, as, logger),
		Comments:    comments.New(store, comments.Config{Now: clk.Now}),
		Notify: notify.New(store, notify.Config{Now: clk.Now, Key: []byte("test unsubscribe key"),
			PublicURL: ac.PublicURL}),
		Live: live.New(store, ds, live.Config{Now: clk.Now}, logger),
	}
	api := New(sc.Config, store, svc, logger)
	var handler http.Handler = api
	if sc.Pages {
		pages, err := web.New(web.Config{Files: files, Shares: shares}, as, ds, logger)
		if err != nil {
			t.Fatalf("web.New: %v", err)
		}
		handler = api.Front(Routes(api.API(), pages))
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return &env{t: t, store: store, auth: as, docs: ds, users: us, server: srv, clock: clk, shares: shares, logs: logs, logMu: mu, clients: &sync.Map{}}
}

// withT returns the same env reporting to t (for subtests and fuzz
// targets, which must not report to their parent).
func (e *env) withT(t testing.TB) *env {
	c := *e
	c.t = t
	return &c
}

// logText returns everything the server has logged so far.
func (e *env) logText() string {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return e.logs.String()
}

// user creates an active user whose password is testPassword, through
// the auth service (e.users: the same but for the hash), with cheapHash
// as its hash.
func (e *env) user(email, role, department string) quire.User {
	e.t.Helper()
	u, _, err := e.users.CreateUser(context.Background(), auth.NewUser{
		Email: email, Name: nameOf(email), Role: role, Department: department, Password: testPassword,
	})
	if err != nil {
		e.t.Fatalf("create user %s: %v", email, err)
	}
	return *u
}

// cheapHash is testPassword's hash at a test's cost (testpass.Hash).
func cheapHash() string { return testpass.Hash(testPassword) }

// newSignedIn is a new env with a user of role for each of emails (in no
// department), and a session of the first: its token.
func newSignedIn(t testing.TB, role string, emails ...string) (*env, string) {
	t.Helper()
	e := newEnv(t)
	for _, email := range emails {
		e.user(email, role, "")
	}
	return e, e.login(emails[0])
}

func nameOf(email string) string {
	local, _, _ := strings.Cut(email, "@")
	if local == "" {
		return "User"
	}
	return strings.ToUpper(local[:1]) + local[1:]
}

// login signs in with testPassword and returns the access token.
func (e *env) login(email string) string {
	e.t.Helper()
	r := e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": email, "password": testPassword}))
	if r.Status != http.StatusOK {
		e.t.Fatalf("login %s: %d %s", email, r.Status, r.Body)
	}
	var body struct {
		AccessToken string `json:"accessToken"`
	}
	r.decode(e.t, &body)
	return body.AccessToken
}

type reqConfig struct {
	header   http.Header
	body     []byte
	hasBody  bool
	fromAddr string
	cookies  []*http.Cookie
	noCheck  bool
}

type reqOpt func(*reqConfig)

func bearer(token string) reqOpt {
	return func(c *reqConfig) { c.header.Set("Authorization", "Bearer "+token) }
}

// jsonBody sends v encoded as JSON with Content-Type application/json.
func jsonBody(v any) reqOpt {
	return func(c *reqConfig) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		c.body, c.hasBody = b, true
		c.header.Set("Content-Type", "application/json")
	}
}

// rawBody sends s as it is, with no Content-Type unless header() sets one.
func rawBody(s string) reqOpt {
	return func(c *reqConfig) { c.body, c.hasBody = []byte(s), true }
}

func header(k, v string) reqOpt { return func(c *reqConfig) { c.header.Set(k, v) } }

func cookie(name, value string) reqOpt {
	return func(c *reqConfig) { c.cookies = append(c.cookies, &http.Cookie{Name: name, Value: value}) }
}

// fromAddr sends the request from another loopback address (127.0.0.0/8).
func fromAddr(addr string) reqOpt { return func(c *reqConfig) { c.fromAddr = addr } }

// noSpecCheck skips the OpenAPI check (for deliberately malformed requests
// whose answers are checked by hand).
func noSpecCheck() reqOpt { return func(c *reqConfig) { c.noCheck = true } }

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// wantJSON fails the test unless r has status want, then decodes its body
// strictly (an unknown field fails too) into v.
func (e *env) wantJSON(r *resp, want int, v any) {
	e.t.Helper()
	if r.Status != want {
		e.t.Fatalf("status %d, want %d; body %s", r.Status, want, r.Body)
	}
	strictDecode(e.t, r.Body, v)
}

func (e *env) client(from string) *http.Client {
	if from == "" {
		from = "127.0.0.1"
	}
	if c, ok := e.clients.Load(from); ok {
		return c.(*http.Client)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c := &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	actual, _ := e.clients.LoadOrStore(from, c)
	return actual.(*http.Client)
}

// do sends a request to the server and checks the answer against the
// OpenAPI document.
func (e *env) do(method, path string, opts ...reqOpt) *resp {
	e.t.Helper()
	c := reqConfig{header: http.Header{}}
	for _, o := range opts {
		o(&c)
	}
	var body io.Reader
	if c.hasBody {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequest(method, e.server.URL+path, body)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	req.Header = c.header
	for _, ck := range c.cookies {
		req.AddCookie(ck)
	}
	res, err := e.client(c.fromAddr).Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	if !c.noCheck {
		checkResponse(e.t, req, res.StatusCode, res.Header, b)
	}
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// wantError checks that r is an error answer with that status and code, in
// the contract's shape.
func (e *env) wantError(r *resp, status int, code string) map[string]any {
	e.t.Helper()
	if r.Status != status {
		e.t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	var body map[string]any
	r.decode(e.t, &body)
	if body["code"] != code {
		e.t.Fatalf("code %v, want %s; body %s", body["code"], code, r.Body)
	}
	if m, ok := body["message"].(string); !ok || m == "" {
		e.t.Fatalf("error without message: %s", r.Body)
	}
	return body
}

// trustedProxies parses CIDRs for withHTTPConfig.
func trustedProxies(cidrs ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cidrs {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}

// testKey is the server's secret key of the tests (secretkey.Load).
func testKey(t testing.TB) *secretkey.Key {
	k, err := secretkey.FromValue("the secret key of quire's tests")
	if err != nil {
		t.Fatal(err)
	}
	return k
}
