package live_test

import (
	"testing"
	"time"

	"quire/live"
	"quire/live/livetest"
)

// TestNothingAppliedTwiceAfterAResync: a change the server stored but
// whose confirmation the editor never got, then saved into a version and
// trimmed, is applied once when the editor comes back to the whole text
// (livetest.LoseConfirmation), on a node started afresh on the same
// database (a restart).
func TestNothingAppliedTwiceAfterAResync(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "hello")
	restarted := livetest.Start(t, e.Store, e.Clock, nil)
	livetest.LoseConfirmation(t, e, restarted, cookie, d.ID)
}

// TestStateCatchesUpWithTheClientsChange: the number a state carries
// matches its text even when another node stored the client's change and
// this node has not heard of it (a wake-up lost: two nodes on one SQLite
// file, each waking only itself). Node 2 holds the document for Bob; Ada
// pushes on node 1, loses the confirmation, and node 1 saves and trims as
// she leaves. She comes back on node 2 asking for the whole text, her
// change still pending: node 2 reads the store first, and its state holds
// her change and says so; Bob gets the text too.
func TestStateCatchesUpWithTheClientsChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ada, adaCookie := e.User("ada@example.com", "editor")
	_, bobCookie := e.User("bob@example.com", "editor")
	d := e.Document(ada, "hello")
	other := livetest.Start(t, e.Store, e.Clock, func(c *live.Config) { c.Recheck = time.Hour })
	b := other.MustDial(bobCookie, d.ID, "bob-tab")
	a := e.MustDial(adaCookie, d.ID, "ada-tab")
	a.Numbered = true
	a.Push(a.Insert(5, " world"))
	livetest.Eventually(t, "the push is stored", func() bool { return livetest.Replay(t, e.Store, d.ID) == "hello world" })
	a.WS.CloseNow()
	livetest.Eventually(t, "node 1 saved and let the document go", func() bool { return e.Live.Sessions() == 0 })

	r, err := other.Dial(adaCookie, d.ID, a.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Numbered, r.Seq, r.Text, r.Version, r.Pending = true, a.Seq, a.Text, a.Version, a.Pending
	st := r.Until("state")
	if st.Text != "hello world" || st.Version != 1 || st.Seq != 1 {
		t.Fatalf("node 2's state: %q at %d, number %d; want %q at 1, number 1", st.Text, st.Version, st.Seq, "hello world")
	}
	r.Resync(st)
	if len(r.Pending) != 0 || r.Text != "hello world" {
		t.Fatalf("after the state Ada has %q and %d pending", r.Text, len(r.Pending))
	}
	if m := b.Until("state"); m.Text != "hello world" || m.Version != 1 {
		t.Fatalf("Bob's state: %q at %d", m.Text, m.Version)
	}
}
