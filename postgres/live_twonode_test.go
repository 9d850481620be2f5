package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"quire/internal/testclock"
	"quire/live"
	"quire/live/livetest"
	"quire/live/wake"
	"quire/pgtest"
	"quire/postgres"
)

// liveNode serves the live editor on its own store of the database at url,
// woken by the other nodes through LISTEN/NOTIFY; it returns once its
// waker listens.
func liveNode(t testing.TB, url string, clk *testclock.Clock) (*livetest.Node, *postgres.DB) {
	t.Helper()
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := wake.New(db, slog.New(slog.DiscardHandler))
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})
	livetest.Eventually(t, "the waker listens", w.Listening)
	return livetest.Start(t, db, clk, func(c *live.Config) { c.Waker = w }), db
}

// twoLiveNodes starts two live nodes on one new database, with one clock.
func twoLiveNodes(t *testing.T) (a, b *livetest.Node) {
	t.Helper()
	url := pgtest.StartFrom(t, "migrated", migrate)
	clk := testclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	a, _ = liveNode(t, url, clk)
	b, _ = liveNode(t, url, clk)
	return a, b
}

// TestTwoNodesEditLive: an editor on node A and one on node B edit one
// document together and converge, the changes of each reaching the other
// through the table and a wake-up. Then node A dies (its store closed, its
// connections cut: it can neither save nor say goodbye) and its editor
// reconnects to B with its version: every change A confirmed is there, and
// the change it had pushed without a confirmation is stored once.
func TestTwoNodesEditLive(t *testing.T) {
	t.Parallel()
	url := pgtest.StartFrom(t, "migrated", migrate)
	clk := testclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	a, dbA := liveNode(t, url, clk)
	b, _ := liveNode(t, url, clk)
	ada, adaCookie := a.User("ada@example.com", "editor")
	_, bobCookie := a.User("bob@example.com", "editor")
	d := a.Document(ada, "one text")

	ca := a.MustDial(adaCookie, d.ID, "ada-tab")
	cb := b.MustDial(bobCookie, d.ID, "bob-tab")
	for i := range 6 {
		// Both push on the same count: one node stores it first, the
		// other's is refused as behind and comes again rebased.
		ca.Push(ca.Insert(0, "A"))
		cb.Push(cb.Insert(livetest.UTF16Len(cb.Text), "B"))
		ca.Confirm()
		cb.Confirm()
		n := 2 * (i + 1)
		ca.CatchUp(n)
		cb.CatchUp(n)
		if ca.Text != cb.Text || ca.Version != n {
			t.Fatalf("round %d: A has %q at %d, B %q at %d", i, ca.Text, ca.Version, cb.Text, cb.Version)
		}
	}
	if ca.Behind+cb.Behind != 6 {
		t.Errorf("%d pushes refused as behind, want one a round", ca.Behind+cb.Behind)
	}
	want := "AAAAAAone textBBBBBB"
	if ca.Text != want {
		t.Fatalf("converged on %q, want %q", ca.Text, want)
	}

	// Node A dies with a change pushed and not confirmed.
	ca.Push(ca.Insert(0, "!"))
	dbA.Close()
	a.Kill()
	v := ca.Version
	ra, err := b.Dial(adaCookie, d.ID, "ada-tab", &v)
	if err != nil {
		t.Fatal(err)
	}
	ra.Text, ra.Pending = ca.Text, ca.Pending
	// The hello's answer: the updates after its version (its own
	// change among them when A stored it before dying).
	ra.Receive(ra.Until("updates"))
	if len(ra.Pending) > 0 {
		ra.SendPending()
		ra.Confirm()
	}
	cb.CatchUp(ra.Version)
	want = "!" + want
	if ra.Text != want || cb.Text != want || ra.Version != 13 {
		t.Fatalf("after A died: A's editor has %q at %d, B's %q, want %q at 13", ra.Text, ra.Version, cb.Text, want)
	}
	if got := livetest.Replay(t, b.Store, d.ID); got != want {
		t.Fatalf("the table replays to %q, want %q", got, want)
	}
}

// BenchmarkTwoNodesLiveDelay is BenchmarkLiveDelay of package live across
// two nodes on one PostgreSQL: 20 editors, half on each node, type 5
// changes a second; b.N is the number of 200 ms rounds. A change reaches
// the other node's editors through the table and a NOTIFY.
//
//	go test ./postgres -run '^$' -bench TwoNodesLiveDelay -benchtime 50x
func BenchmarkTwoNodesLiveDelay(b *testing.B) {
	url := pgtest.Start(b)
	clk := testclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	a, _ := liveNode(b, url, clk)
	n, _ := liveNode(b, url, clk)
	owner, _ := a.User("owner@example.com", "editor")
	d := a.Document(owner, "")
	cookies := make([]string, 20)
	for i := range cookies {
		_, cookies[i] = a.User(fmt.Sprintf("t%d@example.com", i), "editor")
	}
	b.ResetTimer()
	delays := livetest.Delays(b, []string{a.Server.URL, n.Server.URL}, d.ID, cookies, b.N)
	b.StopTimer()
	b.ReportMetric(livetest.Percentile(delays, 0.5), "p50-ms")
	b.ReportMetric(livetest.Percentile(delays, 0.99), "p99-ms")
	b.ReportMetric(float64(len(delays)), "receipts")
}

