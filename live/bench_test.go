package live_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"quire/live"
	"quire/live/changeset"
	"quire/live/livetest"
)

// BenchmarkLiveDelay measures the delay from a push to its receipt by the
// other editors of a document on one node (SQLite): 20 editors type 5
// changes a second each (livetest.Delays); b.N is the number of 200 ms
// rounds. It reports the 50th and 99th percentiles of the delays.
//
//	go test ./live -run '^$' -bench LiveDelay -benchtime 50x
func BenchmarkLiveDelay(b *testing.B) {
	e := newEnv(b, nil)
	owner, _ := e.User("owner@example.com", "editor")
	d := e.Document(owner, "")
	cookies := make([]string, 20)
	for i := range cookies {
		_, cookies[i] = e.User(fmt.Sprintf("t%d@example.com", i), "editor")
	}
	b.ResetTimer()
	delays := livetest.Delays(b, []string{e.Server.URL}, d.ID, cookies, b.N)
	b.StopTimer()
	b.ReportMetric(livetest.Percentile(delays, 0.5), "p50-ms")
	b.ReportMetric(livetest.Percentile(delays, 0.99), "p99-ms")
	b.ReportMetric(float64(len(delays)), "receipts")
}

// BenchmarkIdleConnections reports the memory 1,000 idle live connections
// of one document hold: heap and stacks in use after a collection, with
// the clients in the same process (so an upper bound of the server's
// share). b.N is ignored beyond the first round.
//
//	go test ./live -run '^$' -bench IdleConnections -benchtime 1x
func BenchmarkIdleConnections(b *testing.B) {
	e := newEnv(b, func(c *live.Config) { c.MaxPerPerson = 2000 })
	owner, cookie := e.User("owner@example.com", "editor")
	d := e.Document(owner, strings.Repeat("some text ", 100))
	inUse := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	e.MustDial(cookie, d.ID, "first") // the session loaded
	before := inUse()
	const n = 1000
	for i := range n {
		e.MustDial(cookie, d.ID, fmt.Sprintf("c%d", i))
	}
	after := inUse()
	b.ReportMetric(float64(after-before)/(1<<20), "MiB/1000conns")
}

// BenchmarkDocumentMemory reports the memory one document edited live
// holds on a node: a text of 1 MiB, one editor, and 1,500 changes of 1 KiB
// each pushed (replacements: the text keeps its size), more than the
// session keeps for reconnects (1,000 changes, 1 MiB). Heap and stacks in
// use after a collection, from before the first connection to after the
// last change was confirmed, the client in the same process included (its
// copy of the text): an upper bound of the server's share. b.N is ignored
// beyond the first round.
//
//	go test ./live -run '^$' -bench DocumentMemory -benchtime 1x
func BenchmarkDocumentMemory(b *testing.B) {
	e := newEnv(b, func(c *live.Config) { c.MaxText = 4 << 20 })
	owner, cookie := e.User("owner@example.com", "editor")
	const size, piece = 1 << 20, 1 << 10
	d := e.Document(owner, strings.Repeat("a", size))
	inUse := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	before := inUse()
	c := e.MustDial(cookie, d.ID, "editor")
	const perPush = 50 // 50 KiB: a message is at most 64 KiB
	for round := range 1500 / perPush {
		for i := range perPush {
			at := ((round*perPush + i) * piece) % (size - piece)
			cs, err := changeset.Replace(size, at, at+piece, strings.Repeat(string(rune('b'+round%20)), piece))
			if err != nil {
				b.Fatal(err)
			}
			c.Pending = append(c.Pending, cs)
			if c.Text, err = cs.Apply(c.Text); err != nil {
				b.Fatal(err)
			}
		}
		// Made one after another on the client's text, confirmed whole.
		c.SendPending()
		if m := c.Until("updates"); len(m.Updates) != perPush || m.Updates[0].Client != "editor" {
			b.Fatalf("round %d: %d updates", round, len(m.Updates))
		}
		c.Version += perPush
		c.Pending = nil
	}
	after := inUse()
	b.ReportMetric(float64(after-before)/(1<<20), "MiB/document")
}
