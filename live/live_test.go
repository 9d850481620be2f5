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
	"quire/live/livetest"
	"quire/notify"
)

// TestConcurrentPushesConverge: two editors push on the same count at
// once; one is confirmed, the other refused as behind, rebases over the
// first (changeset.Map) and is confirmed next. Both, and a reader who
// follows, end with the same text, which is the replay of the stored
// changes.
func TestConcurrentPushesConverge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	_, bobCookie := e.User("bob@example.com", "editor")
	carl, carlCookie := e.User("carl@example.com", "viewer")
	d := e.Document(ada, "hello wörld 😀")

	a := e.MustDial(adaCookie, d.ID, "a")
	b := e.MustDial(bobCookie, d.ID, "b")
	c, err := e.Dial(carlCookie, d.ID, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := c.Until("state")
	c.Text, c.Version = st.Text, st.Version
	if !st.ReadOnly || st.You != (livetest.Person{ID: carl.ID, Name: "Carl"}) || st.Text != "hello wörld 😀" {
		t.Fatalf("the reader's state: %+v", st)
	}

	a.Push(a.Insert(0, "A says: "))
	b.Push(b.Insert(livetest.UTF16Len(b.Text), " (bob)"))
	// Each waits for its own change to come back, rebasing and pushing
	// again when refused.
	a.Confirm()
	b.Confirm()
	if a.Behind+b.Behind != 1 {
		t.Errorf("%d pushes refused as behind, want 1", a.Behind+b.Behind)
	}
	want := "A says: hello wörld 😀 (bob)"
	for _, cl := range []*livetest.Client{a, b, c} {
		cl.CatchUp(2)
		if cl.Text != want || cl.Version != 2 {
			t.Errorf("client %s has %q at %d, want %q at 2", cl.ID, cl.Text, cl.Version, want)
		}
	}
	if got := livetest.Replay(t, e.Store, d.ID); got != want {
		t.Errorf("the stored changes replay to %q, want %q", got, want)
	}
	// The reader may not push.
	c.Push(c.Insert(0, "x"))
	if m := c.Until("refused"); m.Reason != "readonly" || m.Version != 2 {
		t.Errorf("the reader's push: %+v", m)
	}
}

// TestPushesThatDoNotApplyAreRefused: a change of the wrong length, a
// position cutting an emoji, a count the server never had and a text
// over the size limit are refused; all but the last with a state.
func TestPushesThatDoNotApplyAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *live.Config) { c.MaxText = 100 })
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "😀 ok")
	a := e.MustDial(cookie, d.ID, "a")
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
		"future count":    map[string]any{"type": "push", "version": 7, "updates": []any{map[string]any{"changes": a.Insert(0, "x")}}},
		"no changes":      map[string]any{"type": "push", "version": 0, "updates": []any{}},
		"no version":      map[string]any{"type": "push", "updates": []any{map[string]any{"changes": a.Insert(0, "x")}}},
	} {
		a.SendJSON(push)
		if m := a.Until("refused"); m.Reason != "invalid" || m.Version != 0 {
			t.Errorf("%s: %+v", name, m)
		}
		if m := a.Until("state"); m.Text != "😀 ok" || m.Version != 0 {
			t.Errorf("%s: state %+v", name, m)
		}
	}
	a.Push(a.Insert(0, strings.Repeat("x", 100)))
	if m := a.Until("refused"); m.Reason != "too_large" {
		t.Errorf("over the size limit: %+v", m)
	}
	if got := livetest.Replay(t, e.Store, d.ID); got != "😀 ok" {
		t.Errorf("stored %q after refusals", got)
	}
}

// TestMessageOver64KiBCloses: a message over 64 KiB closes the connection
// with 1009; one just under is read.
func TestMessageOver64KiBCloses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "")
	a := e.MustDial(cookie, d.ID, "a")
	cs := a.Insert(0, strings.Repeat("y", 60<<10))
	a.Push(cs)
	if m := a.Until("updates"); len(m.Updates) != 1 {
		t.Fatalf("%+v", m)
	}
	a.SendJSON(map[string]any{"type": "cursor", "version": 1, "anchor": 0, "head": 0, "pad": strings.Repeat("z", 65<<10)})
	if code := a.Closed(); code != websocket.StatusMessageTooBig {
		t.Fatalf("closed with %d, want 1009", code)
	}
}

