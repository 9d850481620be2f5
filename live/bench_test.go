package live_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"quire/live"
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
