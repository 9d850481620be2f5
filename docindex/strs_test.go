package docindex

import (
	"fmt"
	"runtime"
	"testing"
)

// TestIndexPacksIdsAndTerms: the ids and terms the index keeps are packed
// into a few blocks, not an object each: objects the collector marks at
// every collection, and kept in spans shared with the garbage of a build.
func TestIndexPacksIdsAndTerms(t *testing.T) {
	if raced {
		t.Skip("the race detector changes the heap")
	}
	const n = 5000
	docs := make([]*Doc, n)
	for i := range docs {
		seq := int64(i + 1)
		// A UUID's length, as quire's ids; the words mostly of their own.
		docs[i] = &Doc{Seq: seq, ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", seq, seq*7919),
			Title: fmt.Sprintf("release note%d", i), Content: fmt.Sprintf("deploy ticket%d word%d", i, i*3), Status: "draft", Visibility: "public"}
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	x := New()
	x.Lock()
	for _, d := range docs {
		x.Put(d)
	}
	x.Trim()
	x.Unlock()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	terms := x.Stats().Terms
	runtime.KeepAlive(x)
	runtime.KeepAlive(docs)
	objects := int(m1.HeapObjects) - int(m0.HeapObjects)
	t.Logf("%d documents, %d terms: %d heap objects", n, terms, objects)
	// One each would be n ids and about 3n terms.
	if objects > n/2 {
		t.Errorf("%d heap objects for %d documents and %d terms, want at most %d", objects, n, terms, n/2)
	}
}
