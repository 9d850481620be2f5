package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"quire"
)

// Recording returns a DB on db's pool whose transactions (db.go's tx)
// write evs after their change, or nothing when it is refused. It keeps
// db's quire.Keep.
func (db *DB) Recording(evs ...*quire.Event) quire.Store {
	return withStore(&DB{pool: db.pool, searches: db.searches, index: db.index, events: append(db.events[:len(db.events):len(db.events)], evs...),
		keep: db.keep})
}

// exec runs one write statement on the pool, or, when db records events,
// in a transaction with them. When one is not "", a statement that changes
// no row is ENOTFOUND naming it, decided inside the transaction, so that
// the events of a change that did not happen are not written.
func (db *DB) exec(ctx context.Context, one, query string, args ...any) (pgconn.CommandTag, error) {
	if len(db.events) == 0 {
		tag, err := db.pool.Exec(ctx, query, args...)
		if err == nil && one != "" && tag.RowsAffected() == 0 {
			return tag, notFound(one)
		}
		return tag, err
	}
	var tag pgconn.CommandTag
	err := db.tx(ctx, func(tx pgx.Tx) (err error) {
		tag, err = tx.Exec(ctx, query, args...)
		if err == nil && one != "" && tag.RowsAffected() == 0 {
			return notFound(one)
		}
		return err
	})
	return tag, err
}
