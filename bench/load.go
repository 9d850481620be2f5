package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// newClient is the load generator's HTTP client: keep-alive, enough idle
// connections for every worker, and an optional transport wrapper that sees
// each response (the guarded update learns its next base from it).
func newClient(conns int, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	var rt http.RoundTripper = &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	if wrap != nil {
		rt = wrap(rt)
	}
	return &http.Client{Transport: rt, Timeout: 30 * time.Second}
}

// load is one attack: closed loop (rate 0: exactly conc requests in flight,
// each sent when the previous answer arrives) or open loop (rate requests
// per second on a fixed schedule, with workers added when all are busy, so
// that a slow answer does not delay the next request and hide its own cost).
type load struct {
	name    string
	targets func() vegeta.Targeter
	conc    int
	rate    int
	client  *http.Client
}

// stats summarises one attack.
type stats struct {
	n, errs  int
	elapsed  time.Duration
	p50, p99 time.Duration
	firstErr string
	codes    map[uint16]int
}

func (s stats) rps() float64 { return float64(s.n) / s.elapsed.Seconds() }

func (l load) run(ctx context.Context, d time.Duration) stats {
	opts := []func(*vegeta.Attacker){vegeta.Client(l.client), vegeta.MaxBody(64 << 10)}
	pacer := vegeta.Rate{}
	if l.rate == 0 {
		opts = append(opts, vegeta.Workers(uint64(l.conc)), vegeta.MaxWorkers(uint64(l.conc)))
	} else {
		pacer = vegeta.Rate{Freq: l.rate, Per: time.Second}
		opts = append(opts, vegeta.Workers(uint64(l.conc)), vegeta.MaxWorkers(10000))
	}
	a := vegeta.NewAttacker(opts...)
	var lat []time.Duration
	st := stats{codes: map[uint16]int{}}
	start := time.Now()
	res := a.Attack(l.targets(), pacer, d, l.name)
	for {
		select {
		case <-ctx.Done():
			a.Stop()
			for range res {
			}
			st.elapsed = time.Since(start)
			return st.finish(lat)
		case r, ok := <-res:
			if !ok {
				st.elapsed = time.Since(start)
				return st.finish(lat)
			}
			st.n++
			st.codes[r.Code]++
			lat = append(lat, r.Latency)
			if r.Error != "" {
				st.errs++
				if st.firstErr == "" {
					st.firstErr = fmt.Sprintf("%s %s: %s %s", r.Method, r.URL, r.Error, firstLine(r.Body))
				}
			}
		}
	}
}

func firstLine(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// finish computes exact percentiles (nearest rank) from every latency.
func (s stats) finish(lat []time.Duration) stats {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		i := int(math.Ceil(p*float64(len(lat)))) - 1
		return lat[max(i, 0)]
	}
	s.p50, s.p99 = q(0.50), q(0.99)
	return s
}

// responseTap is a RoundTripper that hands each response body to fn and
// passes on a copy.
type responseTap struct {
	next http.RoundTripper
	fn   func(req *http.Request, status int, body []byte)
}

func (t responseTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		t.fn(req, 0, nil)
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.fn(req, resp.StatusCode, body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, err
}

// roundRobin hands out items in turn to concurrent callers.
type roundRobin[T any] struct {
	mu    sync.Mutex
	items []T
	i     int
}

func (r *roundRobin[T]) next() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.items[r.i%len(r.items)]
	r.i++
	return v
}
