// Package livetest serves the live editing server as quire serve composes
// it (the web application with the API's presence route) on a store given,
// and drives it with Go clients of the protocol, for the tests of packages
// live and postgres and the benchmark.
package livetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
	"quire/internal/syncbuf"
	"quire/internal/testclock"
	"quire/internal/testpass"
	"quire/live"
	"quire/live/changeset"
	"quire/notify"
	"quire/passkey"
	"quire/transfer"
	"quire/web"
	"quire/webhook"
)

// HangGuard bounds every wait for something that must happen: it turns a
// hang into a failure, on however loaded a machine, and is no measure.
const HangGuard = time.Minute

// TestPassword is the password of every user Node.User makes.
const TestPassword = "correct horse battery staple 42"

// Node is one quire process serving the live editor.
type Node struct {
	t     testing.TB
	Store quire.Store
	Auth  *auth.Service
	// users makes users with a cheap hash of TestPassword.
	users  *auth.Service
	Docs   *documents.Service
	Live   *live.Service
	Clock  *testclock.Clock
	Server *httptest.Server
	logs   *syncBuffer
	conns  *connSet
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer = syncbuf.Buffer

// Start serves a node on db with the clock clk (shared by the nodes of a
// test); cfg adjusts the live server's configuration, whose clock is clk.
func Start(t testing.TB, db quire.Store, clk *testclock.Clock, cfg func(*live.Config)) *Node {
	t.Helper()
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
	uc.HashPassword = func(string) (string, error) { return testpass.Hash(TestPassword), nil }
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
	srv := httptest.NewUnstartedServer(api.Front(httpapi.Routes(api.API(), pages)))
	conns := &connSet{}
	srv.Listener = &trackingListener{Listener: srv.Listener, set: conns}
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), HangGuard)
		defer cancel()
		lv.Shutdown(ctx)
		srv.Close()
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", tail(logs.String(), 8000))
		}
	})
	return &Node{t: t, Store: db, Auth: as, users: us, Docs: ds, Live: lv, Clock: clk, Server: srv, logs: logs, conns: conns}
}

// Kill cuts every connection of the node at once, as a node that dies
// (the caller closes its store first, so that it cannot save either).
func (n *Node) Kill() {
	n.conns.closeAll()
}

// SmallSendBuffer gives the node's end of the connection whose client
// end is at client (its local address) a send buffer of a few KiB, not
// the megabytes Linux grows it to on loopback: what the node sends that
// client then waits in the node's own queue after some KiB, not after
// megabytes, and a test of that queue needs to send the client little.
func (n *Node) SmallSendBuffer(client net.Addr) error {
	n.conns.mu.Lock()
	defer n.conns.mu.Unlock()
	for _, c := range n.conns.conns {
		if c.RemoteAddr().String() != client.String() {
			continue
		}
		tc, ok := c.(*net.TCPConn)
		if !ok {
			return fmt.Errorf("the connection from %s is a %T, not TCP", client, c)
		}
		return tc.SetWriteBuffer(4096)
	}
	return fmt.Errorf("no connection from %s", client)
}

// connSet is the raw connections a node accepted.
type connSet struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

type trackingListener struct {
	net.Listener
	set *connSet
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.set.mu.Lock()
		l.set.conns = append(l.set.conns, c)
		l.set.mu.Unlock()
	}
	return c, err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// User creates an active user with role and signs it in: the user and its
// session cookie.
func (e *Node) User(email, role string) (quire.User, string) {
	e.t.Helper()
	name, _, _ := strings.Cut(email, "@")
	u, _, err := e.users.CreateUser(context.Background(), auth.NewUser{
		Email: email, Name: strings.ToUpper(name[:1]) + name[1:], Role: role, Password: TestPassword})
	if err != nil {
		e.t.Fatal(err)
	}
	sess, err := e.Auth.Login(context.Background(), quire.RequestInfo{IP: "192.0.2.1"}, email, TestPassword, "")
	if err != nil {
		e.t.Fatal(err)
	}
	return *u, sess.Token
}

