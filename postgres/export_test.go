package postgres

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The backup's lists of tables, for the test that holds them to the catalog.
var BackupTables, RebuiltTables = backupTables, rebuiltTables

// Pool is the store's pool, for tests that read the catalog or whole tables.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// FollowIndex sets, before the index starts, how often it polls, how many
// changes it keeps in the log for other nodes, and whether it listens.
func (db *DB) FollowIndex(poll time.Duration, keep int64, listen bool) {
	db.index.SetFollow(poll, keep)
	db.index.TrimEvery.Store(1)
	db.index.noListen = !listen
}

// IndexCursor is the last change the index holds (-1 before it is built).
func (db *DB) IndexCursor() int64 {
	if x := db.index.Index(); x != nil {
		return x.Cursor()
	}
	return -1
}

// Counting returns ctx and the count of the statements run with it (or a
// context made from it) on the pools of this package: round trips to
// PostgreSQL, BEGIN and the like included.
func Counting(ctx context.Context) (context.Context, *atomic.Int64) {
	n := new(atomic.Int64)
	return context.WithValue(ctx, countingKey{}, n), n
}

type countingKey struct{}

type countingTracer struct{}

func (countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if n, ok := ctx.Value(countingKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
	return ctx
}

func (countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func init() { testTracer = countingTracer{} }
