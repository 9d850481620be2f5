// Package storetest is the suite every quire.Store must pass, in the manner
// of testing/fstest.TestFS: the SQLite and PostgreSQL adapters run the same
// cases through Run, so the two cannot drift apart.
//
// Each file of the package registers its suites from init() with register,
// so that suites can be added without editing Run.
package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"quire"
)

// Opener returns a fresh, empty, migrated store (the default roles exist, no
// users do) and registers its cleanup with t.
type Opener func(t *testing.T) quire.Store

var suites = map[string]func(t *testing.T, open Opener){}

// register adds a suite under name. Names are unique; Run runs the suites
// in the order of their names so that runs are reproducible.
func register(name string, fn func(t *testing.T, open Opener)) {
	if _, dup := suites[name]; dup {
		panic(fmt.Sprintf("storetest: suite %q registered twice", name))
	}
	suites[name] = fn
}

// Run runs every registered suite as a subtest of t. The suites run in
// parallel with each other (each opens stores of its own), so open must be
// safe to call from several goroutines; the cases of one suite run in
// turn unless the suite says otherwise.
func Run(t *testing.T, open Opener) {
	names := make([]string, 0, len(suites))
	for name := range suites {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			suites[name](t, open)
		})
	}
}

// baseTime is the fixed clock the suites start from and move explicitly,
// so that no case depends on the wall clock or sleeps.
var baseTime = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// newUser creates an active user with the given normalised email and role
// (and department ID, "" for none) and fails the test when it cannot.
func newUser(t *testing.T, s quire.Store, email, roleKey, departmentID string) *quire.User {
	t.Helper()
	u := &quire.User{
		Email:        email,
		Name:         "User " + email,
		Role:         quire.Role{Key: roleKey},
		DepartmentID: departmentID,
		Status:       quire.UserActive,
		PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA",
	}
	if err := s.CreateUser(t.Context(), u); err != nil {
		t.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// wantCode fails the test when err does not carry code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := quire.ErrorCode(err); err == nil || got != code {
		t.Fatalf("error = %v (code %s), want code %s", err, got, code)
	}
}

// unknownID is a well-formed UUID that names nothing, for not-found cases
// (a store may keep IDs in a UUID column).
const unknownID = "0190b2a4-0000-7000-8000-000000000000"

// must returns a function that returns v, failing the test when err is not
// nil: x := must(s.UserByID(ctx, id))(t).
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// NewEditor creates an active editor of no department with the given
// normalised email, for the set-up of the engines' own tests, and fails the
// test when it cannot.
func NewEditor(t *testing.T, s quire.Store, email string) *quire.User {
	t.Helper()
	return newUser(t, s, email, "editor", "")
}

// openWithUser opens a fresh store (see Opener) holding one active user
// with the given normalised email and role, of no department, and returns
// both.
func openWithUser(t *testing.T, open Opener, email, roleKey string) (quire.Store, *quire.User) {
	t.Helper()
	s := open(t)
	return s, newUser(t, s, email, roleKey, "")
}

// wantTouchKeepsLatest touches id through touch at a time with
// microseconds, then at an earlier one, and fails the test unless lastUsed
// then reads the first (a touch never moves the last use back) and a touch
// of an unknown id is ENOTFOUND. It returns the time kept.
func wantTouchKeepsLatest(t *testing.T, touch func(ctx context.Context, id string, at time.Time) error, id string, lastUsed func() time.Time) time.Time {
	t.Helper()
	ctx := t.Context()
	later := baseTime.Add(90*time.Second + 123456*time.Microsecond)
	if err := touch(ctx, id, later); err != nil {
		t.Fatal(err)
	}
	if err := touch(ctx, id, baseTime.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); !got.Equal(later) {
		t.Errorf("LastUsedAt = %v, want %v", got, later)
	}
	wantCode(t, touch(ctx, unknownID, later), quire.ENOTFOUND)
	return later
}

// atOnce calls f from n goroutines at once and returns how many of the
// calls returned true, once all have returned.
func atOnce(n int, f func() bool) int {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count int
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f() {
				mu.Lock()
				count++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return count
}

// newDocWorldWithDraft is newDocWorld with one private draft of the
// owner's, titled title and created at baseTime: what most cases of one
// document start from.
func newDocWorldWithDraft(t *testing.T, open Opener, title string) (*docWorld, *quire.Document) {
	t.Helper()
	w := newDocWorld(t, open)
	return w, w.create(t, draft(w.owner, title), baseTime)
}

// tokenHash is the SHA-256 of a secret (a token, a session's token, a
// challenge, a recovery code), as the services store it.
func tokenHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// pluck returns f of each of xs, in order (never nil).
func pluck[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
