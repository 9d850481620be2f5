package auth

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"quire"
	"quire/internal/sqlitetest"
	"quire/internal/testpass"
	"quire/sqlite"
)

// heapInUse is the memory the Go runtime holds from the system and has
// not freed: what a soft memory limit counts, less the free pages a new
// allocation takes first.
func heapInUse() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64()
}

// block is the size of a hash's block at quire's parameters.
const block = argonMemory << 10

// limitWithRoomForOneBlock sets the process's soft memory limit to what
// the runtime holds now plus one hash's block and 8 MiB, restoring the
// limit when t ends, and returns it.
func limitWithRoomForOneBlock(t *testing.T) uint64 {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	runtime.GC()
	limit := heapInUse() + block + 8<<20
	debug.SetMemoryLimit(int64(limit))
	return limit
}

// Under a soft memory limit a finished hash leaves room for the next
// one's block: its own block is collected before the slot is given back,
// so two blocks (38 MiB) are never held where the limit has room for one.
// Not parallel: it sets the process's memory limit.
func TestHashLeavesRoomUnderMemoryLimit(t *testing.T) {
	limit := limitWithRoomForOneBlock(t)
	s := &Service{hasher: newHasher(0, newStats())}
	for i := range 2 {
		if _, err := s.hash(context.Background(), "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		if got := heapInUse(); got+block > limit {
			t.Fatalf("after hash %d: %d MiB in use, no room for another block of %d MiB under the limit of %d MiB",
				i+1, got>>20, block>>20, limit>>20)
		}
	}
}

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A hash of a test's cost (64 KiB) leaves its small block to the
// collector's own pace: no collection a sign-in, as there would be if
// every hash made room for a 19 MiB block. Not parallel: it sets the
// process's memory limit.
func TestCheapHashCollectsNothing(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	encoded := testpass.Hash("correct horse battery")
	runtime.GC()
	// Room for a cheap block, not for a full one.
	debug.SetMemoryLimit(int64(heapInUse() + 12<<20))
	s := &Service{hasher: newHasher(0, newStats())}
	const n = 20
	cycles := gcCycles()
	for range n {
		if ok, err := s.verify(context.Background(), encoded, "correct horse battery"); err != nil || !ok {
			t.Fatalf("verify: %v, %v", ok, err)
		}
	}
	if got := gcCycles() - cycles; got > n/4 {
		t.Errorf("%d collections for %d verifications of a 64 KiB hash", got, n)
	}
}

// Sign-in takes the hashing slot itself: it too collects the block it
// hashed before giving the slot back. Not parallel: it sets the process's
// memory limit.
func TestSignInLeavesRoomUnderMemoryLimit(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, sqlitetest.Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const password = "correct horse battery staple"
	hash, err := HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	u := &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "editor"}, Status: quire.UserActive, PasswordHash: hash}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	s, err := New(db, DefaultConfig(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}

	limit := limitWithRoomForOneBlock(t)
	for i := range 2 {
		if _, err := s.Login(ctx, quire.RequestInfo{IP: "192.0.2.1"}, u.Email, password, ""); err != nil {
			t.Fatal(err)
		}
		if got := heapInUse(); got+block > limit {
			t.Fatalf("after sign-in %d: %d MiB in use, no room for another block of %d MiB under the limit of %d MiB",
				i+1, got>>20, block>>20, limit>>20)
		}
	}
}
