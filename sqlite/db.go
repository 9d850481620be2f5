// Package sqlite implements quire's stores on an embedded SQLite database
// (modernc.org/sqlite, no cgo). It opens the file in WAL mode with a
// busy timeout and foreign keys, one writing connection beside a pool of
// readers, and applies the embedded migrations at Open.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"quire"
	"quire/sqlstore"
	"quire/stores"
)

// DB is a quire store on one SQLite file. Recording returns a DB that shares
// everything with its origin but the events it writes with each transaction.
type DB struct {
	*shared
	// events are written in every write transaction of this DB (audit.go).
	events []*quire.Event
	// keep is the idempotency its write transactions keep (Keeping).
	keep *quire.Keep
	// Set holds the operations written once for both engines: the shared
	// core and the capabilities' stores.
	stores.Set
}

// withStore returns db with its shared operations, which run on db.
func withStore(db *DB) *DB {
	db.Set = stores.New(engine{db})
	return db
}

// shared is the database itself: the pools, the committer, the state.
type shared struct {
	path  string
	write *sql.DB // exactly one connection: SQLite has one writer
	read  *sql.DB
	// reads runs the hot read queries (sessions, documents, lists) as
	// prepared statements of the read pool.
	reads *stmtCache
	// writes does the same for the document writes, whose statements
	// also carry the compiled full-text and count triggers.
	writes *stmtCache
	// heavy bounds the reads whose cost grows with the data (searches,
	// lists whose total is counted row by row) to half the read pool, so
	// that they leave connections to the point reads (sessions, documents)
	// behind them, and so that their memory (FTS5 posting lists, sorters,
	// each held by its connection and kept by the C allocator afterwards)
	// is not multiplied by every reader at once.
	heavy chan struct{}
	// txs carries write transactions to the committer (commit.go).
	txs chan *txRequest
	// fts is the running transaction's changes to the full-text index
	// (fts.go), the committer's alone.
	fts      ftsJournal
	closing  chan struct{}
	closeOne sync.Once
	stopped  chan struct{}
	// waiting counts the callers not yet taken by the committer, batches
	// the batches it committed.
	waiting, batches atomic.Int64
	// diskFull is set when a write failed because the disk (or the
	// database's page limit) is full, and cleared by the next write that
	// commits a change (full.go).
	diskFull atomic.Bool
	// claims are the running idempotency claims (idempotency.go).
	claims claims
	// index is the index of documents in memory (docindex.go).
	index docIndex
	// batchSizes and commitSeconds measure the group commit (stats.go).
	batchSizes, commitSeconds *quire.Histogram
	// migrated are the migrations Migrate applied, in order.
	migrated []string
}

