package anchor

// Work is what an index did so far: bytes scanned by the first lookups,
// bytes put in the suffix array, lookups in all, and the bytes of the
// needles looked up in the suffix array.
type Work struct{ Scanned, Indexed, Lookups, Needles int }

func (x *Index) Work() Work {
	return Work{Scanned: x.scanned, Indexed: x.indexed, Lookups: x.lookups, Needles: x.needles}
}

// ScanLookups is scanLookups, for the tests.
const ScanLookups = scanLookups
