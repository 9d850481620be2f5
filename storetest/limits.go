package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("limits", testLimits) }

// smallLimits keep the cases short; the parallel case uses the defaults.
var smallLimits = quire.LoginLimits{Limit: 3, Window: 15 * time.Minute, LockThreshold: 5, LockDuration: 30 * time.Minute}

// fail makes one failed sign-in of (addr, email) at now: it must get past
// BeginLogin.
func fail(t *testing.T, g quire.LoginGuard, addr, email string, now time.Time, l quire.LoginLimits) {
	t.Helper()
	if _, err := g.BeginLogin(t.Context(), addr, email, now, l); err != nil {
		t.Fatalf("BeginLogin(%s, %s) at %v: %v", addr, email, now.Sub(baseTime), err)
	}
	if err := g.LoginFailed(t.Context(), email, now, l, nil); err != nil {
		t.Fatalf("LoginFailed(%s) at %v: %v", email, now.Sub(baseTime), err)
	}
}

// succeed makes one successful sign-in of (addr, email) at now.
func succeed(t *testing.T, g quire.LoginGuard, addr, email string, now time.Time, l quire.LoginLimits) {
	t.Helper()
	id, err := g.BeginLogin(t.Context(), addr, email, now, l)
	if err != nil {
		t.Fatalf("BeginLogin(%s, %s) at %v: %v", addr, email, now.Sub(baseTime), err)
	}
	if err := g.LoginSucceeded(t.Context(), id, email); err != nil {
		t.Fatalf("LoginSucceeded(%s): %v", email, err)
	}
}

// wantPass checks that an attempt at now gets past BeginLogin (and then
// withdraws it, as a success would, so that it changes no count).
func wantPass(t *testing.T, g quire.LoginGuard, addr, email string, now time.Time, l quire.LoginLimits) {
	t.Helper()
	id, err := g.BeginLogin(t.Context(), addr, email, now, l)
	if err != nil {
		t.Fatalf("BeginLogin(%s, %s) at %v = %v, want it to pass", addr, email, now.Sub(baseTime), err)
	}
	if id == "" {
		t.Fatalf("BeginLogin(%s, %s) returned an empty attempt id", addr, email)
	}
	if err := g.LoginSucceeded(t.Context(), id, email); err != nil {
		t.Fatal(err)
	}
}

// wantRefused checks that an attempt at now is refused with code, the
// contract's message and retryAfter.
func wantRefused(t *testing.T, g quire.LoginGuard, addr, email string, now time.Time, l quire.LoginLimits,
	code string, retryAfter time.Duration) {
	t.Helper()
	id, err := g.BeginLogin(t.Context(), addr, email, now, l)
	if err == nil {
		t.Fatalf("BeginLogin(%s, %s) at %v passed (attempt %s), want %s", addr, email, now.Sub(baseTime), id, code)
	}
	msg := map[string]string{
		quire.ETOOMANYATTEMPTS: "Too many login attempts, please try again later.",
		quire.EACCOUNTLOCKED:   "Account is locked, please try again later.",
	}[code]
	var got *quire.Error
	errors.As(err, &got)
	want := &quire.Error{Code: code, Message: msg, RetryAfter: retryAfter}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("BeginLogin(%s, %s) at %v error (-want +got):\n%s", addr, email, now.Sub(baseTime), diff)
	}
}

