package sqlite

import (
	"context"
	"database/sql"

	"quire"
)

// Recording returns a DB sharing db's database, its committer and its
// caches, whose write transactions (commit.go's tx) insert evs after
// their change: a change refused writes none of them. It keeps db's
// quire.Keep. Its result type
// checks that a DB is a whole quire.Store.
func (db *DB) Recording(evs ...*quire.Event) quire.Store {
	return withStore(&DB{shared: db.shared, events: append(db.events[:len(db.events):len(db.events)], evs...),
		keep: db.keep})
}

// execer runs a statement: a transaction, or a cachedQuerier of one, which
// runs it as a prepared statement of the writing connection.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}
