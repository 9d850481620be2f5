package sqlite

import (
	"context"
	"database/sql"

	"quire"
	"quire/sqlstore"
)

// Recording returns a DB sharing db's database, its committer and its
// caches, whose write transactions (commit.go's tx) insert evs after
// their change: a change refused writes none of them. Its result type
// checks that a DB is a whole quire.Store.
func (db *DB) Recording(evs ...*quire.Event) quire.Store {
	return withStore(&DB{shared: db.shared, events: append(db.events[:len(db.events):len(db.events)], evs...)})
}

// Recorded are the events db writes with each write transaction, for the
// shared store to name what it creates.
func (e engine) Recorded() []*quire.Event { return e.db.events }

// execer runs a statement: a transaction, or a cachedQuerier of one, which
// runs it as a prepared statement of the writing connection.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertEvents writes evs in tx (sqlstore.InsertEvents). The committer's
// transactions pass a cachedQuerier, whose statements stay prepared.
func insertEvents(ctx context.Context, tx querier, evs []*quire.Event) error {
	return sqlstore.InsertEvents(ctx, qOf(tx), dialect, evs)
}