// TestRefusedBeforeTheUpgrade: no session, another site's page, a
// document the person cannot see: no connection.
func TestRefusedBeforeTheUpgrade(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	_, bobCookie := e.User("bob@example.com", "editor")
	d, err := e.Docs.Create(context.Background(), e.Actor(ada), documents.DocumentInput{Title: documents.Some("Mine")})
	if err != nil {
		t.Fatal(err)
	}
	url := "ws" + strings.TrimPrefix(e.Server.URL, "http") + "/documents/" + d.ID + "/live"
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
	a := e.MustDial(adaCookie, d.ID, "a")
	if a.Version != 0 {
		t.Fatal(a.Version)
	}
}

// TestLosingAccessEndsTheConnection: a document made private closes the
// connection of someone who no longer sees it (4403), a sign-out and a
// disabled account too, a role without write makes an editor a reader, and the trash closes
// everyone (4404). The rights are checked every second: each close is
// bounded by a guard only, and the time it took is logged (at most about
// 2 s on an idle machine).
func TestLosingAccessEndsTheConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	bob, bobCookie := e.User("bob@example.com", "editor")
	carl, carlCookie := e.User("carl@example.com", "editor")
	d := e.Document(ada, "text")
	a := e.MustDial(adaCookie, d.ID, "a")
	b := e.MustDial(bobCookie, d.ID, "b")
	ctx := context.Background()

	start := time.Now()
	if _, err := e.Docs.Update(ctx, e.Actor(ada), d.ID, documents.DocumentInput{Visibility: documents.Some("private")}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if code := b.Closed(); code != live.StatusAccess {
		t.Fatalf("bob's connection closed with %d, want 4403", code)
	}
	t.Logf("private: closed after %v", time.Since(start))
	if _, err := e.Docs.Update(ctx, e.Actor(ada), d.ID, documents.DocumentInput{Visibility: documents.Some("public")}, time.Time{}); err != nil {
		t.Fatal(err)
	}

	c := e.MustDial(carlCookie, d.ID, "c")
	start = time.Now()
	if err := e.Auth.Logout(ctx, actorWithSession(t, e, carl, carlCookie)); err != nil {
		t.Fatal(err)
	}
	if code := c.Closed(); code != live.StatusAccess {
		t.Fatalf("carl's connection closed with %d after signing out, want 4403", code)
	}
	t.Logf("sign-out: closed after %v", time.Since(start))

	dan, danCookie := e.User("dan@example.com", "editor")
	dc := e.MustDial(danCookie, d.ID, "d")
	start = time.Now()
	if err := e.Auth.Disable(ctx, dan.Email); err != nil {
		t.Fatal(err)
	}
	if code := dc.Closed(); code != live.StatusAccess {
		t.Fatalf("dan's connection closed with %d once disabled, want 4403", code)
	}
	t.Logf("disabled: closed after %v", time.Since(start))

	b = e.MustDial(bobCookie, d.ID, "b2")
	start = time.Now()
	if err := e.Auth.SetRole(ctx, bob.Email, "viewer"); err != nil {
		t.Fatal(err)
	}
	if st := b.Until("state"); !st.ReadOnly {
		t.Fatalf("bob as a viewer: %+v", st)
	}
	t.Logf("role without write: read-only after %v", time.Since(start))
	b.Push(b.Insert(0, "x"))
	if m := b.Until("refused"); m.Reason != "readonly" {
		t.Fatalf("bob's push as a viewer: %+v", m)
	}

	start = time.Now()
	if err := e.Docs.Delete(ctx, e.Actor(ada), d.ID); err != nil {
		t.Fatal(err)
	}
	for _, cl := range []*livetest.Client{a, b} {
		if code := cl.Closed(); code != live.StatusTrashed {
			t.Fatalf("client %s closed with %d after the trash, want 4404", cl.ID, code)
		}
	}
	t.Logf("trash: closed after %v", time.Since(start))
}

// actorWithSession is u as the session cookie authenticates it.
func actorWithSession(t *testing.T, e *livetest.Node, u quire.User, cookie string) quire.Actor {
	t.Helper()
	a, err := e.Auth.Authenticate(context.Background(), cookie)
	if err != nil || a.User.ID != u.ID {
		t.Fatalf("authenticate %s: %v", u.Email, err)
	}
	return a
}

