package docindex

import "runtime"

// arena is the frozen base of the postings: one block of exactly their
// size, mapped from the system where it can be (arena_linux.go) so that
// the collector neither scans it nor counts it in its goal (a heap of 50
// MiB of postings would otherwise let the heap grow to 100 MiB before a
// collection), and given back to the system as soon as it is replaced.
type arena struct {
	b      []byte
	mapped bool // b is mapped (mapBytes), not on the heap
	freed  int  // b[:freed] was given back (release)
}

// mapMin is the smallest base mapped from the system; a smaller one (a
// test's, a new server's) is a plain slice. Tests lower it.
var mapMin = 1 << 20

func newArena(n int) *arena {
	if n >= mapMin {
		if b, ok := mapBytes(n); ok {
			return &arena{b: b, mapped: true}
		}
	}
	return &arena{b: make([]byte, n)}
}

// release gives back the whole pages of a[:upTo], which will not be read
// again (the arena is being copied into its successor, in order).
func (a *arena) release(upTo int) {
	if !a.mapped {
		return
	}
	const page = 1 << 16 // a multiple of every page size
	if end := upTo &^ (page - 1); end > a.freed {
		dropPages(a.b[a.freed:end])
		a.freed = end
	}
}

// free unmaps a; nothing may read it afterwards.
func (a *arena) free() {
	if a.mapped {
		unmapBytes(a.b)
	}
	a.b, a.mapped, a.freed = nil, false, 0
}

// holder keeps the index's arena; the index is collected while a search
// may still hold it, so the arena is freed only once the index is
// unreachable (a cleanup), or when a merge replaces it under the write
// lock.
type holder struct{ a *arena }

func attach(x *Index) *holder {
	h := &holder{a: &arena{}}
	runtime.AddCleanup(x, func(h *holder) { h.a.free() }, h)
	return h
}