// Actor is u as the services see it now.
func (e *Node) Actor(u quire.User) quire.Actor {
	e.t.Helper()
	fresh, err := e.Store.UserByID(context.Background(), u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return quire.Actor{User: *fresh}
}

// Document creates a public document of u's with content.
func (e *Node) Document(u quire.User, content string) *quire.Document {
	e.t.Helper()
	d, err := e.Docs.Create(context.Background(), e.Actor(u), documents.DocumentInput{
		Title: documents.Some("Plan"), Content: documents.Some(content), Visibility: documents.Some("public")})
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// Message is any message of the server.
type Message struct {
	Type     string `json:"type"`
	Version  int    `json:"version"`
	Text     string `json:"text"`
	ReadOnly bool   `json:"readonly"`
	You      Person `json:"you"`
	// Seq is a state's number of the client's last change it holds.
	Seq     int64  `json:"seq"`
	Reason  string `json:"reason"`
	Updates []struct {
		Client  string          `json:"client"`
		User    string          `json:"user"`
		Changes json.RawMessage `json:"changes"`
	} `json:"updates"`
	Viewing []Person `json:"viewing"`
	Editing []Person `json:"editing"`
	Cursors []struct {
		Client  string `json:"client"`
		User    Person `json:"user"`
		Version int    `json:"version"`
		Anchor  int    `json:"anchor"`
		Head    int    `json:"head"`
	} `json:"cursors"`
}

// Person is someone as the server names them.
type Person struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Client is a Go client of the protocol, as @codemirror/collab's: it
// keeps the text the server confirmed (text at version) and the changes
// it pushed that are not confirmed yet.
type Client struct {
	t       testing.TB
	WS      *websocket.Conn
	ID      string
	Text    string
	Version int
	// Pending were pushed on Version and are not confirmed yet.
	Pending []changeset.ChangeSet
	// Behind counts the pushes refused as behind.
	Behind int
	// Numbered clients number their changes (README, "Live editing"):
	// Seq is the number of Pending[0], from 1.
	Numbered bool
	Seq      int64
	// Presence and Cursors are the last such messages read.
	Presence, Cursors *Message
}

// Dial connects to document doc with cookie (none when "") and says hello
// as client id with version (nil: a fresh editor).
func (e *Node) Dial(cookie, doc, id string, version *int) (*Client, error) {
	return Dial(e.t, e.Server.URL, cookie, doc, id, version)
}

// Dial connects to the server at base (http://host:port).
func Dial(t testing.TB, base, cookie, doc, id string, version *int) (*Client, error) {
	t.Helper()
	h := http.Header{}
	if cookie != "" {
		h.Set("Cookie", "auth_token="+cookie)
	}
	ctx, cancel := context.WithTimeout(context.Background(), HangGuard)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/documents/"+doc+"/live",
		&websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	c := &Client{t: t, WS: ws, ID: id, Seq: 1}
	if version != nil {
		c.Version = *version
	}
	c.SendJSON(map[string]any{"type": "hello", "version": version, "client": id})
	return c, nil
}

// MustDial connects as a fresh editor and reads the state.
func (e *Node) MustDial(cookie, doc, id string) *Client {
	e.t.Helper()
	c, err := e.Dial(cookie, doc, id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	st := c.Until("state")
	c.Text, c.Version = st.Text, st.Version
	return c
}

// SendJSON sends v as a message.
func (c *Client) SendJSON(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), HangGuard)
	defer cancel()
	if err := c.WS.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("client %s: write: %v", c.ID, err)
	}
}

// Next reads the next message; the error is the connection's end.
func (c *Client) Next() (*Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), HangGuard)
	defer cancel()
	_, data, err := c.WS.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("client %s: not JSON: %s", c.ID, data)
	}
	switch m.Type {
	case "presence":
		c.Presence = &m
	case "cursors":
		c.Cursors = &m
	}
	return &m, nil
}

// Until reads until a message of type typ, passing by presence and
// cursors and applying the updates it meets.
func (c *Client) Until(typ string) *Message {
	c.t.Helper()
	for {
		m, err := c.Next()
		if err != nil {
			c.t.Fatalf("client %s: waiting for %s: %v", c.ID, typ, err)
		}
		if m.Type == "updates" && typ != "updates" {
			c.Receive(m)
		}
		if m.Type == typ {
			return m
		}
		if m.Type != "presence" && m.Type != "cursors" && m.Type != "updates" {
			c.t.Fatalf("client %s: got %+v waiting for %s", c.ID, m, typ)
		}
	}
}

