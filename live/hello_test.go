package live_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"quire/documents"
	"quire/live/livetest"
)

// upgradeOnly opens the live connection of doc with cookie and sends
// nothing: the rights are checked at the upgrade, and the hello may come up
// to helloWait later.
func upgradeOnly(t *testing.T, e *livetest.Node, cookie, doc string) *websocket.Conn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(e.Server.URL, "http") + "/documents/" + doc + "/live"
	ws, _, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{HTTPHeader: map[string][]string{"Cookie": {"auth_token=" + cookie}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	ws.SetReadLimit(16 << 20)
	return ws
}

func sendJSON(t *testing.T, ws *websocket.Conn, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// readAll reads until the server closes the connection (or 10 s), and
// returns what it sent and its close status.
func readAll(t *testing.T, ws *websocket.Conn) (string, websocket.StatusCode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got strings.Builder
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return got.String(), websocket.CloseStatus(err)
		}
		got.Write(data)
		got.WriteByte('\n')
	}
}

// A connection upgraded while its person could see the document, whose
// hello comes once the document is private, is closed, not sent the text.
func TestHelloAfterTheDocumentWentPrivateIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, _ := e.User("ada@example.com", "editor")
	_, bobCookie := e.User("bob@example.com", "editor")
	d := e.Document(ada, "public text")
	ws := upgradeOnly(t, e, bobCookie, d.ID)

	ctx := t.Context()
	if _, err := e.Docs.Update(ctx, e.Actor(ada), d.ID, documents.DocumentInput{Visibility: documents.Some("private")}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Docs.Update(ctx, e.Actor(ada), d.ID, documents.DocumentInput{Content: documents.Some("SECRET written after Bob lost access")}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	sendJSON(t, ws, map[string]any{"type": "hello", "version": nil, "client": "bob-tab"})
	got, status := readAll(t, ws)
	if strings.Contains(got, "SECRET") || strings.Contains(got, "public text") {
		t.Errorf("the hello after the document went private was answered with its text: %.200s", got)
	}
	if status != 4403 {
		t.Errorf("closed with %d, want 4403", status)
	}
}

// The same window does not let a person signed out and made a viewer
// before the hello write.
func TestHelloAfterSignOutWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, _ := e.User("ada@example.com", "editor")
	bob, bobCookie := e.User("bob@example.com", "editor")
	d := e.Document(ada, "text")
	ws := upgradeOnly(t, e, bobCookie, d.ID)

	ctx := t.Context()
	a, err := e.Auth.Authenticate(ctx, bobCookie)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Auth.Logout(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := e.Auth.SetRole(ctx, bob.Email, "viewer"); err != nil {
		t.Fatal(err)
	}
	sendJSON(t, ws, map[string]any{"type": "hello", "version": 0, "client": "bob-tab"})
	sendJSON(t, ws, map[string]any{"type": "push", "version": 0,
		"updates": []any{map[string]any{"changes": json.RawMessage(`[[0,"WRITTEN AFTER SIGN-OUT "],4]`)}}})
	if got, status := readAll(t, ws); strings.Contains(got, `"state"`) || status != 4403 {
		t.Errorf("a signed-out connection got %.200s, closed with %d (want no state, 4403)", got, status)
	}
	if got := livetest.Replay(t, e.Store, d.ID); strings.Contains(got, "SIGN-OUT") {
		t.Errorf("a signed-out viewer's change is stored: %q", got)
	}
}

// A reader's malformed push is refused as any push of a reader's, without
// the whole text that an editor's invalid push is answered with.
func TestReadersMalformedPushGetsNoState(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, _ := e.User("ada@example.com", "editor")
	_, vCookie := e.User("vic@example.com", "viewer")
	d := e.Document(ada, strings.Repeat("words ", 10000))
	v, err := e.Dial(vCookie, d.ID, "v", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := v.Until("state"); !st.ReadOnly {
		t.Fatal("the viewer's connection is not read-only")
	}
	// refusal reads up to the next refusal, failing on a state.
	refusal := func() string {
		for {
			m, err := v.Next()
			if err != nil {
				t.Fatal(err)
			}
			switch m.Type {
			case "state":
				t.Fatalf("a reader's push was answered with the whole text")
			case "refused":
				return m.Reason
			}
		}
	}
	for range 3 {
		v.SendJSON(map[string]any{"type": "push"})
		if r := refusal(); r != "readonly" {
			t.Fatalf("a reader's malformed push was refused %q, want readonly", r)
		}
	}
	v.SendJSON(map[string]any{"type": "push", "version": 0, "updates": []any{}})
	if r := refusal(); r != "readonly" {
		t.Fatalf("a reader's push was refused %q, want readonly", r)
	}
}

// A client id is each person's own: another person's hello with it is
// refused while it is connected, and changes numbered under it by someone
// else never count as its own.
func TestAClientIDIsItsPersonsOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	_, malCookie := e.User("mallory@example.com", "editor")
	d := e.Document(ada, "hello")

	a := e.MustDial(adaCookie, d.ID, "ada-tab")
	a.Numbered = true
	a.Push(a.Insert(5, " world"))
	a.Confirm()
	h, err := e.Dial(malCookie, d.ID, "ada-tab", nil)
	if err != nil {
		t.Fatal(err)
	}
	if code := h.Closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("another person's hello with a connected client's id: closed %d, want 1008", code)
	}

	// Ada away, Mallory numbers a change under her id past all of hers.
	a.WS.Close(websocket.StatusNormalClosure, "")
	h, st := dialFree(t, e, malCookie, d.ID, "ada-tab", nil)
	h.Text, h.Version = st.Text, st.Version
	h.Numbered, h.Seq = true, 1<<53-1-100
	h.Push(h.Insert(0, "M "))
	h.Confirm()
	h.WS.Close(websocket.StatusNormalClosure, "")

	// Ada back: her next change, numbered 2, is taken.
	v := h.Version
	a2, _ := dialFree(t, e, adaCookie, d.ID, "ada-tab", &v)
	a2.Text, a2.Version, a2.Numbered, a2.Seq = h.Text, h.Version, true, 2
	a2.Push(a2.Insert(livetest.UTF16Len(a2.Text), " IMPORTANT"))
	a2.Confirm()
	if got := livetest.Replay(t, e.Store, d.ID); got != "M hello world IMPORTANT" {
		t.Errorf("stored %q, want Ada's change after Mallory's", got)
	}
}

// dialFree dials until the hello is taken, and returns the client and the
// answer to its hello: a connection with the same id closed just before
// may not have left yet.
func dialFree(t *testing.T, e *livetest.Node, cookie, doc, id string, version *int) (*livetest.Client, *livetest.Message) {
	t.Helper()
	var (
		c  *livetest.Client
		m1 *livetest.Message
	)
	livetest.Eventually(t, "the hello of "+id+" taken", func() bool {
		try, err := e.Dial(cookie, doc, id, version)
		if err != nil {
			return false
		}
		m, err := try.Next()
		if err != nil {
			try.WS.CloseNow()
			return false
		}
		c, m1 = try, m
		return true
	})
	return c, m1
}