// TestVersionsFromTheLiveText: the live text becomes a version when
// editing pauses 30 s (the injected clock), with one document.updated
// event for the save, not one per change, naming the authors; the stored
// changes are trimmed once saved; the last editor leaving saves at once,
// and the document leaves memory.
func TestVersionsFromTheLiveText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	bob, bobCookie := e.User("bob@example.com", "editor")
	d := e.Document(ada, "")
	ctx := context.Background()
	notices := notify.New(e.Store, notify.Config{Now: e.Clock.Now, Key: []byte("k"), PublicURL: "http://docs.example.test"})
	queued := func() int {
		t.Helper()
		n, err := notices.FanOut(ctx, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	queued() // the document's creation
	a := e.MustDial(adaCookie, d.ID, "a")
	b := e.MustDial(bobCookie, d.ID, "b")
	for i := range 5 {
		cl := []*livetest.Client{a, b}[i%2]
		other := []*livetest.Client{a, b}[(i+1)%2]
		cl.Push(cl.Insert(livetest.UTF16Len(cl.Text), string(rune('1'+i))))
		cl.Receive(cl.Until("updates"))
		other.Receive(other.Until("updates"))
	}
	versions := func() []quire.Version {
		vs, err := e.Docs.Versions(ctx, e.Actor(ada), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	if n := len(versions()); n != 1 {
		t.Fatalf("%d versions before the pause", n)
	}
	e.Clock.Advance(29 * time.Second)
	time.Sleep(50 * time.Millisecond) // a few ticks: nothing is due yet
	if n := len(versions()); n != 1 {
		t.Fatalf("%d versions 29 s after the last change", n)
	}
	e.Clock.Advance(time.Second)
	livetest.Eventually(t, "a version 30 s after the last change", func() bool { return len(versions()) == 2 })
	got, err := e.Docs.Get(ctx, e.Actor(ada), d.ID)
	if err != nil || got.Content != "12345" {
		t.Fatalf("the document after the save: %+v, %v", got, err)
	}
	evs, err := e.Store.AuditEvents(ctx, quire.AuditFilter{Action: quire.ActionDocumentUpdated, TargetID: d.ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d document.updated events, want one for the save", len(evs))
	}
	if n := queued(); n != 1 {
		t.Fatalf("%d events queued for notifications, want one for the save", n)
	}
	authors, _ := json.Marshal(evs[0].Details["authors"])
	if string(authors) != `["`+bob.ID+`","`+ada.ID+`"]` && string(authors) != `["`+ada.ID+`","`+bob.ID+`"]` {
		t.Errorf("authors of the save: %s", authors)
	}
	if _, err := e.Store.LiveChangesSince(ctx, quire.Visibility{All: true}, d.ID, 0, 10); !errors.Is(err, quire.ErrLiveTrimmed) {
		t.Errorf("the saved changes are still stored: %v", err)
	}
	// Nothing new: no version more, whatever the clock.
	e.Clock.Advance(time.Hour)
	time.Sleep(50 * time.Millisecond)
	if n := len(versions()); n != 2 {
		t.Fatalf("%d versions without a change", n)
	}

	// The last editor leaving saves at once.
	a.Push(a.Insert(0, "!"))
	a.Receive(a.Until("updates"))
	b.Receive(b.Until("updates"))
	a.WS.Close(websocket.StatusNormalClosure, "")
	b.WS.Close(websocket.StatusNormalClosure, "")
	livetest.Eventually(t, "a version when the last editor left", func() bool { return len(versions()) == 3 })
	livetest.Eventually(t, "the document out of memory", func() bool { return e.Live.Sessions() == 0 })
	if got, _ := e.Docs.Get(ctx, e.Actor(ada), d.ID); got.Content != "!12345" {
		t.Fatalf("saved %q", got.Content)
	}
	// A new connection starts from the saved text.
	a = e.MustDial(adaCookie, d.ID, "a2")
	if a.Text != "!12345" || a.Version != 6 {
		t.Fatalf("after the save: %q at %d", a.Text, a.Version)
	}
}

// TestEditingTenMinutesMakesVersions: changes that never pause for 30 s
// are saved at least every 10 minutes.
func TestEditingTenMinutesMakesVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "")
	a := e.MustDial(cookie, d.ID, "a")
	for range 25 { // one change every 25 s: 10 min
		a.Push(a.Insert(0, "x"))
		a.Receive(a.Until("updates"))
		e.Clock.Advance(25 * time.Second)
	}
	livetest.Eventually(t, "a version after 10 minutes of editing", func() bool {
		vs, err := e.Docs.Versions(context.Background(), e.Actor(ada), d.ID)
		return err == nil && len(vs) == 2
	})
}

// TestReconnectWithVersion: a client that comes back with its version
// gets the updates it missed, or the state when its version is not one
// of the document's.
func TestReconnectWithVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	_, bobCookie := e.User("bob@example.com", "editor")
	d := e.Document(ada, "ab")
	a := e.MustDial(adaCookie, d.ID, "a")
	b := e.MustDial(bobCookie, d.ID, "b")
	b.WS.Close(websocket.StatusNormalClosure, "")
	for range 3 {
		a.Push(a.Insert(1, "-"))
		a.Receive(a.Until("updates"))
	}
	v := 0
	b2, err := e.Dial(bobCookie, d.ID, "b", &v)
	if err != nil {
		t.Fatal(err)
	}
	b2.Text = "ab"
	m := b2.Until("updates")
	b2.Receive(m)
	if b2.Text != a.Text || b2.Version != 3 || m.Updates[0].User == "" {
		t.Fatalf("reconnected at 0: %q at %d (%+v), want %q at 3", b2.Text, b2.Version, m, a.Text)
	}
	bad := 99
	b3, err := e.Dial(bobCookie, d.ID, "b", &bad)
	if err != nil {
		t.Fatal(err)
	}
	if st := b3.Until("state"); st.Text != a.Text || st.Version != 3 {
		t.Fatalf("reconnected at 99: %+v", st)
	}
}

// TestPresenceAndCursors: presence lists who is there and who edits
// (distinct people), through the socket and the API; cursors come with
// names; a 51st editor follows read-only.
func TestPresenceAndCursors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *live.Config) { c.MaxPerPerson = 60 })
	ada, adaCookie := e.User("ada@example.com", "editor")
	bob, bobCookie := e.User("bob@example.com", "viewer")
	d := e.Document(ada, "hello")
	a := e.MustDial(adaCookie, d.ID, "a")
	b := e.MustDial(bobCookie, d.ID, "b")
	livetest.Eventually(t, "presence of both", func() bool {
		p, err := e.Live.Presence(context.Background(), e.Actor(bob), d.ID)
		return err == nil && len(p.Viewing) == 2
	})
	p, err := e.Live.Presence(context.Background(), e.Actor(bob), d.ID)
	want := &live.Presence{Viewing: []live.Person{{ID: ada.ID, Name: "Ada"}, {ID: bob.ID, Name: "Bob"}},
		Editing: []live.Person{{ID: ada.ID, Name: "Ada"}}}
	if err != nil || !slices.Equal(p.Viewing, want.Viewing) || !slices.Equal(p.Editing, want.Editing) {
		t.Fatalf("presence %+v, %v", p, err)
	}
	// The API's route, as JSON.
	req, _ := http.NewRequest("GET", e.Server.URL+"/api/documentation/documents/"+d.ID+"/presence", nil)
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

	// Bob follows read-only: his selection is not shown to the others.
	// His push, refused, comes after his cursor on his connection: once
	// he has the refusal, the server has read the cursor.
	b.SendJSON(map[string]any{"type": "cursor", "version": 0, "anchor": 0, "head": 2})
	b.Push(b.Insert(0, "x"))
	if m := b.Until("refused"); m.Reason != "readonly" {
		t.Fatalf("bob's push: %+v", m)
	}
	b.Pending = nil
	a.SendJSON(map[string]any{"type": "cursor", "version": 0, "anchor": 1, "head": 3})
	a.SendJSON(map[string]any{"type": "cursor", "version": 0, "anchor": 9, "head": 3}) // beyond the text: dropped
	for _, cl := range []*livetest.Client{a, b} {
		m := cl.Until("cursors")
		if len(m.Cursors) != 1 || m.Cursors[0].Client != "a" || m.Cursors[0].User != (livetest.Person{ID: ada.ID, Name: "Ada"}) ||
			m.Cursors[0].Anchor != 1 || m.Cursors[0].Head != 3 {
			t.Fatalf("client %s got the cursors %+v, want Ada's alone", cl.ID, m)
		}
	}

	// 50 editors at most: ada holds one seat, 49 more connections of
	// hers take the rest, the next follows read-only.
	for i := range 49 {
		e.MustDial(adaCookie, d.ID, "s"+string(rune('A'+i/26))+string(rune('a'+i%26)))
	}
	extra, err := e.Dial(adaCookie, d.ID, "extra", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := extra.Until("state"); !st.ReadOnly {
		t.Fatalf("the 51st editor: %+v", st)
	}
}