// Open opens (creating if needed) the SQLite file at path and migrates it.
func Open(ctx context.Context, path string) (*DB, error) {
	db, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.BackfillLinks(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// temp_store=MEMORY keeps the writer's statement journals in memory.
	// Each document write opens one (its count triggers write a second
	// table), and it records every page the statement changes that an
	// earlier statement of the transaction changed first; past 64 KiB in
	// a batch of the group commit SQLite moves it to a temporary file and
	// writes it there for the rest of the transaction (9% of concurrent
	// creates). It is set after the migrations, which may sort a whole
	// table to build an index; the transactions after them sort nothing
	// large. The readers keep their sorters in files. The write pool's one
	// connection is kept open for the life of the DB (were it ever
	// replaced, only this saving would be lost).
	if _, err := db.write.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return db, nil
}

func open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("open sqlite: empty path")
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(ON)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	// synchronous=FULL: a commit is on disk before it is acknowledged, so
	// no answered write is lost even when the machine (not only the
	// process) stops. In WAL mode that is one fsync of the log per commit.
	wq := url.Values{}
	for k, v := range q {
		wq[k] = v
	}
	// BEGIN IMMEDIATE takes the write lock at the start of a transaction,
	// so a read-then-write transaction never fails halfway with SQLITE_BUSY
	// when another process (the CLI) writes too.
	wq.Set("_txlock", "immediate")
	// The writer checkpoints the WAL into the database when it passes
	// 4,000 pages (16 MB) rather than SQLite's 1,000: a checkpoint copies
	// each page once however often it changed since the last one, and the
	// pages a save touches are much the same from one save to the next
	// (the ends of the updated_at indexes, the full-text index's structure
	// and newest segments), so fewer checkpoints copy fewer pages, and
	// the committer stops less often for the checkpoint's fsync. 4,000
	// frames still fit one hash table of the WAL index (4,096), so a
	// reader finds a page in the WAL as quickly as before.
	wq.Add("_pragma", "wal_autocheckpoint(4000)")
	write, err := sql.Open("sqlite", "file:"+path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	q.Add("_pragma", "query_only(ON)")
	read, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	read.SetMaxOpenConns(readers())
	read.SetMaxIdleConns(readers())
	read.SetConnMaxIdleTime(0)
	read.SetConnMaxLifetime(0)
	db := withStore(&DB{shared: &shared{path: path, write: write, read: read, reads: newStmtCache(read), writes: newStmtCache(write),
		heavy: make(chan struct{}, readers()/2), batchSizes: newBatchHistogram(), commitSeconds: newCommitHistogram(),
		index: docIndex{DocIndex: sqlstore.NewDocIndex(indexPoll, 0)}}})
	db.startCommitter()
	return db, nil
}

// readers is the size of the read pool: one connection per core, and at
// least 4, so that a slow query does not hold up the quick ones behind it.
// More connections than cores do not read faster, and each running query
// holds its own memory (page cache, sorter, full-text buffers): with 8
// readers on a 2-core machine, 16 concurrent searches for common words
// took quire's RSS from 35 to 190 MiB.
func readers() int { return max(4, runtime.GOMAXPROCS(0)) }

// Close closes both pools.
func (db *DB) Close() error {
	db.stopCommitter()
	db.index.Wait()
	db.index.tok.close()
	db.reads.close()
	db.writes.close()
	return errors.Join(db.read.Close(), db.write.Close())
}

// Ping reports whether the database answers, and UNAVAILABLE while the
// last write failed on a full disk and none has succeeded since.
func (db *DB) Ping(ctx context.Context) error {
	if db.diskFull.Load() {
		return errDiskFull
	}
	var one int
	if err := db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping sqlite: %w", err)
	}
	return nil
}

// Migrate applies every embedded migration not yet applied, each in its own
// transaction, and records it in schema_migrations. Forward only. It
// refuses a database that has a migration this binary does not know: its
// schema is newer, and an older binary writing on it could lose or break
// what the newer one keeps.
func (db *DB) Migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	migrations, err := sqlstore.Migrations("sqlite")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	known := make(map[string]bool, len(migrations))
	for _, m := range migrations {
		known[m.Name] = true
	}
	rows, err := db.write.QueryContext(ctx, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var unknown []string
	before := make(map[string]bool, len(migrations)) // applied before this open
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("migrate: %w", err)
		}
		before[name] = true
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("the database's schema is newer than this quire: it has migration %s, which this binary does not know (%d unknown); run the quire version that migrated it, or a newer one", unknown[len(unknown)-1], len(unknown))
	}
	for _, m := range migrations {
		base := m.Name
		if before[base] {
			// Applied before this open began: no transaction to check it
			// again (one per migration made every open of a current
			// database cost dozens of write transactions). One that
			// another process applies meanwhile is seen in the
			// transaction below.
			continue
		}
		applied := false
		err = db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, base).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, base, toMicros(time.Now()))
			applied = err == nil
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if applied {
			db.migrated = append(db.migrated, base)
		}
	}
	return nil
}

// Migrated returns the migrations this DB's Migrate applied (at Open), in
// order: none when the database was up to date.
func (db *DB) Migrated() []string { return slices.Clone(db.migrated) }

// Times are stored as INTEGER microseconds since the Unix epoch (UTC), so
// that they compare exactly at the contract's precision. 0 means "none".
func toMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// nullString maps "" to NULL for optional foreign keys.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// isUnique reports whether err is a UNIQUE constraint violation.
func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}