func testLimits(t *testing.T, open Opener) {
	const (
		ip    = "192.0.2.1"
		ip2   = "192.0.2.2"
		email = "ada@example.com"
	)
	l := smallLimits

	t.Run("failures up to the limit pass and the next attempt is refused until the oldest leaves the window", func(t *testing.T) {
		s := open(t)
		for i := range 3 {
			fail(t, s, ip, email, baseTime.Add(time.Duration(i)*time.Minute), l)
		}
		wantRefused(t, s, ip, email, baseTime.Add(3*time.Minute), l, quire.ETOOMANYATTEMPTS, 12*time.Minute)
		wantRefused(t, s, ip, email, baseTime.Add(15*time.Minute-time.Microsecond), l, quire.ETOOMANYATTEMPTS, time.Second)
		// The oldest failure (at baseTime) is out of the window at exactly
		// baseTime+15m: one more attempt passes, and then the pair is full
		// again until the second failure leaves.
		fail(t, s, ip, email, baseTime.Add(15*time.Minute), l)
		wantRefused(t, s, ip, email, baseTime.Add(15*time.Minute), l, quire.ETOOMANYATTEMPTS, time.Minute)
		wantPass(t, s, ip, email, baseTime.Add(16*time.Minute), l)
	})

	t.Run("retry after is rounded up to whole seconds", func(t *testing.T) {
		s := open(t)
		start := baseTime.Add(250 * time.Millisecond)
		for range 3 {
			fail(t, s, ip, email, start, l)
		}
		wantRefused(t, s, ip, email, baseTime.Add(10*time.Minute), l, quire.ETOOMANYATTEMPTS, 5*time.Minute+time.Second)
		wantRefused(t, s, ip, email, start.Add(15*time.Minute-time.Millisecond), l, quire.ETOOMANYATTEMPTS, time.Second)
	})

	t.Run("under a lowered limit the retry waits for enough failures to leave the window, not the oldest", func(t *testing.T) {
		s := open(t)
		wide := l
		wide.Limit, wide.LockThreshold = 5, 0
		for i := range 5 {
			fail(t, s, ip, email, baseTime.Add(time.Duration(i)*time.Minute), wide)
		}
		// Under a limit of 3, a place is free once the failures at 0, 1
		// and 2 minutes have left: at 17 minutes.
		wantRefused(t, s, ip, email, baseTime.Add(10*time.Minute), l, quire.ETOOMANYATTEMPTS, 7*time.Minute)
		wantRefused(t, s, ip, email, baseTime.Add(16*time.Minute), l, quire.ETOOMANYATTEMPTS, time.Minute)
		wantPass(t, s, ip, email, baseTime.Add(17*time.Minute), l)
	})

	t.Run("refused attempts record nothing", func(t *testing.T) {
		s := open(t)
		l := quire.LoginLimits{Limit: 3, Window: 15 * time.Minute, LockThreshold: 100, LockDuration: 30 * time.Minute}
		for range 3 {
			fail(t, s, ip, email, baseTime, l)
		}
		for i := range 10 {
			wantRefused(t, s, ip, email, baseTime.Add(time.Duration(i)*time.Minute), l,
				quire.ETOOMANYATTEMPTS, 15*time.Minute-time.Duration(i)*time.Minute)
		}
		// Had the refusals counted, the window would still be full.
		for range 3 {
			fail(t, s, ip, email, baseTime.Add(15*time.Minute), l)
		}
		wantRefused(t, s, ip, email, baseTime.Add(15*time.Minute), l, quire.ETOOMANYATTEMPTS, 15*time.Minute)
	})

	t.Run("another email or another address is not limited by the pair", func(t *testing.T) {
		s := open(t)
		for range 3 {
			fail(t, s, ip, email, baseTime, l)
		}
		wantRefused(t, s, ip, email, baseTime, l, quire.ETOOMANYATTEMPTS, 15*time.Minute)
		wantPass(t, s, ip2, email, baseTime, l)
		wantPass(t, s, ip, "bob@example.com", baseTime, l)
	})

	t.Run("a success does not count and does not clear the window", func(t *testing.T) {
		s := open(t)
		fail(t, s, ip, email, baseTime, l)
		fail(t, s, ip, email, baseTime, l)
		for range 5 {
			succeed(t, s, ip, email, baseTime.Add(time.Minute), l)
		}
		fail(t, s, ip, email, baseTime.Add(2*time.Minute), l)
		wantRefused(t, s, ip, email, baseTime.Add(2*time.Minute), l, quire.ETOOMANYATTEMPTS, 13*time.Minute)
	})

	t.Run("consecutive failures from any address lock the email at the threshold until the lock expires", func(t *testing.T) {
		s := open(t)
		// Five addresses, so that no pair reaches its own limit.
		addrs := []string{"192.0.2.10", "192.0.2.11", "192.0.2.12", "192.0.2.13", "192.0.2.14"}
		for i, addr := range addrs {
			fail(t, s, addr, email, baseTime.Add(time.Duration(i)*time.Second), l)
		}
		lockedAt := baseTime.Add(4 * time.Second)
		wantRefused(t, s, "198.51.100.7", email, lockedAt, l, quire.EACCOUNTLOCKED, 30*time.Minute)
		wantRefused(t, s, addrs[0], email, lockedAt.Add(10*time.Minute+500*time.Millisecond), l,
			quire.EACCOUNTLOCKED, 20*time.Minute)
		wantPass(t, s, ip, "bob@example.com", lockedAt, l)

		// After expiry the count starts again from zero: four failures do
		// not lock, the fifth does.
		expiry := lockedAt.Add(30 * time.Minute)
		for i, addr := range addrs[:4] {
			fail(t, s, addr, email, expiry.Add(time.Duration(i)*time.Second), l)
		}
		wantPass(t, s, addrs[4], email, expiry.Add(5*time.Second), l)
		// wantPass withdrew its attempt as a success, which reset the count.
		for i, addr := range addrs {
			fail(t, s, addr, email, expiry.Add(time.Duration(10+i)*time.Second), l)
		}
		wantRefused(t, s, ip, email, expiry.Add(14*time.Second), l, quire.EACCOUNTLOCKED, 30*time.Minute)
	})

	t.Run("the lock wins over the window", func(t *testing.T) {
		s := open(t)
		both := quire.LoginLimits{Limit: 3, Window: 15 * time.Minute, LockThreshold: 3, LockDuration: time.Hour}
		for range 3 {
			fail(t, s, ip, email, baseTime, both)
		}
		wantRefused(t, s, ip, email, baseTime.Add(time.Minute), both, quire.EACCOUNTLOCKED, 59*time.Minute)
	})

	t.Run("a success resets the consecutive count but leaves an active lock alone", func(t *testing.T) {
		s := open(t)
		addrs := []string{"192.0.2.10", "192.0.2.11", "192.0.2.12", "192.0.2.13", "192.0.2.14"}
		for _, addr := range addrs[:4] {
			fail(t, s, addr, email, baseTime, l)
		}
		succeed(t, s, ip, email, baseTime, l)
		for _, addr := range addrs[:4] {
			fail(t, s, addr, email, baseTime.Add(time.Minute), l)
		}
		wantPass(t, s, ip, email, baseTime.Add(time.Minute), l)

		// An attempt in flight while parallel failures lock the email:
		// its success withdraws its reservation but does not unlock.
		inFlight := must(s.BeginLogin(t.Context(), ip, email, baseTime.Add(2*time.Minute), l))(t)
		for _, addr := range addrs {
			fail(t, s, addr, email, baseTime.Add(2*time.Minute), l)
		}
		if err := s.LoginSucceeded(t.Context(), inFlight, email); err != nil {
			t.Fatal(err)
		}
		wantRefused(t, s, ip, email, baseTime.Add(3*time.Minute), l, quire.EACCOUNTLOCKED, 29*time.Minute)
	})

	t.Run("clear removes the lock, the count and the failures of the email from every address", func(t *testing.T) {
		s := open(t)
		const other = "bob@example.com"
		for range 3 {
			fail(t, s, ip, email, baseTime, l)
			fail(t, s, ip, other, baseTime, l)
		}
		for range 2 { // the fifth consecutive failure locks email
			fail(t, s, ip2, email, baseTime, l)
		}
		wantRefused(t, s, ip, email, baseTime, l, quire.EACCOUNTLOCKED, 30*time.Minute)
		if err := s.ClearLoginFailures(t.Context(), email); err != nil {
			t.Fatal(err)
		}
		wantPass(t, s, ip, email, baseTime, l)
		wantPass(t, s, ip2, email, baseTime, l)
		wantRefused(t, s, ip, other, baseTime, l, quire.ETOOMANYATTEMPTS, 15*time.Minute)

		// The consecutive count is gone too: after clearing, it takes the
		// full threshold again to lock.
		for range 4 {
			if err := s.LoginFailed(t.Context(), email, baseTime, l, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ClearLoginFailures(t.Context(), email); err != nil {
			t.Fatal(err)
		}
		if err := s.LoginFailed(t.Context(), email, baseTime, l, nil); err != nil {
			t.Fatal(err)
		}
		wantPass(t, s, ip, email, baseTime, l)
	})

	t.Run("clearing an email without failures is no error", func(t *testing.T) {
		s := open(t)
		if err := s.ClearLoginFailures(t.Context(), "nobody@example.com"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("of 100 parallel attempts of one pair exactly the limit get past", func(t *testing.T) {
		s := open(t)
		defaults := quire.LoginLimits{Limit: 20, Window: 15 * time.Minute, LockThreshold: 1000, LockDuration: 30 * time.Minute}
		var (
			passed, refused atomic.Int32
			wg              sync.WaitGroup
			errs            = make(chan error, 100)
		)
		for range 100 {
			wg.Go(func() {
				_, err := s.BeginLogin(t.Context(), ip, email, baseTime, defaults)
				switch {
				case err == nil:
					passed.Add(1)
					if err := s.LoginFailed(t.Context(), email, baseTime, defaults, nil); err != nil {
						errs <- err
					}
				case quire.ErrorCode(err) == quire.ETOOMANYATTEMPTS:
					refused.Add(1)
				default:
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if passed.Load() != 20 || refused.Load() != 80 {
			t.Errorf("passed %d, refused %d; want 20 and 80", passed.Load(), refused.Load())
		}
		wantRefused(t, s, ip, email, baseTime, defaults, quire.ETOOMANYATTEMPTS, 15*time.Minute)
	})
}
