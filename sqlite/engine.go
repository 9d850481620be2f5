package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"quire"
	"quire/sqlstore"
)

// engine is the DB as the shared store layer (package sqlstore) sees it.
type engine struct{ db *DB }

var dialect = &sqlstore.Dialect{
	Name:      "sqlite",
	Time:      func(t time.Time) any { return toMicros(t) },
	NoTime:    "0",
	ForUpdate: "",
	Greatest:  "max",
	Least:     "min",
	// The committer's transaction is the only writer.
	Lock:     func(context.Context, sqlstore.Q, int32, string) error { return nil },
	IsUnique: isUnique,
	IsForeignKey: func(err error) bool {
		var se *sqlite.Error
		return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	},
}

func (e engine) Dialect() *sqlstore.Dialect { return dialect }

func (e engine) Events() []*quire.Event { return e.db.events }

func (e engine) Write(ctx context.Context, fn func(ctx context.Context, q sqlstore.Q) error) error {
	return e.db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return fn(ctx, qOf(cachedQuerier{c: e.db.writes, tx: tx}))
	})
}

func (e engine) ExecOne(ctx context.Context, what, query string, args ...any) (int64, error) {
	db := e.db
	var n int64
	if len(db.events) == 0 {
		res, err := db.write.ExecContext(ctx, query, args...)
		if err != nil {
			return 0, db.noteWrite(err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return 0, err
		}
		if n > 0 {
			db.noteChange()
		}
	} else {
		err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, query, args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			if err == nil && n == 0 && what != "" {
				return sqlstore.NotFound(what)
			}
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	if n == 0 && what != "" {
		return 0, sqlstore.NotFound(what)
	}
	return n, nil
}

func (e engine) Read() sqlstore.Q { return qOf(cachedQuerier{c: e.db.reads}) }

// Snapshot runs fn on the read pool's prepared statements (stmts.go), as
// the engine's own reads did: a page and its total are asked on every
// document page (backlinks).
func (e engine) Snapshot(ctx context.Context, fn func(q sqlstore.Q) error) error {
	e.db.reads.preparePending(ctx)
	tx, err := e.db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(qOf(cachedQuerier{c: e.db.reads, tx: tx}))
}

func (e engine) Fail(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var qe *quire.Error
	if errors.As(err, &qe) {
		return qe
	}
	if errors.Is(err, quire.ErrUnavailable) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w", op, e.db.noteWrite(err))
}

// querier is what *sql.DB, *sql.Tx and cachedQuerier offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// qOf is a pool, a transaction or a cachedQuerier as a sqlstore.Q.
func qOf(q querier) sqlstore.Q { return liteQ{q} }

type liteQ struct{ q querier }

func (l liteQ) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := l.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (l liteQ) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := l.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return liteRows{rows}, nil
}

func (l liteQ) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return l.q.QueryRowContext(ctx, query, args...)
}

type liteRows struct{ *sql.Rows }

func (r liteRows) Close() { r.Rows.Close() }
