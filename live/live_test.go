package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"quire"
	"quire/documents"
	"quire/live"
	"quire/live/changeset"
)

// TestConcurrentPushesConverge: two editors push on the same count at
// once; one is confirmed, the other refused as behind, rebases over the
// first (changeset.Map) and is confirmed next. Both, and a reader who
// follows, end with the same text, which is the replay of the stored
// changes.
func TestConcurrentPushesConverge(t *testing.T) {
	e := newEnv(t, nil)
	ada, adaCookie := e.user("ada@example.com", "editor")
	_, bobCookie := e.user("bob@example.com", "editor")
	carl, carlCookie := e.user("carl@example.com", "viewer")
	d := e.document(ada, "hello wörld 😀")

	a := e.mustDial(adaCookie, d.ID, "a")
	b := e.mustDial(bobCookie, d.ID, "b")
	c, err := e.dial(carlCookie, d.ID, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := c.until("state")
	c.text, c.version = st.Text, st.Version
	if !st.ReadOnly || st.You != (person{carl.ID, "Carl"}) || st.Text != "hello wörld 😀" {
		t.Fatalf("the reader's state: %+v", st)
	}

	a.push(a.insert(0, "A says: "))
	b.push(b.insert(utf16Len(b.text), " (bob)"))
	// Each waits for its own change to come back, rebasing and pushing
	// again when refused.
	for _, cl := range []*client{a, b} {
		for len(cl.pending) > 0 {
			m, err := cl.next()
			if err != nil {
				t.Fatal(err)
			}
			switch m.Type {
			case "updates":
				cl.receive(m)
			case "refused":
				if m.Reason != "behind" {
					t.Fatalf("client %s refused: %+v", cl.id, m)
				}
				// Push again once the updates it misses are in.
				for cl.version < m.Version {
					cl.receive(cl.until("updates"))
				}
				if len(cl.pending) > 0 {
					cl.sendPending()
				}
			}
		}
	}
	want := "A says: hello wörld 😀 (bob)"
	for _, cl := range []*client{a, b, c} {
		for cl.version < 2 {
			cl.receive(cl.until("updates"))
		}
		if cl.text != want || cl.version != 2 {
			t.Errorf("client %s has %q at %d, want %q at 2", cl.id, cl.text, cl.version, want)
		}
	}
	if got := replay(t, e.store, d.ID); got != want {
		t.Errorf("the stored changes replay to %q, want %q", got, want)
	}
	// The reader may not push.
	c.push(c.insert(0, "x"))
	if m := c.until("refused"); m.Reason != "readonly" || m.Version != 2 {
		t.Errorf("the reader's push: %+v", m)
	}
}

// TestPushesThatDoNotApplyAreRefused: a change of the wrong length, a
// position cutting an emoji, a count the server never had and a text
// over the size limit are refused; all but the last with a state.
func TestPushesThatDoNotApplyAreRefused(t *testing.T) {
	e := newEnv(t, func(c *live.Config) { c.MaxText = 100 })
	ada, cookie := e.user("ada@example.com", "editor")
	d := e.document(ada, "😀 ok")
	a := e.mustDial(cookie, d.ID, "a")
	wrongLength, err := changeset.Replace(3, 0, 0, "x")
	if err != nil {
		t.Fatal(err)
	}
	cutEmoji, err := changeset.Replace(5, 1, 1, "x")
	if err != nil {
		t.Fatal(err)
	}
	for name, push := range map[string]any{
		"wrong length":    map[string]any{"type": "push", "version": 0, "updates": []any{map[string]any{"changes": wrongLength}}},
		"inside an emoji": map[string]any{"type": "push", "version": 0, "updates": []any{map[string]any{"changes": cutEmoji}}},
		"not a change":    map[string]any{"type": "push", "version": 0, "updates": []any{map[string]any{"changes": "x"}}},
		"future count":    map[string]any{"type": "push", "version": 7, "updates": []any{map[string]any{"changes": a.insert(0, "x")}}},
		"no changes":      map[string]any{"type": "push", "version": 0, "updates": []any{}},
		"no version":      map[string]any{"type": "push", "updates": []any{map[string]any{"changes": a.insert(0, "x")}}},
	} {
		a.sendJSON(push)
		if m := a.until("refused"); m.Reason != "invalid" || m.Version != 0 {
			t.Errorf("%s: %+v", name, m)
		}
		if m := a.until("state"); m.Text != "😀 ok" || m.Version != 0 {
			t.Errorf("%s: state %+v", name, m)
		}
	}
	a.push(a.insert(0, strings.Repeat("x", 100)))
	if m := a.until("refused"); m.Reason != "too_large" {
		t.Errorf("over the size limit: %+v", m)
	}
	if got := replay(t, e.store, d.ID); got != "😀 ok" {
		t.Errorf("stored %q after refusals", got)
	}
}

// TestMessageOver64KiBCloses: a message over 64 KiB closes the connection
// with 1009; one just under is read.
func TestMessageOver64KiBCloses(t *testing.T) {
	e := newEnv(t, nil)
	ada, cookie := e.user("ada@example.com", "editor")
	d := e.document(ada, "")
	a := e.mustDial(cookie, d.ID, "a")
	cs := a.insert(0, strings.Repeat("y", 60<<10))
	a.push(cs)
	if m := a.until("updates"); len(m.Updates) != 1 {
		t.Fatalf("%+v", m)
	}
	a.sendJSON(map[string]any{"type": "cursor", "version": 1, "anchor": 0, "head": 0, "pad": strings.Repeat("z", 65<<10)})
	if code := a.closed(); code != websocket.StatusMessageTooBig {
		t.Fatalf("closed with %d, want 1009", code)
	}
}

// TestRefusedBeforeTheUpgrade: no session, another site's page, a
// document the person cannot see: no connection.
func TestRefusedBeforeTheUpgrade(t *testing.T) {
	e := newEnv(t, nil)
	ada, adaCookie := e.user("ada@example.com", "editor")
	_, bobCookie := e.user("bob@example.com", "editor")
	d, err := e.docs.Create(context.Background(), e.actor(ada), documents.DocumentInput{Title: documents.Some("Mine")})
	if err != nil {
		t.Fatal(err)
	}
	url := "ws" + strings.TrimPrefix(e.server.URL, "http") + "/documents/" + d.ID + "/live"
	for _, tc := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"signed out", http.Header{}, http.StatusUnauthorized},
		{"another person's private document", http.Header{"Cookie": {"auth_token=" + bobCookie}}, http.StatusNotFound},
		{"from another site", http.Header{"Cookie": {"auth_token=" + adaCookie}, "Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"from another site (fetch metadata)", http.Header{"Cookie": {"auth_token=" + adaCookie}, "Sec-Fetch-Site": {"cross-site"}},
			http.StatusForbidden},
	} {
		_, resp, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{HTTPHeader: tc.header})
		if err == nil || resp == nil || resp.StatusCode != tc.status {
			t.Errorf("%s: %v, %v; want %d", tc.name, resp, err, tc.status)
		}
	}
	// The owner from the site itself gets in.
	a := e.mustDial(adaCookie, d.ID, "a")
	if a.version != 0 {
		t.Fatal(a.version)
	}
}

