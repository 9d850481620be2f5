package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"quire"
	"quire/attachments"
	"quire/audit"
	"quire/auth"
	"quire/comments"
	"quire/documents"
	"quire/httpapi"
	"quire/idempotency"
	"quire/internal/testclock"
	"quire/internal/testpass"
	"quire/internal/tmpfs"
	"quire/live"
	"quire/live/changeset"
	"quire/notify"
	"quire/passkey"
	"quire/sqlite"
	"quire/transfer"
	"quire/web"
	"quire/webhook"
)

// hangGuard bounds every wait for something that must happen: it turns a
// hang into a failure, on however loaded a machine, and is no measure.
const hangGuard = time.Minute

const testPassword = "correct horse battery staple 42"

// env is the live server in the web application, with the API's presence
// route, on a SQLite file, as quire serve composes them.
type env struct {
	t      testing.TB
	store  *sqlite.DB
	auth   *auth.Service
	users  *auth.Service
	docs   *documents.Service
	live   *live.Service
	clock  *testclock.Clock
	server *httptest.Server
	logs   *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func migrate(path string) error {
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return err
	}
	return db.Close()
}

// newEnv starts the server; cfg adjusts the live server's configuration
// (its clock is the env's).
func newEnv(t testing.TB, cfg func(*live.Config)) *env {
	t.Helper()
	db, err := sqlite.Open(context.Background(), tmpfs.CopyOf(t, "migrated", "quire.db", migrate))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := testclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ac := auth.DefaultConfig()
	ac.Now = clk.Now
	ac.HashQueueWait = 10 * time.Minute
	as, err := auth.New(db, ac, logger)
	if err != nil {
		t.Fatal(err)
	}
	uc := ac
	uc.HashPassword = func(string) (string, error) { return testpass.Hash(testPassword), nil }
	us, err := auth.New(db, uc, logger)
	if err != nil {
		t.Fatal(err)
	}
	ds := documents.New(db, documents.Config{Now: clk.Now})
	lc := live.Config{Now: clk.Now, Tick: 10 * time.Millisecond, CursorEvery: 10 * time.Millisecond}
	if cfg != nil {
		cfg(&lc)
	}
	lv := live.New(db, ds, lc, logger)
	pages, err := web.New(web.Config{MaxBody: 2 << 20, Live: lv}, as, ds, logger)
	if err != nil {
		t.Fatal(err)
	}
	svc := httpapi.Services{Auth: as, Documents: ds, Live: lv,
		Audit:       audit.New(db, clk.Now),
		Idempotency: idempotency.New(db, idempotency.Config{Now: clk.Now}),
		Attachments: attachments.New(db, attachments.Config{Now: clk.Now}),
		Webhooks:    webhook.New(db, webhook.Config{Now: clk.Now}),
		Passkeys:    passkey.New(db, as, logger),
		Comments:    comments.New(db, comments.Config{Now: clk.Now}),
		Notify:      notify.New(db, notify.Config{Now: clk.Now, Key: []byte("k"), PublicURL: "http://docs.example.test"}),
	}
	svc.Transfer = transfer.New(ds, svc.Attachments, "http://docs.example.test")
	api := httpapi.New(httpapi.Config{MaxBody: 2 << 20, Now: clk.Now}, db, svc, logger)
	srv := httptest.NewServer(api.Front(httpapi.Routes(api.API(), pages)))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		lv.Shutdown(ctx)
		srv.Close()
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", tail(logs.String(), 8000))
		}
	})
	return &env{t: t, store: db, auth: as, users: us, docs: ds, live: lv, clock: clk, server: srv, logs: logs}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// user creates an active user with role and signs it in: the user and its
// session cookie.
func (e *env) user(email, role string) (quire.User, string) {
	e.t.Helper()
	name, _, _ := strings.Cut(email, "@")
	u, _, err := e.users.CreateUser(context.Background(), auth.NewUser{
		Email: email, Name: strings.ToUpper(name[:1]) + name[1:], Role: role, Password: testPassword})
	if err != nil {
		e.t.Fatal(err)
	}
	sess, err := e.auth.Login(context.Background(), quire.RequestInfo{IP: "192.0.2.1"}, email, testPassword, "")
	if err != nil {
		e.t.Fatal(err)
	}
	return *u, sess.Token
}