// Receive applies an updates message to the confirmed text; its own
// changes confirm the pending ones.
func (c *Client) Receive(m *Message) {
	c.t.Helper()
	if m.Version != c.Version {
		c.t.Fatalf("client %s: updates from %d, it has %d", c.ID, m.Version, c.Version)
	}
	for _, u := range m.Updates {
		cs, err := changeset.Parse(u.Changes)
		if err != nil {
			c.t.Fatal(err)
		}
		if c.Text, err = cs.Apply(c.Text); err != nil {
			c.t.Fatalf("client %s: update does not apply: %v", c.ID, err)
		}
		c.Version++
		if u.Client == c.ID && len(c.Pending) > 0 {
			c.Pending = c.Pending[1:]
			c.Seq++
		} else if len(c.Pending) > 0 {
			// Rebase what is not confirmed over the other's change.
			for i := range c.Pending {
				mapped, err := c.Pending[i].Map(cs, false)
				if err != nil {
					c.t.Fatal(err)
				}
				next, err := cs.Map(c.Pending[i], true)
				if err != nil {
					c.t.Fatal(err)
				}
				c.Pending[i], cs = mapped, next
			}
		}
	}
}

// Push sends cs, made on the confirmed text with nothing pending.
func (c *Client) Push(cs ...changeset.ChangeSet) {
	c.t.Helper()
	c.Pending = append(c.Pending, cs...)
	c.SendPending()
}

// SendPending pushes the changes not confirmed yet, on Version.
func (c *Client) SendPending() {
	c.t.Helper()
	ups := make([]map[string]any, len(c.Pending))
	for i, cs := range c.Pending {
		ups[i] = map[string]any{"changes": cs}
	}
	m := map[string]any{"type": "push", "version": c.Version, "updates": ups}
	if c.Numbered {
		m["seq"] = c.Seq
	}
	c.SendJSON(m)
}

// Resync starts again from a state, as the browser's client does: a
// numbered client drops its pending changes up to the state's number
// (the server had accepted them: the text holds them) and rebases the
// rest over the difference between its confirmed text with the dropped
// changes and the state's text.
func (c *Client) Resync(st *Message) {
	c.t.Helper()
	base, pending := c.Text, c.Pending
	if c.Numbered && st.Seq >= c.Seq {
		k := min(int(st.Seq-c.Seq+1), len(pending))
		for _, cs := range pending[:k] {
			var err error
			if base, err = cs.Apply(base); err != nil {
				c.t.Fatalf("client %s: pending change does not apply: %v", c.ID, err)
			}
		}
		pending, c.Seq = pending[k:], st.Seq+1
	}
	theirs := changeset.Diff(base, st.Text)
	rebased := make([]changeset.ChangeSet, len(pending))
	for i, cs := range pending {
		mapped, err := cs.Map(theirs, false)
		if err != nil {
			c.t.Fatal(err)
		}
		if theirs, err = theirs.Map(cs, true); err != nil {
			c.t.Fatal(err)
		}
		rebased[i] = mapped
	}
	c.Text, c.Version, c.Pending = st.Text, st.Version, rebased
}

