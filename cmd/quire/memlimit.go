package main

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// The default memory limit (--memory-limit auto) follows what the process
// holds: the heap found live by the last collections, as much again (at
// least autoHeadroom), the runtime's own memory (stacks, its structures),
// and while passwords are being hashed (in the last hashRecent) room for
// one argon2id hash's block (hashRoom). In the steady state
// the collector's own goal (twice the live heap) is below it, so the
// collector runs no more often than by default however large the
// database; what the limit stops is a transient raising the goal: Go sets
// the next goal from what was live at the last mark, and when an argon2id
// hash's block (19 MiB) or a build's rows were live then, the heap was let
// grow by twice that too, and the pages freed since were kept. The limit
// also makes the runtime give freed pages back to the system at once
// rather than slowly. The block's room is there because the limit counts
// the pages of the last block, freed (auth's makeRoom) but not yet taken
// by the next: without it the collector ran while every hash held its
// block, when it could free nothing (2.6 collections a sign-in at 100,000
// documents instead of 1, 57 ms of CPU a sign-in instead of 38). Only
// while hashing: the same 20 MiB let searches' transients grow the heap
// by as much (peak RSS 149 -> 166 MiB in search-common at 100,000, one
// run).
//
// The live heap is the smallest of the last autoWindow collections, so
// one collection that met a transient does not raise the limit; a heap
// that really grew (documents written, an index built again beside the
// old) raises it autoWindow collections later. Until then the collector
// runs more often, at most half the CPU (Go's limiter), which is the
// price of holding the limit.
const (
	autoHeadroom = 32 << 20
	hashRoom     = 20 << 20
	autoWindow   = 4
	autoEvery    = 500 * time.Millisecond
	hashRecent   = 10 * time.Second
)

// autoMemoryLimit is the limit for a live heap of live bytes, the
// runtime's own memory of overhead bytes, and room bytes more.
func autoMemoryLimit(live, overhead, room uint64) int64 {
	return int64(overhead + live + max(live, autoHeadroom) + room)
}

// memGovernor keeps the Go runtime's soft memory limit at autoMemoryLimit
// of the live heap (the smallest of the last autoWindow collections).
type memGovernor struct {
	// hashes counts the password hashes made (auth's slots taken), nil
	// for none; hashed is when it last changed, seen the count it had.
	hashes   func() uint64
	seen     uint64
	hashed   time.Time
	overhead uint64

	samples []metrics.Sample
	cycles  uint64             // the collections seen
	lives   [autoWindow]uint64 // the live heap after the last collections, a ring
	n       int                // collections recorded in lives
}

func newMemGovernor(hashes func() uint64) *memGovernor {
	names := []string{
		"/gc/cycles/total:gc-cycles",
		"/gc/heap/live:bytes",
		"/memory/classes/total:bytes",
		"/memory/classes/heap/released:bytes",
		"/memory/classes/heap/free:bytes",
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
	}
	g := &memGovernor{hashes: hashes, samples: make([]metrics.Sample, len(names))}
	for i, name := range names {
		g.samples[i].Name = name
	}
	return g
}

// step reads the runtime's figures and sets the limit again (after a
// collection not seen yet, or when hashing started or stopped); it
// returns the limit (0 before any collection).
func (g *memGovernor) step(now time.Time) int64 {
	metrics.Read(g.samples)
	v := func(i int) uint64 {
		if g.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return g.samples[i].Value.Uint64()
	}
	if cycles := v(0); cycles != 0 && cycles != g.cycles {
		g.cycles = cycles
		g.lives[g.n%autoWindow] = v(1)
		g.n++
		// What the limit counts beside the heap's pages: everything the
		// runtime holds from the system but not given back.
		held, heap := v(2)-v(3), v(4)+v(5)+v(6)
		g.overhead = 0
		if held > heap {
			g.overhead = held - heap
		}
	}
	if g.n == 0 {
		return 0
	}
	if g.hashes != nil {
		if n := g.hashes(); n != g.seen {
			g.seen, g.hashed = n, now
		}
	}
	room := uint64(0)
	if !g.hashed.IsZero() && now.Sub(g.hashed) < hashRecent {
		room = hashRoom
	}
	live := uint64(math.MaxUint64)
	for _, l := range g.lives[:min(g.n, autoWindow)] {
		live = min(live, l)
	}
	limit := autoMemoryLimit(live, g.overhead, room)
	debug.SetMemoryLimit(limit)
	return limit
}

// processMemoryLimit is the limit the process had before any governor
// set one.
var processMemoryLimit = sync.OnceValue(func() int64 { return debug.SetMemoryLimit(-1) })

// startMemGovernor keeps the limit until stop is called, then puts back
// the process's own, unless another governor (another server of a test
// process, which sets its own again at each step) set the limit since:
// the last to stop puts it back.
func startMemGovernor(hashes func() uint64) (stop func()) {
	before := processMemoryLimit()
	g := newMemGovernor(hashes)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var last int64
		defer func() {
			if last != 0 && debug.SetMemoryLimit(-1) == last {
				debug.SetMemoryLimit(before)
			}
		}()
		t := time.NewTicker(autoEvery)
		defer t.Stop()
		for {
			if l := g.step(time.Now()); l != 0 {
				last = l
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
