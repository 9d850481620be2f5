package acceptance

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
)

// The live editor's client (web/editor/src/live.js) against a central
// authority of the protocol's own (README "Live editing: the browser"),
// written here from the protocol alone: the server side of live editing
// is not in this package. It holds the text and its count, accepts a push
// only on the current count, and sends every accepted change to every
// connection; the test changes the text as another person would, drops
// the connection, keeps it down, and brings it back.

// liveAuthority is the test's central authority.
type liveAuthority struct {
	mu      sync.Mutex
	text    []uint16 // UTF-16, as CodeMirror counts
	updates []liveUpdate
	conns   map[*wsConn]bool
	down    bool // refuse connections, as a lost network would
	pushes  int  // pushes accepted
	refused map[string]int
	hellos  []any
}

type liveUpdate struct {
	Client  string          `json:"client"`
	User    livePerson      `json:"user"`
	Changes json.RawMessage `json:"changes"`
}

type livePerson struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (a *liveAuthority) textNow() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return string(utf16.Decode(a.text))
}

// applyChangeSet applies a ChangeSet's JSON (ChangeSet.toJSON) to doc: a
// number keeps that many units, [n, line, ...] replaces n units with the
// lines joined by "\n". It fails unless the change covers doc exactly.
func applyChangeSet(doc []uint16, raw json.RawMessage) ([]uint16, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, err
	}
	out := make([]uint16, 0, len(doc))
	pos := 0
	for _, p := range parts {
		var keep int
		if json.Unmarshal(p, &keep) == nil {
			if keep < 0 || pos+keep > len(doc) {
				return nil, errors.New("keeps past the end")
			}
			out = append(out, doc[pos:pos+keep]...)
			pos += keep
			continue
		}
		var repl []json.RawMessage
		if err := json.Unmarshal(p, &repl); err != nil || len(repl) == 0 {
			return nil, fmt.Errorf("bad section %s", p)
		}
		var del int
		if err := json.Unmarshal(repl[0], &del); err != nil || del < 0 || pos+del > len(doc) {
			return nil, fmt.Errorf("bad deletion %s", p)
		}
		pos += del
		lines := make([]string, 0, len(repl)-1)
		for _, l := range repl[1:] {
			var s string
			if err := json.Unmarshal(l, &s); err != nil {
				return nil, err
			}
			lines = append(lines, s)
		}
		out = append(out, utf16.Encode([]rune(strings.Join(lines, "\n")))...)
	}
	if pos != len(doc) {
		return nil, fmt.Errorf("covers %d of %d units", pos, len(doc))
	}
	return out, nil
}

// accept applies changes made on count version, or says why not; the
// caller holds a.mu.
func (a *liveAuthority) accept(version int, ups []liveUpdate) string {
	if version != len(a.updates) {
		return "behind"
	}
	text := a.text
	for _, u := range ups {
		next, err := applyChangeSet(text, u.Changes)
		if err != nil {
			return "invalid"
		}
		text = next
	}
	a.text = text
	a.updates = append(a.updates, ups...)
	msg, _ := json.Marshal(map[string]any{"type": "updates", "version": version, "updates": ups})
	for c := range a.conns {
		c.write(string(msg))
	}
	return ""
}

// insertAtStart is another person typing s at the start of the text.
func (a *liveAuthority) insertAtStart(t *testing.T, s string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	quoted, _ := json.Marshal(s)
	changes := fmt.Sprintf(`[[0,%s],%d]`, quoted, len(a.text))
	if len(a.text) == 0 {
		changes = fmt.Sprintf(`[[0,%s]]`, quoted)
	}
	if why := a.accept(len(a.updates), []liveUpdate{{Client: "linus-tab", User: livePerson{"u-linus", "Linus"}, Changes: json.RawMessage(changes)}}); why != "" {
		t.Fatalf("the authority's own change %s: %s", changes, why)
	}
}

// broadcast sends msg to every connection.
func (a *liveAuthority) broadcast(msg any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, _ := json.Marshal(msg)
	for c := range a.conns {
		c.write(string(b))
	}
}

// setDown drops every connection (without a close frame, as a lost
// network does) and refuses new ones, or lets them in again.
func (a *liveAuthority) setDown(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = down
	if down {
		for c := range a.conns {
			c.conn.Close()
		}
	}
}

