package storetest

import "testing"

// RunBenches runs the benchmarks of documents that each store runs alike,
// as sub-benchmarks of b, on the fixtures open returns:
//
//   - List reads the first page of 20, newest first, with the total, as
//     the editor.
//   - Search finds two words, best first, first page of 20 with the total,
//     as the editor.
//   - Read reads one visible document by id, content included.
//   - GuardedUpdate saves a new body under the conflict guard, which also
//     rewrites the document's entry in the search index and records a
//     version, on a scratch copy of the database.
func RunBenches(b *testing.B, open BenchOpener) {
	b.Run("List", func(b *testing.B) { RunBench(b, open, false, BenchList) })
	b.Run("Search", func(b *testing.B) { RunBench(b, open, false, BenchSearch) })
	b.Run("Read", func(b *testing.B) { RunBench(b, open, false, BenchRead) })
	b.Run("GuardedUpdate", func(b *testing.B) { RunBench(b, open, true, BenchGuardedUpdate) })
}