// TestTwoNodesPresence: presence lists the people of every node. Ada
// edits on node A, Bob follows read-only on node B: each node's presence
// route and each connection's presence message list both (Bob viewing
// only); once Bob leaves, node A lists Ada alone.
func TestTwoNodesPresence(t *testing.T) {
	t.Parallel()
	a, b := twoLiveNodes(t)
	ada, adaCookie := a.User("ada@example.com", "editor")
	_, bobCookie := a.User("bob@example.com", "viewer")
	d := a.Document(ada, "one text")
	presence := func(n *livetest.Node, cookie string) string {
		t.Helper()
		var viewing, editing []livetest.Person
		n.MustAPI(cookie, "GET", "/api/documentation/documents/"+d.ID+"/presence", "", "viewing", &viewing)
		n.MustAPI(cookie, "GET", "/api/documentation/documents/"+d.ID+"/presence", "", "editing", &editing)
		return names(viewing) + " / " + names(editing)
	}
	ca := a.MustDial(adaCookie, d.ID, "ada-tab")
	cb := b.MustDial(bobCookie, d.ID, "bob-tab")
	both := "Ada Bob / Ada"
	livetest.Eventually(t, "node A lists Bob", func() bool { return presence(a, adaCookie) == "Ada Bob / Ada" })
	livetest.Eventually(t, "node B lists Ada", func() bool { return presence(b, bobCookie) == "Bob Ada / Ada" })
	for _, c := range []*livetest.Client{ca, cb} {
		for c.Presence == nil || len(c.Presence.Viewing) != 2 {
			c.Next()
		}
		if got := names(c.Presence.Viewing) + " / " + names(c.Presence.Editing); got != both && got != "Bob Ada / Ada" {
			t.Fatalf("client %s's presence: %s", c.ID, got)
		}
	}
	cb.WS.CloseNow()
	livetest.Eventually(t, "node A lists Ada alone", func() bool { return presence(a, adaCookie) == "Ada / Ada" })
	for len(ca.Presence.Viewing) != 1 {
		ca.Next()
	}
	// Without a session on a node, its route reads the others' presence.
	ca.WS.CloseNow()
	livetest.Eventually(t, "nobody left", func() bool { return presence(b, bobCookie) == " / " })
}

func names(ps []livetest.Person) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Name
	}
	return strings.Join(s, " ")
}

// TestTwoNodesNothingAppliedTwice: an editor's change stored by node A
// whose confirmation it never got, saved into a version and trimmed by A,
// is applied once when the editor comes back to node B and gets the whole
// text (livetest.LoseConfirmation): the number of its last accepted change
// is in the database, not in A's memory.
func TestTwoNodesNothingAppliedTwice(t *testing.T) {
	t.Parallel()
	a, b := twoLiveNodes(t)
	ada, cookie := a.User("ada@example.com", "editor")
	d := a.Document(ada, "hello")
	livetest.LoseConfirmation(t, a, b, cookie, d.ID)
}

// TestTwoNodesCursors: a selection made on node A reaches an editor on
// node B, with its person's name and its count, through a NOTIFY; when
// the editor on A leaves, B's editor is told it is gone.
func TestTwoNodesCursors(t *testing.T) {
	t.Parallel()
	a, b := twoLiveNodes(t)
	ada, adaCookie := a.User("ada@example.com", "editor")
	_, bobCookie := a.User("bob@example.com", "editor")
	d := a.Document(ada, "hello world")
	ca := a.MustDial(adaCookie, d.ID, "ada-tab")
	cb := b.MustDial(bobCookie, d.ID, "bob-tab")
	ca.SendJSON(map[string]any{"type": "cursor", "version": ca.Version, "anchor": 6, "head": 11})
	for {
		m := cb.Until("cursors")
		if len(m.Cursors) == 0 {
			continue
		}
		c := m.Cursors[0]
		if len(m.Cursors) != 1 || c.Client != "ada-tab" || c.User != (livetest.Person{ID: ada.ID, Name: "Ada"}) ||
			c.Version != ca.Version || c.Anchor != 6 || c.Head != 11 {
			t.Fatalf("node B's editor got cursors %+v", m.Cursors)
		}
		break
	}
	ca.WS.CloseNow()
	for m := cb.Until("cursors"); len(m.Cursors) != 0; m = cb.Until("cursors") {
		if m.Cursors[0].Client != "ada-tab" {
			t.Fatalf("node B's editor got cursors %+v", m.Cursors)
		}
	}
}