// TestConnectionsArePerPersonBounded: a person's connections beyond the
// bound are refused before the upgrade, with Retry-After; another person
// still gets in.
func TestConnectionsArePerPersonBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *live.Config) { c.MaxPerPerson = 3 })
	ada, adaCookie := e.User("ada@example.com", "editor")
	_, bobCookie := e.User("bob@example.com", "editor")
	d := e.Document(ada, "")
	for i := range 3 {
		e.MustDial(adaCookie, d.ID, string(rune('a'+i)))
	}
	_, resp, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(e.Server.URL, "http")+"/documents/"+d.ID+"/live",
		&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {"auth_token=" + adaCookie}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a 4th connection: %v, %v", resp, err)
	}
	e.MustDial(bobCookie, d.ID, "bob")
}

// TestAPIWritesDuringASessionAreOneChange: a PUT through the API and a
// version restore while two people edit live reach both editors as one
// update (never a state), a change pushed before them and stored after
// them is rebased and kept, a stale baseUpdatedAt is still 409 and
// changes nothing, and the versions saved from the live text hold both.
func TestAPIWritesDuringASessionAreOneChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	_, bobCookie := e.User("bob@example.com", "editor")
	d := e.Document(ada, "hello world")
	a := e.MustDial(adaCookie, d.ID, "a")
	b := e.MustDial(bobCookie, d.ID, "b")
	a.Push(a.Insert(0, "A: "))
	a.Confirm()
	b.CatchUp(1)

	api := func(method, path, body string) (int, map[string]json.RawMessage) {
		t.Helper()
		return e.API(adaCookie, method, path, body)
	}
	var doc struct {
		Content   string `json:"content"`
		UpdatedAt string `json:"updated_at"`
	}
	readDoc := func(raw json.RawMessage) {
		t.Helper()
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
	}
	_, got := api("GET", "/api/documentation/documents/"+d.ID, "")
	readDoc(got["document"])
	base := doc.UpdatedAt

	// Bob's change is made on count 1 and reaches the server after the PUT.
	b.Pending = append(b.Pending, b.Insert(livetest.UTF16Len(b.Text), " (bob)"))
	code, got := api("PUT", "/api/documentation/documents/"+d.ID, `{"content":"hello there","baseUpdatedAt":"`+base+`"}`)
	if code != http.StatusOK {
		t.Fatalf("PUT during the session: %d %s", code, got["code"])
	}
	readDoc(got["document"])
	if doc.Content != "hello there" {
		t.Fatalf("the PUT answered %q", doc.Content)
	}
	// Bob's push is refused as behind; he receives the PUT as an update,
	// rebases his change over it and pushes it again (Confirm fails on a
	// state).
	b.SendPending()
	b.Confirm()
	// Ada gets the PUT as one update of the server's client.
	m := a.Until("updates")
	if len(m.Updates) != 1 || m.Updates[0].Client != "quire" || m.Updates[0].User != ada.ID || m.Version != 1 {
		t.Fatalf("ada got %+v", m)
	}
	a.Receive(m)
	if a.Text != "hello there" {
		t.Fatalf("ada has %q after the PUT", a.Text)
	}
	a.CatchUp(3)
	want := "hello there (bob)"
	if a.Text != want || b.Text != want || b.Behind != 1 {
		t.Fatalf("ada has %q, bob %q (%d refused), want %q", a.Text, b.Text, b.Behind, want)
	}
	// The PUT's change is stored at the time of the write, from the
	// documents service's clock (the test's, hours from the wall clock).
	stored, err := e.Store.LiveChangesSince(context.Background(), quire.Visibility{All: true}, d.ID, 1, 1)
	if err != nil || len(stored) != 1 || stored[0].ClientID != "quire" {
		t.Fatalf("the stored change of the PUT: %+v, %v", stored, err)
	}
	if at := stored[0].CreatedAt.Format(time.RFC3339Nano); at != doc.UpdatedAt {
		t.Errorf("the PUT's change is stored at %s, the write's updated_at is %s", at, doc.UpdatedAt)
	}

	// A stale base is 409 and changes nothing.
	code, got = api("PUT", "/api/documentation/documents/"+d.ID, `{"content":"stale","baseUpdatedAt":"`+base+`"}`)
	if code != http.StatusConflict || !strings.Contains(string(got["code"]), "DOCUMENT_CONFLICT") {
		t.Fatalf("a stale PUT: %d %s", code, got["code"])
	}
	if r := livetest.Replay(t, e.Store, d.ID); r != want {
		t.Fatalf("after a stale PUT the live text is %q", r)
	}

	// A restore of version 1 is one change too.
	code, got = api("POST", "/api/documentation/documents/"+d.ID+"/versions/1/restore", "")
	if code != http.StatusOK {
		t.Fatalf("restore during the session: %d %s", code, got["code"])
	}
	for _, cl := range []*livetest.Client{a, b} {
		m := cl.Until("updates")
		cl.Receive(m)
		if cl.Text != "hello world" || len(m.Updates) != 1 || m.Updates[0].Client != "quire" {
			t.Fatalf("client %s after the restore: %q, %+v", cl.ID, cl.Text, m)
		}
	}
	a.Push(a.Insert(0, "!"))
	a.Confirm()
	b.CatchUp(a.Version)

	// The live text becomes a version with everything.
	e.Clock.Advance(time.Minute)
	livetest.Eventually(t, "the live text saved", func() bool {
		d, err := e.Docs.Get(context.Background(), e.Actor(ada), d.ID)
		return err == nil && d.Content == "!hello world"
	})
	// No editor was sent the state again.
	a.WS.Close(websocket.StatusNormalClosure, "")
	b.WS.Close(websocket.StatusNormalClosure, "")
	livetest.Eventually(t, "the document out of memory", func() bool { return e.Live.Sessions() == 0 })
	if c := e.MustDial(adaCookie, d.ID, "c"); c.Text != "!hello world" || c.Version != a.Version {
		t.Fatalf("rebuilt %q at %d, want %q at %d", c.Text, c.Version, a.Text, a.Version)
	}
}