// closeAll ends every connection with code.
func (a *liveAuthority) closeAll(code uint16) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for c := range a.conns {
		c.close(code)
	}
}

func (a *liveAuthority) serveLive(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	down := a.down
	a.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	c, err := wsAccept(w, r)
	if err != nil {
		return
	}
	a.mu.Lock()
	a.conns[c] = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.conns, c)
		a.mu.Unlock()
		c.conn.Close()
	}()
	client := "" // what the connection said in hello
	for {
		data, err := c.read()
		if err != nil {
			return
		}
		var m struct {
			Type    string          `json:"type"`
			Version *int            `json:"version"`
			Client  string          `json:"client"`
			Updates []liveUpdate    `json:"updates"`
			Anchor  json.RawMessage `json:"anchor"`
		}
		if json.Unmarshal([]byte(data), &m) != nil {
			c.close(1003)
			return
		}
		a.mu.Lock()
		switch m.Type {
		case "hello":
			client = m.Client
			if m.Version == nil {
				a.hellos = append(a.hellos, nil)
			} else {
				a.hellos = append(a.hellos, *m.Version)
			}
			var msg []byte
			if m.Version != nil && *m.Version <= len(a.updates) {
				msg, _ = json.Marshal(map[string]any{"type": "updates", "version": *m.Version, "updates": a.updates[*m.Version:]})
			} else {
				msg, _ = json.Marshal(map[string]any{"type": "state", "version": len(a.updates), "text": string(utf16.Decode(a.text)),
					"readonly": false, "you": livePerson{"u-grace", "Grace"}})
			}
			c.write(string(msg))
		case "push":
			for i := range m.Updates {
				m.Updates[i].Client = client
				m.Updates[i].User = livePerson{"u-grace", "Grace"}
			}
			if m.Version == nil || len(m.Updates) == 0 || len(m.Updates) > 100 {
				c.write(`{"type":"refused","reason":"invalid","version":` + fmt.Sprint(len(a.updates)) + `}`)
				break
			}
			if why := a.accept(*m.Version, m.Updates); why != "" {
				a.refused[why]++
				c.write(`{"type":"refused","reason":"` + why + `","version":` + fmt.Sprint(len(a.updates)) + `}`)
			} else {
				a.pushes++
			}
		}
		a.mu.Unlock()
	}
}

// wsConn is the server's end of a WebSocket (RFC 6455), just what this
// test needs: text frames, close, ping.
type wsConn struct {
	conn net.Conn
	r    *bufio.Reader
	mu   sync.Mutex
}

func wsAccept(w http.ResponseWriter, r *http.Request) (*wsConn, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" {
		http.Error(w, "not a WebSocket", http.StatusBadRequest)
		return nil, errors.New("not a WebSocket")
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(sum[:]))
	if err := rw.Flush(); err != nil {
		conn.Close()
		return nil, err
	}
	return &wsConn{conn: conn, r: rw.Reader}, nil
}

func (c *wsConn) frame(op byte, payload []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	head := []byte{0x80 | op}
	switch n := len(payload); {
	case n < 126:
		head = append(head, byte(n))
	case n < 1<<16:
		head = append(head, 126, byte(n>>8), byte(n))
	default:
		head = append(head, 127)
		head = binary.BigEndian.AppendUint64(head, uint64(n))
	}
	c.conn.Write(append(head, payload...))
}

func (c *wsConn) write(text string) { c.frame(1, []byte(text)) }

func (c *wsConn) close(code uint16) {
	c.frame(8, binary.BigEndian.AppendUint16(nil, code))
	c.conn.Close()
}

// read returns the next text message.
func (c *wsConn) read() (string, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return "", err
		}
		op, n := h[0]&0x0f, uint64(h[1]&0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return "", err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return "", err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if n > 1<<20 {
			return "", errors.New("frame too large")
		}
		var mask [4]byte
		if h[1]&0x80 != 0 {
			if _, err := io.ReadFull(c.r, mask[:]); err != nil {
				return "", err
			}
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(c.r, p); err != nil {
			return "", err
		}
		for i := range p {
			p[i] ^= mask[i%4]
		}
		switch op {
		case 8:
			return "", io.EOF
		case 9:
			c.frame(10, p)
			continue
		case 10:
			continue
		}
		msg = append(msg, p...)
		if h[0]&0x80 != 0 {
			return string(msg), nil
		}
	}
}

