// Package sqlitetest gives tests a SQLite file with every migration
// applied, cheaply.
package sqlitetest

import (
	"context"
	"testing"

	"quire/internal/tmpfs"
	"quire/sqlite"
)

// Migrated returns the path of a copy, in memory (package tmpfs), of a
// SQLite file migrated once for the test process. It is for tests that are
// not about durability or migrations (package sqlite has tests of both):
// under the race detector the migrations cost about half a second of CPU,
// a copy a fraction of that.
func Migrated(tb testing.TB) string {
	tb.Helper()
	return tmpfs.CopyOf(tb, "migrated", "quire.db", migrate)
}

func migrate(path string) error {
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return err
	}
	return db.Close()
}
