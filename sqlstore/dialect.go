package sqlstore

import (
	"context"
	"time"
)

// Dialect is where the engines' SQL differs.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// Time encodes t for a bound parameter; the zero time is the column's
	// "none" (0 in SQLite, NULL in PostgreSQL).
	Time func(t time.Time) any
	// NoTime is the value of a time column that holds none, as SQL: "0" or
	// "NULL".
	NoTime string
	// ForUpdate is appended to a SELECT that reads a row a transaction is
	// about to change: " FOR UPDATE" where other writers run at the same
	// time, "" where the transaction is the only writer (SQLite).
	ForUpdate string
	// Greatest and Least name the SQL functions of the larger and the
	// smaller of their arguments: max/min in SQLite, greatest/least in
	// PostgreSQL.
	Greatest, Least string
	// Lock takes the transaction-scoped lock (class, key) in q, held until
	// the transaction ends; nothing where the transaction is the only
	// writer.
	Lock func(ctx context.Context, q Q, class int32, key string) error
	// IsUnique and IsForeignKey report whether err is the violation of a
	// unique (or primary key) constraint or of a foreign key.
	IsUnique, IsForeignKey func(err error) bool
}

// None is the condition that the time column col holds no time.
func (d *Dialect) None(col string) string {
	if d.NoTime == "NULL" {
		return col + " IS NULL"
	}
	return col + " = " + d.NoTime
}

// Some is the condition that the time column col holds a time.
func (d *Dialect) Some(col string) string {
	if d.NoTime == "NULL" {
		return col + " IS NOT NULL"
	}
	return col + " <> " + d.NoTime
}

// Locked is clause, a row lock (" FOR UPDATE SKIP LOCKED", " FOR NO KEY
// UPDATE", " FOR KEY SHARE OF d"), where other writers run at the same
// time (PostgreSQL), and "" where the transaction is the only writer.
// FOR NO KEY UPDATE, for a change that leaves the row's key alone, neither
// waits for nor blocks the inserts of rows that reference it; SKIP LOCKED,
// in a bounded prune or a claim of work, passes over rows another node's
// transaction holds rather than waiting for them.
func (d *Dialect) Locked(clause string) string {
	if d.ForUpdate == "" {
		return ""
	}
	return clause
}

// lockOne takes the one-key lock of class (key 0, as the nodes always took
// it) for the transaction q; with try, without waiting, and reports
// whether it was taken: of several nodes whose periodic jobs fall due
// together, one does the work and the others return at once. SQLite's
// transaction is the only writer: always held.
func (d *Dialect) lockOne(ctx context.Context, q Q, class int32, try bool) (mine bool, err error) {
	if d.Name != "postgres" {
		return true, nil
	}
	query := `SELECT true FROM pg_advisory_xact_lock(?, 0)`
	if try {
		query = `SELECT pg_try_advisory_xact_lock(?, 0)`
	}
	err = q.QueryRow(ctx, query, class).Scan(&mine)
	return mine, err
}

// noCase orders the text column col case-insensitively in ASCII, then by
// code point: SQLite's NOCASE, PostgreSQL's lower under the "C" collation
// (the expression documents_title indexes).
func (d *Dialect) noCase(col string) string {
	if d.Name == "postgres" {
		return `lower(` + col + ` COLLATE "C")`
	}
	return col + ` COLLATE NOCASE`
}

// byCodePoint is col ordered by code point, as SQLite's BINARY collation
// does, whatever the PostgreSQL database's collation.
func (d *Dialect) byCodePoint(col string) string {
	if d.Name == "postgres" {
		return col + ` COLLATE "C"`
	}
	return col
}