// liveTestPage is a page with the edit form's parts the live editor uses,
// under the edit page's CSP (connect-src 'self' lets the WebSocket in).
const liveTestPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>live</title>
<link rel="stylesheet" href="/static/style.css">
</head><body><main>
<form id="doc-form" data-live="/documents/d1/live" data-draft-key="u-grace/d1">
<label for="content">Content</label>
<textarea id="content" name="content">The page's text, older than the live one.</textarea>
<p class="live-status" id="live-status" role="status" aria-live="polite"></p>
<script src="/static/live.js" nonce="n0nce" defer></script>
</form></main></body></html>`

// liveServer serves liveTestPage, the real static files, and a.
func liveServer(t *testing.T, a *liveAuthority) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /documents/d1/live", a.serveLive)
	mux.HandleFunc("GET /edit", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", strings.Replace(wantCSP, "style-src 'self';", "style-src 'self' 'nonce-n0nce';", 1))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, liveTestPage)
	})
	mux.HandleFunc("GET /static/{name}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join("..", "web", "static", filepath.Base(r.PathValue("name"))))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(func() {
		a.setDown(true)
		s.Close()
	})
	return s
}

// TestBrowserLiveClient: the editor joins the live text, sends what is
// typed and takes what others type; a remote cursor shows its name; with
// the connection lost it says so at once, keeps typing, keeps the unsent
// changes across a reload, and on reconnecting rebases them over what
// others typed meanwhile and sends them: every character kept; a lost
// right of access stops it.
func TestBrowserLiveClient(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "web", "static", "live.js")); err != nil {
		t.Fatal(err)
	}
	ctx := newChrome(t)
	a := &liveAuthority{text: utf16.Encode([]rune("Hello.")), conns: map[*wsConn]bool{}, refused: map[string]int{}}
	s := liveServer(t, a)
	editorText := `window.quireEditor.text()`
	waitFor := func(step, js string) {
		t.Helper()
		do(t, ctx, step, chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := poll[bool](js)(ctx, tgt)
			return err
		}))
	}
	status := func() string { return read(t, ctx, "status", chromedp.Text(id("live-status"))) }

	do(t, ctx, "open the page", chromedp.Navigate(s.URL+"/edit"), waitVisible(theEditor))
	waitFor("the live text replaces the page's", editorText+` === "Hello." && document.getElementById("content").value === "Hello."`)
	if st := status(); !strings.HasPrefix(st, "Live:") {
		t.Errorf("status %q once connected", st)
	}

	do(t, ctx, "type", editorToEnd(), typeInEditor(" World"))
	waitFor("confirmed", `window.quireEditor.unsent() === 0 && `+editorText+` === "Hello. World"`)
	if got := a.textNow(); got != "Hello. World" {
		t.Fatalf("the authority holds %q after typing", got)
	}

	a.insertAtStart(t, "Linus: ")
	waitFor("another person's change arrives", editorText+` === "Linus: Hello. World"`)
	a.mu.Lock()
	version := len(a.updates)
	a.mu.Unlock()
	a.broadcast(map[string]any{"type": "cursors", "cursors": []any{
		map[string]any{"client": "linus-tab", "user": livePerson{"u-linus", "Linus"}, "version": version, "anchor": 0, "head": 5},
		// Positions past the end are clamped, not trusted.
		map[string]any{"client": "ada-tab", "user": livePerson{"u-ada", "Ada"}, "version": version, "anchor": 9999, "head": 9999},
	}})
	waitFor("the cursors show with names", `Array.from(document.querySelectorAll(".cm-remote-name")).map(n => n.textContent).sort().join() === "Ada,Linus"`)
	if sel := read(t, ctx, "Linus's selection", chromedp.Evaluate[string](`document.querySelector(".cm-remote-selection").textContent`)); sel != "Linus" {
		t.Errorf("Linus's selection shows over %q", sel)
	}

	a.setDown(true)
	waitFor("the lost connection is shown", `document.getElementById("live-status").textContent.startsWith("Connection lost")`)
	do(t, ctx, "type while offline", editorToEnd(), typeInEditor(" Offline."))
	waitFor("kept in the browser", `(JSON.parse(localStorage.getItem("quire.live.u-grace/d1") || "null") || {updates: []}).updates.length > 0`)
	// Meanwhile another person types at the start.
	a.insertAtStart(t, "> ")
	do(t, ctx, "reload while offline", chromedp.Reload(), waitVisible(theEditor))
	waitFor("the unsent text is back after the reload", editorText+` === "Linus: Hello. World Offline."`)
	if n := read(t, ctx, "unsent", chromedp.Evaluate[int](`window.quireEditor.unsent()`)); n == 0 {
		t.Fatal("no unsent changes after the reload")
	}

	a.setDown(false)
	waitFor("reconnected, rebased and sent", `window.quireEditor.unsent() === 0 && `+editorText+` === "> Linus: Hello. World Offline."`)
	if got := a.textNow(); got != "> Linus: Hello. World Offline." {
		t.Fatalf("the authority holds %q after the reconnect", got)
	}
	waitFor("nothing left in the browser", `localStorage.getItem("quire.live.u-grace/d1") === null`)
	a.mu.Lock()
	hellos := a.hellos
	a.mu.Unlock()
	// The first hello is fresh; after the reload it names the count its
	// kept changes were made on: the count when the connection was lost
	// (an update per key typed, and Linus's).
	if diff := cmp.Diff([]any{nil, version}, []any{hellos[0], hellos[len(hellos)-1]}); diff != "" {
		t.Errorf("hellos (-want +got):\n%s", diff)
	}

	a.closeAll(4403)
	waitFor("access lost is said, and the editor stops", `document.getElementById("live-status").textContent.startsWith("You no longer have access") &&
		document.querySelector("#doc-form .cm-content").getAttribute("contenteditable") === "false"`)
}

// TestBrowserLiveClientsConverge: two people type into the same place at
// once, key by key; the authority takes one push at a time and refuses
// the other as behind, which rebases and pushes again. Both editors end
// with the authority's text, and every key typed is in it, in the order
// each person typed.
func TestBrowserLiveClientsConverge(t *testing.T) {
	ctx := newChrome(t)
	other := newSession(t, ctx)
	a := &liveAuthority{text: utf16.Encode([]rune("Hello World")), conns: map[*wsConn]bool{}, refused: map[string]int{}}
	s := liveServer(t, a)
	tabs := []context.Context{ctx, other}
	typed := []string{"abcdefghijklmnopqrst", "ABCDEFGHIJKLMNOPQRST"}
	for _, tab := range tabs {
		do(t, tab, "open the page", chromedp.Navigate(s.URL+"/edit"), waitVisible(theEditor))
		do(t, tab, "joined", chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := poll[bool](`window.quireEditor.text() === "Hello World"`)(ctx, tgt)
			return err
		}), selectInEditor(" World"), chromedp.KeyEvent(kb.ArrowLeft)) // the cursor after "Hello"
	}
	typeAtOnce(t, tabs, typed)
	var texts []string
	for _, tab := range tabs {
		texts = append(texts, read(t, tab, "the editor, confirmed", poll[string](
			`window.quireEditor.unsent() === 0 && window.quireEditor.text().length === 51 && window.quireEditor.text()`)))
	}
	want := a.textNow()
	if diff := cmp.Diff([]string{want, want}, texts); diff != "" {
		t.Fatalf("the editors differ from the authority (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(want, "Hello") || !strings.HasSuffix(want, " World") {
		t.Errorf("the text around the typing changed: %q", want)
	}
	for _, keys := range typed {
		if !subsequence(keys, want) {
			t.Errorf("%q is not in %q in the order typed", keys, want)
		}
	}
	a.mu.Lock()
	t.Logf("pushes accepted %d, refused %v", a.pushes, a.refused)
	a.mu.Unlock()
}

// subsequence reports whether the runes of s appear in t in order.
func subsequence(s, t string) bool {
	rs := []rune(s)
	i := 0
	for _, r := range t {
		if i < len(rs) && r == rs[i] {
			i++
		}
	}
	return i == len(rs)
}
