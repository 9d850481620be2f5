package livetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"quire/live/changeset"
)

// typist is a client of Delays: it types one character every
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

// Delays runs editors typists on document doc, typist i on the server
// bases[i%len(bases)] with cookies[i] (on several nodes, each reaches the
// others through the database), each typing 5 changes a second for rounds
// rounds of 200 ms, and returns the delays from each push to its receipt
// by each other typist, sorted.
func Delays(tb testing.TB, bases []string, doc string, cookies []string, rounds int) []time.Duration {
	tb.Helper()
	st := &starts{at: map[string][]time.Time{}}
	var (
		delaysMu sync.Mutex
		delays   []time.Duration
	)
	ctx := context.Background()
	typists := make([]*typist, len(cookies))
	var readers sync.WaitGroup
	for i, cookie := range cookies {
		base := bases[i%len(bases)]
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/documents/"+doc+"/live",
			&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {"auth_token=" + cookie}}})
		if err != nil {
			tb.Fatal(err)
		}
		ws.SetReadLimit(16 << 20)
		tp := &typist{id: fmt.Sprintf("t%d", i), ws: ws, behind: -1, seen: map[string]int{}}
		tp.send(tb, map[string]any{"type": "hello", "version": nil, "client": tp.id})
		typists[i] = tp
		readers.Go(func() {
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					return
				}
				now := time.Now()
				for _, d := range tp.receive(tb, data, st) {
					delaysMu.Lock()
					delays = append(delays, now.Sub(d))
					delaysMu.Unlock()
				}
			}
		})
	}
	var pushers sync.WaitGroup
	for i, tp := range typists {
		pushers.Go(func() {
			// Spread the typists over the round.
			time.Sleep(time.Duration(i) * 200 * time.Millisecond / time.Duration(len(typists)))
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for range rounds {
				<-tick.C
				tp.type1(tb, st)
			}
		})
	}
	pushers.Wait()
	// Let the last changes arrive.
	Eventually(tb, "every change confirmed", func() bool {
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
	Eventually(tb, "every typist at the last count", func() bool {
		versions := make([]int, len(typists))
		for i, tp := range typists {
			tp.mu.Lock()
			versions[i] = tp.version
			tp.mu.Unlock()
		}
		return slices.Min(versions) == slices.Max(versions)
	})
	for _, tp := range typists {
		tp.ws.Close(websocket.StatusNormalClosure, "")
	}
	readers.Wait()
	delaysMu.Lock()
	defer delaysMu.Unlock()
	if len(delays) == 0 {
		tb.Fatal("no change reached another editor")
	}
	slices.Sort(delays)
	return delays
}

// Percentile returns the p-th percentile (0..1) of sorted delays, in
// milliseconds.
func Percentile(sorted []time.Duration, p float64) float64 {
	return float64(sorted[min(len(sorted)-1, int(p*float64(len(sorted))))].Microseconds()) / 1000
}

func (tp *typist) send(tb testing.TB, v any) {
	msg, err := json.Marshal(v)
	if err != nil {
		tb.Error(err)
		return
	}
	if err := tp.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
		tb.Error(err)
	}
}

// type1 types a character when nothing waits for a confirmation.
func (tp *typist) type1(tb testing.TB, st *starts) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.pending != nil {
		return
	}
	cs, err := changeset.Replace(tp.length, 0, 0, "x")
	if err != nil {
		tb.Error(err)
		return
	}
	tp.pending = &cs
	st.add(tp.id, time.Now())
	tp.push(tb)
}

// push sends the pending change on the version. tp.mu is held.
func (tp *typist) push(tb testing.TB) {
	tp.send(tb, map[string]any{"type": "push", "version": tp.version, "updates": []any{map[string]any{"changes": *tp.pending}}})
}

// receive handles a message and returns when the changes of others in it
// were pushed.
func (tp *typist) receive(tb testing.TB, data []byte, st *starts) []time.Time {
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Error(err)
		return nil
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var pushed []time.Time
	switch m.Type {
	case "state":
		tp.version, tp.length = m.Version, UTF16Len(m.Text)
	case "refused":
		if m.Reason != "behind" {
			tb.Errorf("%s refused: %+v", tp.id, m)
			return nil
		}
		tp.behind = m.Version
	case "updates":
		for _, u := range m.Updates {
			cs, err := changeset.Parse(u.Changes)
			if err != nil {
				tb.Error(err)
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
					tb.Error(err)
					return nil
				}
				tp.pending = &mapped
			}
		}
	}
	if tp.behind >= 0 && tp.version >= tp.behind {
		tp.behind = -1
		if tp.pending != nil {
			tp.push(tb)
		}
	}
	return pushed
}
