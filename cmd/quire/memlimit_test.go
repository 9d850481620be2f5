package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// The default memory limit follows the live heap: room above it of as
// much again (32 MiB at least), a heap held across collections raises it,
// one collection that met a transient does not. Not parallel: it sets the
// process's memory limit.
func TestAutoMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	g := newMemGovernor()
	collect := func() int64 {
		runtime.GC()
		limit := g.step()
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
	if got := collect(); got > first+big/4 {
		t.Errorf("the heap back to what it was: limit %d MiB, was %d", got>>20, first>>20)
	}
}
