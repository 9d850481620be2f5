package auth

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"quire"
)

// Outcomes of a sign-in, as /metrics counts them: success, each reason of
// a refused password (the reasons of auth.login_failed in the audit log),
// the 429 of the login limit and of a locked account, the 503 of a full
// hashing queue, and any other failure of the service.
const (
	LoginSuccess = "success"
	LoginLimited = "limited" // 429 TOO_MANY_ATTEMPTS
	LoginLocked  = "locked"  // 429 ACCOUNT_LOCKED
	LoginBusy    = "busy"    // 503: no hashing slot within the queue wait
	LoginError   = "error"
)

// LoginOutcomes lists every outcome, so that /metrics reports each from
// the start (a counter that appears only once it is 1 hides the first
// increase from rate()).
var LoginOutcomes = []string{LoginSuccess, quire.LoginFailedUnknown, quire.LoginFailedPassword,
	quire.LoginFailedDisabled, quire.LoginFailedNotSetUp, quire.LoginFailedMFA, LoginLimited, LoginLocked, LoginBusy, LoginError}

// stats are the Service's counters.
type stats struct {
	logins      map[string]*atomic.Uint64 // by outcome; fixed keys, read without a lock
	hashWaiting atomic.Int64
	hashWait    *quire.Histogram
	hashRefused atomic.Uint64
}

func newStats() *stats {
	s := &stats{logins: map[string]*atomic.Uint64{},
		hashWait: quire.NewHistogram(.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10)}
	for _, o := range LoginOutcomes {
		s.logins[o] = new(atomic.Uint64)
	}
	return s
}

func (s *stats) login(outcome string) {
	if c, ok := s.logins[outcome]; ok {
		c.Add(1)
		return
	}
	s.logins[LoginError].Add(1)
}

// Stats are the figures of sign-ins and password hashing since the
// Service was made.
type Stats struct {
	Logins      map[string]uint64 // by outcome (LoginOutcomes)
	HashWaiting int64             // callers waiting for a hashing slot now
	HashWait    *quire.HistogramSnapshot
	HashRefused uint64 // callers answered 503 after the queue wait
}

// Stats reads the Service's figures.
func (s *Service) Stats() Stats {
	st := Stats{Logins: make(map[string]uint64, len(s.stats.logins)),
		HashWaiting: s.stats.hashWaiting.Load(), HashWait: s.stats.hashWait.Snapshot(), HashRefused: s.stats.hashRefused.Load()}
	for o, c := range s.stats.logins {
		st.Logins[o] = c.Load()
	}
	return st
}

// Login signs a user in from the request req (its client address counts
// the failures; the session keeps it and the User-Agent). Every failure is
// the same INVALID_CREDENTIALS, after the same work, whether or not the
// email has an account; the audit log alone records why (auth.login_failed),
// with the failure's count. timezone, when not "", must be an IANA zone name.
//
// Each call is counted by outcome (Stats), except a refused timezone, which
// is not an attempt: loginFailed counts the refused passwords by reason.
func (s *Service) Login(ctx context.Context, req quire.RequestInfo, email, password, timezone string) (*Session, error) {
	sess, err := s.login(ctx, req, email, password, timezone)
	switch code := quire.ErrorCode(err); {
	case err == nil:
		s.stats.login(LoginSuccess)
	case code == quire.EINVALIDCREDENTIALS, code == quire.EVALIDATION:
	case code == quire.ETOOMANYATTEMPTS:
		s.stats.login(LoginLimited)
	case code == quire.EACCOUNTLOCKED:
		s.stats.login(LoginLocked)
	case errors.Is(err, errBusy):
		s.stats.login(LoginBusy)
	default:
		s.stats.login(LoginError)
	}
	return sess, err
}

// observeWait records one wait for a hashing slot.
func (h *hasher) observeWait(began time.Time) { h.stats.hashWait.Observe(time.Since(began).Seconds()) }
