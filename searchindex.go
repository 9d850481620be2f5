package quire

import "context"

// SearchIndexer is implemented by a store that may answer ListDocuments from
// an index it keeps in memory beside its database (the SQLite store's
// documents index, package docindex), rather than by its own full-text and
// filter queries. The answers are the same either way: the index is a
// faster path to them, never a different meaning, and it falls back to the
// store's queries whenever it cannot answer exactly (still building, a
// search it cannot tokenize as the store does, a sort it does not keep).
type SearchIndexer interface {
	// StartSearchIndex builds the index in the background and keeps it
	// until the store closes; until then, and while it builds, every list
	// is answered by the store's own queries. quire serve calls it.
	StartSearchIndex()
	// SearchIndexReady starts the index if need be and waits until it has
	// caught up with every write the store acknowledged before the call,
	// or ctx ends.
	SearchIndexReady(ctx context.Context) error
	// UseSearchIndex turns the index on (the default) or off; off, every
	// list is answered by the store's own queries, which is what the store
	// suite compares the index with.
	UseSearchIndex(on bool)
}