// TestLosingAccessEndsTheConnection: a document made private closes the
// connection of someone who no longer sees it (4403), a sign-out too, a
// role without write makes an editor a reader, and the trash closes
// everyone (4404). The rights are checked every second: each close is
// bounded by a guard only, and the time it took is logged (at most about
// 2 s on an idle machine).
func TestLosingAccessEndsTheConnection(t *testing.T) {
	e := newEnv(t, nil)
	ada, adaCookie := e.user("ada@example.com", "editor")
	bob, bobCookie := e.user("bob@example.com", "editor")
	carl, carlCookie := e.user("carl@example.com", "editor")
	d := e.document(ada, "text")
	a := e.mustDial(adaCookie, d.ID, "a")
	b := e.mustDial(bobCookie, d.ID, "b")
	ctx := context.Background()

	start := time.Now()
	if _, err := e.docs.Update(ctx, e.actor(ada), d.ID, documents.DocumentInput{Visibility: documents.Some("private")}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if code := b.closed(); code != live.StatusAccess {
		t.Fatalf("bob's connection closed with %d, want 4403", code)
	}
	t.Logf("private: closed after %v", time.Since(start))
	if _, err := e.docs.Update(ctx, e.actor(ada), d.ID, documents.DocumentInput{Visibility: documents.Some("public")}, time.Time{}); err != nil {
		t.Fatal(err)
	}

	c := e.mustDial(carlCookie, d.ID, "c")
	start = time.Now()
	if err := e.auth.Logout(ctx, e.actorWithSession(carl, carlCookie)); err != nil {
		t.Fatal(err)
	}
	if code := c.closed(); code != live.StatusAccess {
		t.Fatalf("carl's connection closed with %d after signing out, want 4403", code)
	}
	t.Logf("sign-out: closed after %v", time.Since(start))

	b = e.mustDial(bobCookie, d.ID, "b2")
	start = time.Now()
	if err := e.users.SetRole(ctx, bob.Email, "viewer"); err != nil {
		t.Fatal(err)
	}
	if st := b.until("state"); !st.ReadOnly {
		t.Fatalf("bob as a viewer: %+v", st)
	}
	t.Logf("role without write: read-only after %v", time.Since(start))
	b.push(b.insert(0, "x"))
	if m := b.until("refused"); m.Reason != "readonly" {
		t.Fatalf("bob's push as a viewer: %+v", m)
	}

	start = time.Now()
	if err := e.docs.Delete(ctx, e.actor(ada), d.ID); err != nil {
		t.Fatal(err)
	}
	for _, cl := range []*client{a, b} {
		if code := cl.closed(); code != live.StatusTrashed {
			t.Fatalf("client %s closed with %d after the trash, want 4404", cl.id, code)
		}
	}
	t.Logf("trash: closed after %v", time.Since(start))
}

// actorWithSession is u as the session cookie authenticates it.
func (e *env) actorWithSession(u quire.User, cookie string) quire.Actor {
	e.t.Helper()
	a, err := e.auth.Authenticate(context.Background(), cookie)
	if err != nil || a.User.ID != u.ID {
		e.t.Fatalf("authenticate %s: %v", u.Email, err)
	}
	return a
}

// TestVersionsFromTheLiveText: the live text becomes a version when
// editing pauses 30 s (the injected clock), with one document.updated
// event for the save, not one per change, naming the authors; the stored
// changes are trimmed once saved; the last editor leaving saves at once,
// and the document leaves memory.
func TestVersionsFromTheLiveText(t *testing.T) {
	e := newEnv(t, nil)
	ada, adaCookie := e.user("ada@example.com", "editor")
	bob, bobCookie := e.user("bob@example.com", "editor")
	d := e.document(ada, "")
	ctx := context.Background()
	a := e.mustDial(adaCookie, d.ID, "a")
	b := e.mustDial(bobCookie, d.ID, "b")
	for i := range 5 {
		cl := []*client{a, b}[i%2]
		other := []*client{a, b}[(i+1)%2]
		cl.push(cl.insert(utf16Len(cl.text), string(rune('1'+i))))
		cl.receive(cl.until("updates"))
		other.receive(other.until("updates"))
	}
	versions := func() []quire.Version {
		vs, err := e.docs.Versions(ctx, e.actor(ada), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	if n := len(versions()); n != 1 {
		t.Fatalf("%d versions before the pause", n)
	}
	e.clock.Advance(29 * time.Second)
	time.Sleep(50 * time.Millisecond) // a few ticks: nothing is due yet
	if n := len(versions()); n != 1 {
		t.Fatalf("%d versions 29 s after the last change", n)
	}
	e.clock.Advance(time.Second)
	eventually(t, "a version 30 s after the last change", func() bool { return len(versions()) == 2 })
	got, err := e.docs.Get(ctx, e.actor(ada), d.ID)
	if err != nil || got.Content != "12345" {
		t.Fatalf("the document after the save: %+v, %v", got, err)
	}
	evs, err := e.store.AuditEvents(ctx, quire.AuditFilter{Action: quire.ActionDocumentUpdated, TargetID: d.ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d document.updated events, want one for the save", len(evs))
	}
	authors, _ := json.Marshal(evs[0].Details["authors"])
	if string(authors) != `["`+bob.ID+`","`+ada.ID+`"]` && string(authors) != `["`+ada.ID+`","`+bob.ID+`"]` {
		t.Errorf("authors of the save: %s", authors)
	}
	if _, err := e.store.LiveChangesSince(ctx, quire.Visibility{All: true}, d.ID, 0, 10); !errors.Is(err, quire.ErrLiveTrimmed) {
		t.Errorf("the saved changes are still stored: %v", err)
	}
	// Nothing new: no version more, whatever the clock.
	e.clock.Advance(time.Hour)
	time.Sleep(50 * time.Millisecond)
	if n := len(versions()); n != 2 {
		t.Fatalf("%d versions without a change", n)
	}

	// The last editor leaving saves at once.
	a.push(a.insert(0, "!"))
	a.receive(a.until("updates"))
	b.receive(b.until("updates"))
	a.ws.Close(websocket.StatusNormalClosure, "")
	b.ws.Close(websocket.StatusNormalClosure, "")
	eventually(t, "a version when the last editor left", func() bool { return len(versions()) == 3 })
	eventually(t, "the document out of memory", func() bool { return e.live.Sessions() == 0 })
	if got, _ := e.docs.Get(ctx, e.actor(ada), d.ID); got.Content != "!12345" {
		t.Fatalf("saved %q", got.Content)
	}
	// A new connection starts from the saved text.
	a = e.mustDial(adaCookie, d.ID, "a2")
	if a.text != "!12345" || a.version != 6 {
		t.Fatalf("after the save: %q at %d", a.text, a.version)
	}
}

// TestEditingTenMinutesMakesVersions: changes that never pause for 30 s
// are saved at least every 10 minutes.
func TestEditingTenMinutesMakesVersions(t *testing.T) {
	e := newEnv(t, nil)
	ada, cookie := e.user("ada@example.com", "editor")
	d := e.document(ada, "")
	a := e.mustDial(cookie, d.ID, "a")
	for range 25 { // one change every 25 s: 10 min
		a.push(a.insert(0, "x"))
		a.receive(a.until("updates"))
		e.clock.Advance(25 * time.Second)
	}
	eventually(t, "a version after 10 minutes of editing", func() bool {
		vs, err := e.docs.Versions(context.Background(), e.actor(ada), d.ID)
		return err == nil && len(vs) == 2
	})
}

// TestReconnectWithVersion: a client that comes back with its version
// gets the updates it missed, or the state when its version is not one
// of the document's.
func TestReconnectWithVersion(t *testing.T) {
	e := newEnv(t, nil)
	ada, adaCookie := e.user("ada@example.com", "editor")
	_, bobCookie := e.user("bob@example.com", "editor")
	d := e.document(ada, "ab")
	a := e.mustDial(adaCookie, d.ID, "a")
	b := e.mustDial(bobCookie, d.ID, "b")
	b.ws.Close(websocket.StatusNormalClosure, "")
	for range 3 {
		a.push(a.insert(1, "-"))
		a.receive(a.until("updates"))
	}
	v := 0
	b2, err := e.dial(bobCookie, d.ID, "b", &v)
	if err != nil {
		t.Fatal(err)
	}
	b2.text = "ab"
	m := b2.until("updates")
	b2.receive(m)
	if b2.text != a.text || b2.version != 3 || m.Updates[0].User == "" {
		t.Fatalf("reconnected at 0: %q at %d (%+v), want %q at 3", b2.text, b2.version, m, a.text)
	}
	bad := 99
	b3, err := e.dial(bobCookie, d.ID, "b", &bad)
	if err != nil {
		t.Fatal(err)
	}
	if st := b3.until("state"); st.Text != a.text || st.Version != 3 {
		t.Fatalf("reconnected at 99: %+v", st)
	}
}

// TestPresenceAndCursors: presence lists who is there and who edits
// (distinct people), through the socket and the API; cursors come with
// names; a 51st editor follows read-only.
func TestPresenceAndCursors(t *testing.T) {
	e := newEnv(t, nil)
	ada, adaCookie := e.user("ada@example.com", "editor")
	bob, bobCookie := e.user("bob@example.com", "viewer")
	d := e.document(ada, "hello")
	a := e.mustDial(adaCookie, d.ID, "a")
	b := e.mustDial(bobCookie, d.ID, "b")
	eventually(t, "presence of both", func() bool {
		p, err := e.live.Presence(context.Background(), e.actor(bob), d.ID)
		return err == nil && len(p.Viewing) == 2
	})
	p, err := e.live.Presence(context.Background(), e.actor(bob), d.ID)
	want := &live.Presence{Viewing: []live.Person{{ID: ada.ID, Name: "Ada"}, {ID: bob.ID, Name: "Bob"}},
		Editing: []live.Person{{ID: ada.ID, Name: "Ada"}}}
	if err != nil || !slices.Equal(p.Viewing, want.Viewing) || !slices.Equal(p.Editing, want.Editing) {
		t.Fatalf("presence %+v, %v", p, err)
	}
	// The API's route, as JSON.
	req, _ := http.NewRequest("GET", e.server.URL+"/api/documentation/documents/"+d.ID+"/presence", nil)
	req.Header.Set("Cookie", "auth_token="+bobCookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Viewing, Editing []live.Person }
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !slices.Equal(body.Viewing, want.Viewing) || !slices.Equal(body.Editing, want.Editing) {
		t.Fatalf("GET presence: %d %+v %v", resp.StatusCode, body, err)
	}

	a.sendJSON(map[string]any{"type": "cursor", "version": 0, "anchor": 1, "head": 3})
	a.sendJSON(map[string]any{"type": "cursor", "version": 0, "anchor": 9, "head": 3}) // beyond the text: dropped
	for {
		m := b.until("cursors")
		if len(m.Cursors) == 1 && m.Cursors[0].Client == "a" && m.Cursors[0].User == (person{ada.ID, "Ada"}) &&
			m.Cursors[0].Anchor == 1 && m.Cursors[0].Head == 3 {
			break
		}
		t.Fatalf("cursors %+v", m)
	}

	// 50 editors at most: ada holds one seat, 49 more connections of
	// hers take the rest, the next follows read-only.
	for i := range 49 {
		e.mustDial(adaCookie, d.ID, "s"+string(rune('A'+i/26))+string(rune('a'+i%26)))
	}
	extra, err := e.dial(adaCookie, d.ID, "extra", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := extra.until("state"); !st.ReadOnly {
		t.Fatalf("the 51st editor: %+v", st)
	}
}
