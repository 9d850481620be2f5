package live_test

import (
	"context"
	"testing"
	"time"

	"quire/internal/sqlitetest"
	"quire/internal/testclock"
	"quire/live"
	"quire/live/livetest"
	"quire/sqlite"
)

// newEnv serves the live editor on a SQLite file (in memory, package
// tmpfs: these tests are not about durability); cfg adjusts the live
// server's configuration.
func newEnv(t testing.TB, cfg func(*live.Config)) *livetest.Node {
	t.Helper()
	db, err := sqlite.Open(context.Background(), sqlitetest.Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return livetest.Start(t, db, testclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)), cfg)
}
