package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// The default memory limit follows the live heap: room above it of as
// much again (32 MiB at least), a heap held across collections raises it,
// one collection that met a transient does not; while passwords are
// hashed it leaves room for a hash's block. Not parallel: it sets the
// process's memory limit.
func TestAutoMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	var hashes uint64
	now := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	g := newMemGovernor(func() uint64 { return hashes })
	collect := func() int64 {
		runtime.GC()
		limit := g.step(now)
		if got := debug.SetMemoryLimit(-1); got != limit {
			t.Fatalf("step returned %d, the limit is %d", limit, got)
		}
		return limit
	}
	var first int64
	for range autoWindow {
		first = collect()
	}
	if live := liveHeap(); first < int64(live)+autoHeadroom {
		t.Fatalf("limit %d MiB leaves less than %d MiB above the live heap of %d MiB", first>>20, autoHeadroom>>20, live>>20)
	}

	const big = 64 << 20
	held := make([]byte, big)
	if got := collect(); got > first+big/2 {
		t.Errorf("one collection with %d MiB more live raised the limit from %d to %d MiB", big>>20, first>>20, got>>20)
	}
	var grown int64
	for range autoWindow {
		grown = collect()
	}
	if live := liveHeap(); grown < int64(2*live) || grown < first+big {
		t.Errorf("a heap %d MiB larger across %d collections (%d MiB live): limit %d MiB, was %d",
			big>>20, autoWindow, live>>20, grown>>20, first>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	rest := collect()
	if rest > first+big/4 {
		t.Errorf("the heap back to what it was: limit %d MiB, was %d", rest>>20, first>>20)
	}

	hashes++
	if got := g.step(now); got < rest+hashRoom {
		t.Errorf("hashing: limit %d MiB, %d without", got>>20, rest>>20)
	}
	now = now.Add(hashRecent)
	if got := g.step(now); got >= rest+hashRoom {
		t.Errorf("%s after the last hash: limit %d MiB, %d before hashing", hashRecent, got>>20, rest>>20)
	}
}

// Two servers of one process (tests) each keep the limit; once both have
// stopped, in the order they started, the process has its own limit back.
// Not parallel: it sets the process's memory limit.
func TestMemGovernorsPutTheLimitBack(t *testing.T) {
	before := processMemoryLimit()
	// Until a governor has set a limit: one step after a collection.
	waitSet := func() {
		for debug.SetMemoryLimit(-1) == before {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	stopA := startMemGovernor(nil)
	waitSet()
	stopB := startMemGovernor(nil)
	stopA()
	waitSet() // B's next step
	stopB()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after both stopped, want the process's %d", got, before)
	}
}