// Insert returns the change set inserting s at pos of the client's text.
func (c *Client) Insert(pos int, s string) changeset.ChangeSet {
	c.t.Helper()
	n := UTF16Len(c.Text)
	cs, err := changeset.Replace(n, pos, pos, s)
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

// UTF16Len is the length of s in the editor's units.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// Closed waits for the connection's end and returns its close code.
func (c *Client) Closed() websocket.StatusCode {
	c.t.Helper()
	for {
		_, err := c.Next()
		if errors.Is(err, context.DeadlineExceeded) {
			c.t.Fatalf("client %s: still open", c.ID)
		}
		if err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// Eventually polls cond until it holds (HangGuard at most).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(HangGuard)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Replay applies the document's stored changes after base to content.
func Replay(t testing.TB, s quire.LiveStore, id string) string {
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

// Confirm reads until every pending change is confirmed: refused as
// behind, the client waits for the updates it misses (rebasing its
// changes over them, as @codemirror/collab does) and pushes again.
func (c *Client) Confirm() {
	c.t.Helper()
	for len(c.Pending) > 0 {
		m, err := c.Next()
		if err != nil {
			c.t.Fatalf("client %s: %d changes not confirmed: %v", c.ID, len(c.Pending), err)
		}
		switch m.Type {
		case "updates":
			c.Receive(m)
		case "refused":
			if m.Reason != "behind" {
				c.t.Fatalf("client %s refused: %+v", c.ID, m)
			}
			c.Behind++
			c.CatchUp(m.Version)
			if len(c.Pending) > 0 {
				c.SendPending()
			}
		case "state":
			c.t.Fatalf("client %s resynced: %+v", c.ID, m)
		}
	}
}

// CatchUp reads updates until the client has version.
func (c *Client) CatchUp(version int) {
	c.t.Helper()
	for c.Version < version {
		c.Receive(c.Until("updates"))
	}
}

// API sends a request of the JSON API with token as its bearer and returns
// the status and the members of the answer's JSON object.
func (e *Node) API(token, method, path, body string) (int, map[string]json.RawMessage) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		e.t.Fatalf("%s %s: %d, %v", method, path, res.StatusCode, err)
	}
	return res.StatusCode, out
}

// MustAPI is API failing the test unless the status is below 300; it
// decodes the member key of the answer into out.
func (e *Node) MustAPI(token, method, path, body, key string, out any) {
	e.t.Helper()
	code, got := e.API(token, method, path, body)
	if code >= 300 {
		e.t.Fatalf("%s %s: %d %s", method, path, code, got["code"])
	}
	if err := json.Unmarshal(got[key], out); err != nil {
		e.t.Fatalf("%s %s: member %q: %v", method, path, key, err)
	}
}

// LoseConfirmation is the duplicate gap of a resync, on any two nodes of
// one database (a and b may be one node): on node a, an editor pushes a
// change, numbered, and types a second one; the first is stored but its
// confirmation never read: the connection is cut. The editor was the last
// one: node a saves the text as a version and trims the stored changes.
// The editor comes back on node b with its version, which is too old now
// for updates: it gets the whole text, with the number of its last
// accepted change, drops that change and rebases only the second. It
// checks that the text and the table hold each change exactly once, and
// that a push of an accepted number again is refused as repeated.
func LoseConfirmation(t testing.TB, a, b *Node, cookie, doc string) {
	t.Helper()
	ctx := context.Background()
	c := a.MustDial(cookie, doc, "tab-resync")
	c.Numbered = true
	start := c.Text
	c.Push(c.Insert(UTF16Len(c.Text), " world"))
	second, err := changeset.Replace(UTF16Len(start)+6, 0, 0, "¡")
	if err != nil {
		t.Fatal(err)
	}
	c.Pending = append(c.Pending, second)
	Eventually(t, "the push is stored", func() bool { return Replay(t, a.Store, doc) == start+" world" })
	c.WS.CloseNow()
	Eventually(t, "the text saved and its changes trimmed", func() bool {
		_, err := a.Store.LiveChangesSince(ctx, quire.Visibility{All: true}, doc, 0, 1)
		return a.Live.Sessions() == 0 && errors.Is(err, quire.ErrLiveTrimmed)
	})

	v := c.Version
	r, err := b.Dial(cookie, doc, c.ID, &v)
	if err != nil {
		t.Fatal(err)
	}
	r.Text, r.Pending, r.Numbered, r.Seq = c.Text, c.Pending, true, c.Seq
	st := r.Until("state")
	if st.Text != start+" world" {
		t.Fatalf("the state after the reconnect: %q, want %q", st.Text, start+" world")
	}
	r.Resync(st)
	r.SendPending()
	r.Confirm()
	want := "¡" + start + " world"
	if r.Text != want {
		t.Fatalf("the editor ends with %q, want %q: every change once (the state said its last accepted change was %d)",
			r.Text, want, st.Seq)
	}
	if got := Replay(t, b.Store, doc); got != want {
		t.Fatalf("the table replays to %q, want %q", got, want)
	}

	// The first change pushed again, on the count: the server refuses it
	// and sends the text with the number, stores nothing.
	r.Seq = 1
	r.Push(r.Insert(0, "x"))
	if m := r.Until("refused"); m.Reason != "repeated" {
		t.Fatalf("a push of number 1 again: %+v", m)
	}
	if m := r.Until("state"); m.Seq != 2 || m.Text != want {
		t.Fatalf("the state after the repeat: %q, number %d", m.Text, m.Seq)
	}
	if got := Replay(t, b.Store, doc); got != want {
		t.Fatalf("after the repeat the table replays to %q, want %q", got, want)
	}
}