// TestShutdownSavesAndSaysGoingAway: a server that shuts down closes its
// live connections with 1001, saves the texts not yet in a version, and
// takes no new connection.
func TestShutdownSavesAndSaysGoingAway(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "text")
	a := e.MustDial(cookie, d.ID, "a")
	r := e.MustDial(cookie, d.ID, "reader")
	a.Push(a.Insert(0, "more "))
	a.Confirm()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Live.Shutdown(context.Background())
	}()
	for _, cl := range []*livetest.Client{a, r} {
		if code := cl.Closed(); code != websocket.StatusGoingAway {
			t.Fatalf("client %s closed with %d, want 1001", cl.ID, code)
		}
	}
	<-done
	if got, err := e.Docs.Get(context.Background(), e.Actor(ada), d.ID); err != nil || got.Content != "more text" {
		t.Fatalf("after the shutdown: %+v, %v", got, err)
	}
	late, err := e.Dial(cookie, d.ID, "late", nil)
	if err != nil {
		t.Fatal(err)
	}
	if code := late.Closed(); code != websocket.StatusGoingAway {
		t.Fatalf("a connection after the shutdown closed with %d, want 1001", code)
	}
}

// TestCommentAnchorsFollowLiveEdits: threads anchored on quotes of a
// document edited live keep their places until the live text is saved;
// at that save (a version from the live text, through the hook every write
// of the content runs) a quote moved by live edits is found where it went
// and one the edits deleted becomes outdated.
func TestCommentAnchorsFollowLiveEdits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "alpha beta gamma delta")
	for _, quote := range []string{"alpha", "beta", "gamma"} {
		var out map[string]any
		e.MustAPI(cookie, "POST", "/api/documentation/documents/"+d.ID+"/comments", `{"body":"on `+quote+`","anchor":{"quote":"`+quote+`"}}`,
			"comment", &out)
	}
	threads := func() string {
		t.Helper()
		var threads []struct {
			Anchor struct {
				Quote string `json:"quote"`
				State string `json:"state"`
			} `json:"anchor"`
		}
		e.MustAPI(cookie, "GET", "/api/documentation/documents/"+d.ID+"/comments", "", "threads", &threads)
		var s []string
		for _, th := range threads {
			s = append(s, th.Anchor.Quote+":"+th.Anchor.State)
		}
		return strings.Join(s, " ")
	}
	if got := threads(); got != "alpha:attached beta:attached gamma:attached" {
		t.Fatalf("threads before: %s", got)
	}
	// Live: "alpha " is deleted and "beta " moves after "delta".
	a := e.MustDial(cookie, d.ID, "a")
	del, err := changeset.Replace(livetest.UTF16Len(a.Text), 0, len("alpha beta "), "")
	if err != nil {
		t.Fatal(err)
	}
	a.Push(del)
	a.Confirm()
	a.Push(a.Insert(livetest.UTF16Len(a.Text), " beta"))
	a.Confirm()
	if a.Text != "gamma delta beta" {
		t.Fatalf("the live text: %q", a.Text)
	}
	// Not saved yet: the anchors are where the stored content has them.
	if got := threads(); got != "alpha:attached beta:attached gamma:attached" {
		t.Fatalf("threads before the save: %s", got)
	}
	e.Clock.Advance(time.Minute)
	livetest.Eventually(t, "the live text saved", func() bool {
		got, err := e.Docs.Get(context.Background(), e.Actor(ada), d.ID)
		return err == nil && got.Content == a.Text
	})
	if got := threads(); got != "gamma:attached beta:attached alpha:outdated" {
		t.Fatalf("threads after the save: %s", got)
	}
}

