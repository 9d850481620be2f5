package share

import (
	"strconv"
	"sync"
	"time"

	"quire"
)

// maxAddresses bounds the memory of the limiter: past it, the windows
// that ended are dropped, and when none has, all of them (a flood from
// that many addresses gets a fresh window rather than the memory).
const maxAddresses = 100_000

// limiter counts the requests of each client address in fixed windows,
// in this process's memory: a cluster of n nodes lets an address make up
// to n times the limit. Counting in the database would cost a write per
// view, which the share pages are built to avoid.
type limiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	max    int
	seen   map[string]*addrWindow
}

type addrWindow struct {
	start time.Time
	n     int
}

func newLimiter(limit int, window time.Duration, max int) *limiter {
	return &limiter{limit: limit, window: window, max: max, seen: map[string]*addrWindow{}}
}

// allow counts one request of addr at now, and says how long to wait when
// it is over the limit (0: allowed).
func (l *limiter) allow(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.seen[addr]
	if w == nil || !now.Before(w.start.Add(l.window)) {
		if w == nil && len(l.seen) >= l.max {
			l.sweep(now)
		}
		w = &addrWindow{start: now}
		l.seen[addr] = w
	}
	if w.n >= l.limit {
		return w.start.Add(l.window).Sub(now)
	}
	w.n++
	return 0
}

func (l *limiter) sweep(now time.Time) {
	for a, w := range l.seen {
		if !now.Before(w.start.Add(l.window)) {
			delete(l.seen, a)
		}
	}
	if len(l.seen) >= l.max {
		clear(l.seen)
	}
}

// Allow counts one request of a share page from the client address addr,
// and refuses it past the limit of the minute with TOO_MANY_ATTEMPTS (429)
// and RetryAfter, the end of the address's window.
func (s *Service) Allow(addr string) error {
	wait := s.limit.allow(addr, s.cfg.Now())
	if wait <= 0 {
		return nil
	}
	return &quire.Error{Code: quire.ETOOMANYATTEMPTS, RetryAfter: wait,
		Message: "Too many requests from your address: at most " + strconv.Itoa(s.cfg.PerMinute) + " a minute."}
}
