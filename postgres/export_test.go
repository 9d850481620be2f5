package postgres

import (
	"context"
	"slices"
	"sync"
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

// Counting returns ctx and the statements run with it (or a context made
// from it) on the pools of this package: round trips to PostgreSQL, BEGIN
// and the like included.
func Counting(ctx context.Context) (context.Context, *Statements) {
	st := new(Statements)
	return context.WithValue(ctx, countingKey{}, st), st
}

// Statements are the statements of a Counting context, in order.
type Statements struct {
	mu   sync.Mutex
	list []Statement
}

// Statement is one statement's text and arguments.
type Statement struct {
	SQL  string
	Args []any
}

// All returns the statements run so far.
func (s *Statements) All() []Statement {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}

type countingKey struct{}

type countingTracer struct{}

func (countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if st, ok := ctx.Value(countingKey{}).(*Statements); ok {
		st.mu.Lock()
		st.list = append(st.list, Statement{data.SQL, data.Args})
		st.mu.Unlock()
	}
	return ctx
}

func (countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func init() { testTracer = countingTracer{} }