// TestLargeMessagesReachTheClients: the server's messages are bounded by
// the text's size limit, not by the 64 KiB of a client's message nor by
// the bytes a connection may have waiting: the state of a large text of
// '<' and '>' is sent unescaped (one byte a character), and a write of a
// large content through the API reaches an editor as one change, though
// each passes the queue's bound (1 MiB here).
func TestLargeMessagesReachTheClients(t *testing.T) {
	t.Parallel()
	// Each message is larger than the queue's bound (64 KiB here, 8 MiB
	// in production): 75 KiB of state, 96 KiB written through the API.
	e := newEnv(t, func(c *live.Config) { c.QueueBytes = 64 << 10 })
	ada, cookie := e.User("ada@example.com", "editor")
	content := strings.Repeat("<a>", 25<<10)
	d := e.Document(ada, content)
	a, err := e.Dial(cookie, d.ID, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := a.WS.Read(t.Context())
		if err != nil {
			t.Fatalf("waiting for the state: %v", err)
		}
		var m livetest.Message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if m.Type != "state" {
			continue
		}
		if m.Text != content || len(data) > len(content)+1024 {
			t.Fatalf("the state holds %d bytes of text in %d bytes, want %d in about as many", len(m.Text), len(data), len(content))
		}
		a.Text, a.Version = m.Text, m.Version
		break
	}

	var doc struct {
		UpdatedAt string `json:"updated_at"`
	}
	e.MustAPI(cookie, "GET", "/api/documentation/documents/"+d.ID, "", "document", &doc)
	written := strings.Repeat("x", 96<<10)
	if code, got := e.API(cookie, "PUT", "/api/documentation/documents/"+d.ID,
		`{"content":"`+written+`","baseUpdatedAt":"`+doc.UpdatedAt+`"}`); code != http.StatusOK {
		t.Fatalf("PUT: %d %s", code, got["code"])
	}
	m := a.Until("updates")
	a.Receive(m)
	if len(m.Updates) != 1 || m.Updates[0].Client != "quire" || a.Text != written {
		t.Fatalf("the PUT reached the editor as %d updates, its text %d bytes, want one change to %d", len(m.Updates), len(a.Text), len(written))
	}
}