func (e *env) actor(u quire.User) quire.Actor {
	e.t.Helper()
	fresh, err := e.store.UserByID(context.Background(), u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return quire.Actor{User: *fresh}
}

// document creates a public document of u's with content.
func (e *env) document(u quire.User, content string) *quire.Document {
	e.t.Helper()
	d, err := e.docs.Create(context.Background(), e.actor(u), documents.DocumentInput{
		Title: documents.Some("Plan"), Content: documents.Some(content), Visibility: documents.Some("public")})
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// message is any message of the server.
type message struct {
	Type     string `json:"type"`
	Version  int    `json:"version"`
	Text     string `json:"text"`
	ReadOnly bool   `json:"readonly"`
	You      person `json:"you"`
	Reason   string `json:"reason"`
	Updates  []struct {
		Client  string          `json:"client"`
		User    string          `json:"user"`
		Changes json.RawMessage `json:"changes"`
	} `json:"updates"`
	Viewing []person `json:"viewing"`
	Editing []person `json:"editing"`
	Cursors []struct {
		Client  string `json:"client"`
		User    person `json:"user"`
		Version int    `json:"version"`
		Anchor  int    `json:"anchor"`
		Head    int    `json:"head"`
	} `json:"cursors"`
}

type person struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// client is a Go client of the protocol, as @codemirror/collab's: it
// keeps the text the server confirmed (text at version) and the changes
// it pushed that are not confirmed yet.
type client struct {
	t       testing.TB
	ws      *websocket.Conn
	id      string
	text    string
	version int
	// pending were pushed on version and are not confirmed yet.
	pending []changeset.ChangeSet
	// last is the last presence and cursors message read.
	presence, cursors *message
}

// dial connects to document doc with cookie (none when "") and says hello
// with version (nil: a fresh editor).
func (e *env) dial(cookie, doc, id string, version *int) (*client, error) {
	return dialURL(e.t, e.server.URL, cookie, doc, id, version)
}

func dialURL(t testing.TB, base, cookie, doc, id string, version *int) (*client, error) {
	t.Helper()
	h := http.Header{}
	if cookie != "" {
		h.Set("Cookie", "auth_token="+cookie)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/documents/"+doc+"/live",
		&websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	c := &client{t: t, ws: ws, id: id}
	if version != nil {
		c.version = *version
	}
	c.sendJSON(map[string]any{"type": "hello", "version": version, "client": id})
	return c, nil
}

func (e *env) mustDial(cookie, doc, id string) *client {
	e.t.Helper()
	c, err := e.dial(cookie, doc, id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	st := c.until("state")
	c.text, c.version = st.Text, st.Version
	return c
}

func (c *client) sendJSON(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("client %s: write: %v", c.id, err)
	}
}

// next reads the next message; the error is the connection's end.
func (c *client) next() (*message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("client %s: not JSON: %s", c.id, data)
	}
	switch m.Type {
	case "presence":
		c.presence = &m
	case "cursors":
		c.cursors = &m
	}
	return &m, nil
}

// until reads until a message of type typ, passing by presence and
// cursors and applying the updates it meets.
func (c *client) until(typ string) *message {
	c.t.Helper()
	for {
		m, err := c.next()
		if err != nil {
			c.t.Fatalf("client %s: waiting for %s: %v", c.id, typ, err)
		}
		if m.Type == "updates" && typ != "updates" {
			c.receive(m)
		}
		if m.Type == typ {
			return m
		}
		if m.Type != "presence" && m.Type != "cursors" && m.Type != "updates" {
			c.t.Fatalf("client %s: got %+v waiting for %s", c.id, m, typ)
		}
	}
}

// receive applies an updates message to the confirmed text; its own
// changes confirm the pending ones.
func (c *client) receive(m *message) {
	c.t.Helper()
	if m.Version != c.version {
		c.t.Fatalf("client %s: updates from %d, it has %d", c.id, m.Version, c.version)
	}
	for _, u := range m.Updates {
		cs, err := changeset.Parse(u.Changes)
		if err != nil {
			c.t.Fatal(err)
		}
		if c.text, err = cs.Apply(c.text); err != nil {
			c.t.Fatalf("client %s: update does not apply: %v", c.id, err)
		}
		c.version++
		if u.Client == c.id && len(c.pending) > 0 {
			c.pending = c.pending[1:]
		} else if len(c.pending) > 0 {
			// Rebase what is not confirmed over the other's change.
			for i := range c.pending {
				mapped, err := c.pending[i].Map(cs, false)
				if err != nil {
					c.t.Fatal(err)
				}
				next, err := cs.Map(c.pending[i], true)
				if err != nil {
					c.t.Fatal(err)
				}
				c.pending[i], cs = mapped, next
			}
		}
	}
}

// push sends cs, made on the confirmed text with nothing pending.
func (c *client) push(cs ...changeset.ChangeSet) {
	c.t.Helper()
	c.pending = append(c.pending, cs...)
	c.sendPending()
}

func (c *client) sendPending() {
	c.t.Helper()
	ups := make([]map[string]any, len(c.pending))
	for i, cs := range c.pending {
		ups[i] = map[string]any{"changes": cs}
	}
	c.sendJSON(map[string]any{"type": "push", "version": c.version, "updates": ups})
}

// insert returns the change set inserting s at pos of the client's text.
func (c *client) insert(pos int, s string) changeset.ChangeSet {
	c.t.Helper()
	n := utf16Len(c.text)
	cs, err := changeset.Replace(n, pos, pos, s)
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// closed waits for the connection's end and returns its close code.
func (c *client) closed() websocket.StatusCode {
	c.t.Helper()
	for {
		_, err := c.next()
		if errors.Is(err, context.DeadlineExceeded) {
			c.t.Fatalf("client %s: still open", c.id)
		}
		if err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// eventually polls cond until it holds (hangGuard at most).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// replay applies the document's stored changes after base to content.
func replay(t testing.TB, s quire.LiveStore, id string) string {
	t.Helper()
	ctx := context.Background()
	st, err := s.LiveState(ctx, quire.Visibility{All: true}, id, quire.MaxLivePage)
	if err != nil {
		t.Fatal(err)
	}
	text := st.Content
	for _, c := range st.Changes {
		cs, err := changeset.Parse(c.Change)
		if err != nil {
			t.Fatal(err)
		}
		if text, err = cs.Apply(text); err != nil {
			t.Fatal(err)
		}
	}
	return text
}
