package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"quire"
)

// A full disk.
//
// A write that finds no room (SQLITE_FULL: the file system is out of space,
// or the database has reached its max_page_count) is a known condition, not
// a bug: the write is answered 503 UNAVAILABLE with Retry-After (its error
// wraps quire.ErrUnavailable, and the API logs it with its cause), and the
// store remembers it, so that Ping, and /readyz with it, report the disk
// full until a write commits a change again. Nothing else changes: reads go
// on, and each write tries for itself, so the first one after space is
// freed succeeds and clears the state.

// errDiskFull is Ping's answer while the disk is full.
var errDiskFull = &quire.Error{Code: quire.EUNAVAILABLE, Message: "The database's disk is full"}

// isFull reports whether err is SQLite's SQLITE_FULL, or one of its
// extended codes.
func isFull(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

// noteWrite returns the error of a write for its caller: a full disk is
// marked and made unavailable; anything else is returned as is.
func (db *DB) noteWrite(err error) error {
	if err != nil && isFull(err) {
		db.diskFull.Store(true)
		return fmt.Errorf("%w: disk full: %w", quire.ErrUnavailable, err)
	}
	return err
}

// noteChange clears the full state after a write that changed a row
// outside the committer succeeded.
func (db *DB) noteChange() { db.diskFull.Store(false) }

// changesBefore returns the connection's count of changed rows at the
// start of tx while the disk is marked full, and -1 otherwise: only then
// does the commit need to tell a transaction that changed something (and
// so found room) from one that did not.
func (db *DB) changesBefore(ctx context.Context, tx *sql.Tx) int64 {
	if !db.diskFull.Load() {
		return -1
	}
	n, err := totalChanges(ctx, tx)
	if err != nil {
		return -1
	}
	return n
}

func totalChanges(ctx context.Context, tx *sql.Tx) (n int64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n)
	return n, err
}
