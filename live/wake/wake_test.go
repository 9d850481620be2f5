package wake_test

import (
	"context"
	"maps"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"quire/live/wake"
	"quire/pgtest"
	"quire/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

var _ wake.Bus = (*postgres.DB)(nil)

// hangGuard bounds the wait for something that must happen: it only turns a
// hang into a failure, on however loaded a machine.
const hangGuard = time.Minute

// next waits for s's signal and returns what it took.
func next(t *testing.T, s *wake.Subscription) wake.Wake {
	t.Helper()
	select {
	case <-s.C():
		return s.Take()
	case <-time.After(hangGuard):
		t.Fatal("no wake-up")
		return wake.Wake{}
	}
}

// none fails t when s holds a signal now.
func none(t *testing.T, s *wake.Subscription) {
	t.Helper()
	select {
	case <-s.C():
		t.Fatalf("woken with %+v", s.Take())
	default:
	}
}

func TestLocalFansOutToTheDocumentsSubscribers(t *testing.T) {
	w := wake.Local()
	ctx := t.Context()
	a, b, other := w.Subscribe("d1"), w.Subscribe("d1"), w.Subscribe("d2")
	if err := w.Notify(ctx, "d1", 5); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*wake.Subscription{a, b} {
		if got := next(t, s); got != (wake.Wake{Seq: 5}) {
			t.Fatalf("took %+v, want up to 5", got)
		}
	}
	none(t, other)
	// A wake-up the subscribers had already (this node's own, echoed by
	// the database), or an older one, wakes nobody.
	for _, seq := range []int64{5, 4} {
		if err := w.Notify(ctx, "d1", seq); err != nil {
			t.Fatal(err)
		}
	}
	none(t, a)
	b.Close()
	if err := w.Notify(ctx, "d1", 6); err != nil {
		t.Fatal(err)
	}
	if got := next(t, a); got.Seq != 6 {
		t.Fatalf("took %+v, want up to 6", got)
	}
	none(t, b)
	// A write of the content supersedes the changes and leaves the count:
	// the subscribers catch up, whatever they heard before.
	if err := w.CatchUp(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if got := next(t, a); got != (wake.Wake{CatchUp: true}) {
		t.Fatalf("took %+v, want a catch-up", got)
	}
	none(t, other)
	for _, bad := range []string{"", "a b", "a\x00", string(make([]byte, 101))} {
		if err := w.Notify(ctx, bad, 1); err == nil {
			t.Errorf("a wake-up of %q was sent", bad)
		}
		if err := w.CatchUp(ctx, bad); err == nil {
			t.Errorf("a catch-up of %q was sent", bad)
		}
	}
	if err := w.Notify(ctx, "d1", -1); err == nil {
		t.Error("a wake-up with a negative count was sent")
	}
	if !w.Listening() {
		t.Error("a local waker is not listening")
	}
}

// A subscriber that never reads holds one signal and one Wake: the sender
// and the other subscribers go on, and a wake-up allocates nothing, however
// many pile up.
func TestSlowSubscriberBlocksNobody(t *testing.T) {
	w := wake.Local()
	ctx := t.Context()
	slow, fast := w.Subscribe("d"), w.Subscribe("d")
	const n = 10000
	var wg sync.WaitGroup
	var last int64
	wg.Go(func() {
		for last < n {
			<-fast.C()
			last = max(last, fast.Take().Seq)
		}
	})
	for seq := int64(1); seq <= n; seq++ {
		if err := w.Notify(ctx, "d", seq); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if got := next(t, slow); got != (wake.Wake{Seq: n}) {
		t.Fatalf("the slow subscriber took %+v, want one wake-up up to %d", got, n)
	}
	none(t, slow)
	seq := int64(n)
	if allocs := testing.AllocsPerRun(1000, func() {
		seq++
		w.Notify(ctx, "d", seq)
	}); allocs != 0 {
		t.Fatalf("a wake-up of a document with a slow subscriber allocates %v times", allocs)
	}
	if got := slow.Take(); got.Seq != seq {
		t.Fatalf("the slow subscriber took %+v, want up to %d", got, seq)
	}
}

// withAppName is url with application_name set, by which the test finds
// that node's connections on the server.
func withAppName(t *testing.T, raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func openNode(t *testing.T, raw string) *wake.Waker {
	t.Helper()
	db, err := postgres.Open(t.Context(), raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return wake.New(db, nil)
}

// run runs w until t ends.
func run(t *testing.T, w *wake.Waker) {
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
}

// Two nodes on one database: a wake-up sent by A reaches B's subscriber;
// once B's listening connection is killed, B reconnects and tells its
// subscribers to catch up, and wake-ups reach it again.
func TestPostgresWakesTheOtherNode(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t)
	ctx := t.Context()
	a, b := openNode(t, withAppName(t, raw, "live-node-a")), openNode(t, withAppName(t, raw, "live-node-b"))
	const doc = "01a2b3c4-0000-7000-8000-000000000001"
	sa, sb := a.Subscribe(doc), b.Subscribe(doc)
	if a.Listening() || b.Listening() {
		t.Fatal("listening before Run")
	}
	run(t, a)
	run(t, b)
	// Each node tells its subscribers to catch up once it listens: from
	// then on nothing sent is lost to it.
	for _, s := range []*wake.Subscription{sa, sb} {
		if got := next(t, s); !got.CatchUp {
			t.Fatalf("first wake-up %+v, want a catch-up once listening", got)
		}
	}
	if err := a.Notify(ctx, doc, 7); err != nil {
		t.Fatal(err)
	}
	if got := next(t, sa); got != (wake.Wake{Seq: 7}) {
		t.Fatalf("A's own subscriber took %+v", got)
	}
	if got := next(t, sb); got != (wake.Wake{Seq: 7}) {
		t.Fatalf("B's subscriber took %+v, want up to 7", got)
	}

	admin, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var killed int
	err = admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'live-node-b' AND query LIKE 'LISTEN%'`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("killed %d listening connections of B, %v; want 1", killed, err)
	}
	if got := next(t, sb); !got.CatchUp {
		t.Fatalf("after its connection was killed B took %+v, want a catch-up", got)
	}
	if !b.Listening() {
		t.Fatal("B caught up but does not listen")
	}
	if err := a.Notify(ctx, doc, 8); err != nil {
		t.Fatal(err)
	}
	if got := next(t, sb); got != (wake.Wake{Seq: 8}) {
		t.Fatalf("after the reconnection B took %+v, want up to 8", got)
	}
	if err := a.CatchUp(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if got := next(t, sb); got != (wake.Wake{CatchUp: true}) {
		t.Fatalf("after A's catch-up B took %+v", got)
	}
	none(t, sb)
}

// Selections go in the payload: the other node's subscriber keeps the last
// list of each node until TakeCursors, without a count to catch up to; a
// list too large for a NOTIFY is refused, and a Local Waker sends none.
func TestPostgresPassesCursors(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t)
	ctx := t.Context()
	a, b := openNode(t, raw), openNode(t, raw)
	const doc = "01a2b3c4-0000-7000-8000-000000000002"
	sb := b.Subscribe(doc)
	run(t, a)
	run(t, b)
	if got := next(t, sb); !got.CatchUp {
		t.Fatalf("first wake-up %+v, want a catch-up once listening", got)
	}
	for _, list := range []string{`[{"client":"one"}]`, `[{"client":"two"}]`} {
		if err := a.SendCursors(ctx, doc, "node-a", []byte(list)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"node-a": `[{"client":"two"}]`}
	got := map[string]string{}
	for got["node-a"] != want["node-a"] {
		if w := next(t, sb); w != (wake.Wake{}) {
			t.Fatalf("cursors woke B with %+v, want no count", w)
		}
		maps.Copy(got, sb.TakeCursors())
	}
	if len(got) != 1 {
		t.Fatalf("B took cursors %v, want %v", got, want)
	}
	if err := a.SendCursors(ctx, doc, "node-a", make([]byte, wake.MaxCursors+1)); err == nil {
		t.Fatal("a list over MaxCursors was sent")
	}
	local := wake.Local()
	s := local.Subscribe(doc)
	if err := local.SendCursors(ctx, doc, "node-a", []byte(`[]`)); err != nil {
		t.Fatal(err)
	}
	none(t, s)
}
