package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"quire/live"
	"quire/live/changeset"
	"quire/live/livetest"
)

// typist is a client of BenchmarkLiveDelay: it types one character every
// 200 ms while it has nothing waiting for a confirmation (an editor batches
// what it types meanwhile), rebases on the updates it receives and pushes
// again when refused as behind, and records when each other typist's
// changes reach it.
type typist struct {
	id string
	ws *websocket.Conn

	mu      sync.Mutex
	version int
	length  int
	pending *changeset.ChangeSet
	behind  int // the count to reach before pushing again; -1: none
	seen    map[string]int
}

// starts[client][n] is when client pushed its n-th change.
type starts struct {
	mu sync.Mutex
	at map[string][]time.Time
}

func (s *starts) add(client string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at[client] = append(s.at[client], t)
}

func (s *starts) get(client string, n int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.at[client]) {
		return time.Time{}, false
	}
	return s.at[client][n], true
}

// BenchmarkLiveDelay measures the delay from a push to its receipt by the
// other editors of a document on one node (SQLite): 20 editors type 5
// changes a second each; b.N is the number of 200 ms rounds. It reports the
// 50th and 99th percentiles of the delays.
//
//	go test ./live -run '^$' -bench LiveDelay -benchtime 50x
func BenchmarkLiveDelay(b *testing.B) {
	e := newEnv(b, nil)
	owner, _ := e.User("owner@example.com", "editor")
	d := e.Document(owner, "")
	const editors = 20
	st := &starts{at: map[string][]time.Time{}}
	var (
		delaysMu sync.Mutex
		delays   []time.Duration
	)
	ctx := context.Background()
	typists := make([]*typist, editors)
	var readers sync.WaitGroup
	for i := range typists {
		_, cookie := e.User(fmt.Sprintf("t%d@example.com", i), "editor")
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.Server.URL, "http")+"/documents/"+d.ID+"/live",
			&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {"auth_token=" + cookie}}})
		if err != nil {
			b.Fatal(err)
		}
		ws.SetReadLimit(16 << 20)
		tp := &typist{id: fmt.Sprintf("t%d", i), ws: ws, behind: -1, seen: map[string]int{}}
		tp.send(b, map[string]any{"type": "hello", "version": nil, "client": tp.id})
		typists[i] = tp
		readers.Go(func() {
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					return
				}
				now := time.Now()
				for _, d := range tp.receive(b, data, st) {
					delaysMu.Lock()
					delays = append(delays, now.Sub(d))
					delaysMu.Unlock()
				}
			}
		})
	}
	b.ResetTimer()
	var pushers sync.WaitGroup
	for i, tp := range typists {
		pushers.Go(func() {
			// Spread the typists over the round.
			time.Sleep(time.Duration(i) * 200 * time.Millisecond / editors)
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for range b.N {
				<-tick.C
				tp.type1(b, st)
			}
		})
	}
	pushers.Wait()
	b.StopTimer()
	// Let the last changes arrive.
	livetest.Eventually(b, "every change confirmed", func() bool {
		for _, tp := range typists {
			tp.mu.Lock()
			waiting := tp.pending != nil
			tp.mu.Unlock()
			if waiting {
				return false
			}
		}
		return true
	})
	time.Sleep(200 * time.Millisecond)
	for _, tp := range typists {
		tp.ws.Close(websocket.StatusNormalClosure, "")
	}
	readers.Wait()
	delaysMu.Lock()
	defer delaysMu.Unlock()
	if len(delays) == 0 {
		b.Fatal("no change reached another editor")
	}
	slices.Sort(delays)
	pct := func(p float64) float64 {
		return float64(delays[min(len(delays)-1, int(p*float64(len(delays))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(delays)), "receipts")
}

func (tp *typist) send(b *testing.B, v any) {
	msg, err := json.Marshal(v)
	if err != nil {
		b.Error(err)
		return
	}
	if err := tp.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
		b.Error(err)
	}
}

// type1 types a character when nothing waits for a confirmation.
func (tp *typist) type1(b *testing.B, st *starts) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.pending != nil {
		return
	}
	cs, err := changeset.Replace(tp.length, 0, 0, "x")
	if err != nil {
		b.Error(err)
		return
	}
	tp.pending = &cs
	st.add(tp.id, time.Now())
	tp.push(b)
}

// push sends the pending change on the version. tp.mu is held.
func (tp *typist) push(b *testing.B) {
	tp.send(b, map[string]any{"type": "push", "version": tp.version, "updates": []any{map[string]any{"changes": *tp.pending}}})
}

// receive handles a message and returns when the changes of others in it
// were pushed.
func (tp *typist) receive(b *testing.B, data []byte, st *starts) []time.Time {
	var m livetest.Message
	if err := json.Unmarshal(data, &m); err != nil {
		b.Error(err)
		return nil
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var pushed []time.Time
	switch m.Type {
	case "state":
		tp.version, tp.length = m.Version, livetest.UTF16Len(m.Text)
	case "refused":
		if m.Reason != "behind" {
			b.Errorf("%s refused: %+v", tp.id, m)
			return nil
		}
		tp.behind = m.Version
	case "updates":
		for _, u := range m.Updates {
			cs, err := changeset.Parse(u.Changes)
			if err != nil {
				b.Error(err)
				return nil
			}
			tp.version++
			tp.length = cs.NewLen()
			if u.Client == tp.id {
				tp.pending = nil
				continue
			}
			if at, ok := st.get(u.Client, tp.seen[u.Client]); ok {
				pushed = append(pushed, at)
			}
			tp.seen[u.Client]++
			if tp.pending != nil {
				mapped, err := tp.pending.Map(cs, false)
				if err != nil {
					b.Error(err)
					return nil
				}
				tp.pending = &mapped
			}
		}
	}
	if tp.behind >= 0 && tp.version >= tp.behind {
		tp.behind = -1
		if tp.pending != nil {
			tp.push(b)
		}
	}
	return pushed
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
