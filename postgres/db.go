// Package postgres implements quire's stores on PostgreSQL (pgx), so that
// several quire processes on one database behave as one service: sessions,
// revocations, login limits, locks, the outbox and the conflict guard live
// in the database, and every check-then-write is made atomic by a row lock,
// an advisory lock or SKIP LOCKED, never by process memory.
//
// Open connects a pool, fails fast when the server cannot be reached, and
// applies the embedded migrations under an advisory lock, so that nodes
// starting together migrate once. Tables are named without a schema: a
// search_path in the URL (postgres://.../db?search_path=quire) puts them in
// a schema of their own.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"quire"
	"quire/sqlstore"
	"quire/stores"
)

var _ quire.Store = (*DB)(nil)

// Defaults of the connection settings, each overridable in the URL
// (connect_timeout in seconds, statement_timeout and
// idle_in_transaction_session_timeout as PostgreSQL settings,
// pool_max_conns).
const (
	defaultConnectTimeout   = 5 * time.Second
	defaultStatementTimeout = "5s"
	// A transaction left open by a stuck client would hold its row locks
	// (a document, a token) for every node: the server ends it instead.
	defaultIdleInTxTimeout = "30s"
	defaultMaxConns        = 10
)

// Keys of the advisory locks. Transaction-level locks use the two-key form
// pg_advisory_xact_lock(class, hashtext(value)), whose key space does not
// overlap the one-key form of migrateLock.
const (
	migrateLock = int64(0x7175697265_4d4947) // "quireMIG"

	// per normalised email: the sign-in window and lock
	// per client address: forgot-password requests
	// per email: forgot-password requests
	// one key: moves in the folder tree
	// per client address: reset and setup requests
	// one key: the purge of the trash, one node at a time
	// one key: changes that may take the last active administrator away
	// one key: the prune of the audit log, one node at a time
)

// DB is a quire store on one PostgreSQL database.
type DB struct {
	pool *pgxpool.Pool
	// events are written in every write transaction of this DB: Recording
	// (audit.go) returns a DB on the same pool with them set.
	events []*quire.Event
	// keep is the idempotency its write transactions keep (Keeping).
	keep *quire.Keep
	// searches bounds the searches this node runs at once (search.go).
	searches chan struct{}
	// index is the node's index of documents in memory (docindex.go),
	// shared by the DBs Recording and Keeping return.
	index *pgIndex
	// migrated are the migrations Migrate applied, in order.
	migrated []string
	// Set holds the operations written once for both engines: the shared
	// core and the capabilities' stores.
	stores.Set
}

// withStore returns db with its shared operations, which run on db.
func withStore(db *DB) *DB {
	db.Set = stores.New(engine{db})
	return db
}

// Open connects to the database at rawURL (postgres://...), checks that it
// answers and migrates it. An unreachable database fails within the connect
// timeout with an error that wraps quire.ErrUnavailable and the cause.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	cfg, err := parseConfig(rawURL)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db := withStore(&DB{pool: pool, searches: make(chan struct{}, searchSlots(cfg.MaxConns)), index: newPGIndex()})
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := db.Migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.BackfillLinks(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// parseConfig reads rawURL and fills in the defaults it does not set.
func parseConfig(rawURL string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// pgx's error already hides the password.
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = defaultConnectTimeout
	}
	for k, v := range map[string]string{
		"statement_timeout":                   defaultStatementTimeout,
		"idle_in_transaction_session_timeout": defaultIdleInTxTimeout,
		"application_name":                    "quire",
	} {
		if _, set := cc.RuntimeParams[k]; !set {
			cc.RuntimeParams[k] = v
		}
	}
	if !urlSets(rawURL, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	if testTracer != nil {
		cc.Tracer = testTracer
	}
	return cfg, nil
}

// testTracer, when the package's tests set it, traces the statements of
// every pool opened after.
var testTracer pgx.QueryTracer

// urlSets reports whether the query of a URL connection string names key.
func urlSets(rawURL, key string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Query().Has(key)
}

// Close closes every connection of the pool.
func (db *DB) Close() error {
	if db.index != nil {
		db.index.close()
	}
	db.pool.Close()
	return nil
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return db.fail(ctx, "ping postgres", db.pool.Ping(ctx))
}

// Migrate applies every embedded migration not yet applied, each in its own
// transaction, recorded in schema_migrations. Forward only. It holds a
// session advisory lock on a connection of its own throughout, so that of
// several nodes starting together one migrates and the others wait and
// then find nothing to do.
func (db *DB) Migrate(ctx context.Context) error {
	cfg := db.pool.Config().ConnConfig.Copy()
	// Waiting for another node's migration, or running a long one, is not
	// a stuck statement.
	cfg.RuntimeParams["statement_timeout"] = "0"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return db.fail(ctx, "migrate", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return db.fail(ctx, "migrate: lock", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrateLock)

	if _, err := conn.Exec(ctx, schemaMigrationsDDL); err != nil {
		return db.fail(ctx, "migrate", err)
	}
	migrations, err := sqlstore.Migrations("postgres")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names := make([]string, len(migrations))
	for i, m := range migrations {
		names[i] = m.Name
	}
	// The migrations the database has, read once: the lock above keeps
	// every other migrator out until this one is done.
	rows, err := conn.Query(ctx, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return db.fail(ctx, "migrate", err)
	}
	had, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return db.fail(ctx, "migrate", err)
	}
	// A migration this binary does not know means a newer quire migrated
	// the database: an older binary writing on it could lose or break what
	// the newer one keeps, so it is refused.
	var unknown []string
	for _, name := range had {
		if !slices.Contains(names, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("the database's schema is newer than this quire: it has migration %s, which this binary does not know (%d unknown); run the quire version that migrated it, or a newer one", unknown[len(unknown)-1], len(unknown))
	}
	for _, m := range migrations {
		if slices.Contains(had, m.Name) {
			continue
		}
		name, applied := m.Name, false
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// Without arguments pgx uses the simple protocol, which runs
			// the several statements of a file.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			if after := afterMigration[name]; after != nil {
				if err := after(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, name)
			applied = err == nil
			return err
		})
		if err != nil {
			return db.fail(ctx, "migrate "+name, err)
		}
		if applied {
			db.migrated = append(db.migrated, name)
		}
	}
	return nil
}

// Migrated returns the migrations this DB's Migrate applied (at Open), in
// order: none when the database was up to date (or another node migrated
// it first).
func (db *DB) Migrated() []string { return slices.Clone(db.migrated) }

const schemaMigrationsDDL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	name       text PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// querier is what the pool and a transaction both offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// tx runs fn in a READ COMMITTED transaction, followed, when fn succeeds,
// by the insert of db.events, committing when both succeed and rolling
// back otherwise. Atomic check-then-write steps take row or
// advisory locks inside fn.
func (db *DB) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if evs := db.events; len(evs) > 0 {
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return sqlstore.InsertEvents(ctx, qOf(tx), dialect, evs)
		})
	}
	return pgx.BeginFunc(ctx, db.pool, fn)
}

// snapshot runs fn in a read-only REPEATABLE READ transaction: every query
// of fn reads the same snapshot (a page and its total, a backup).
func (db *DB) snapshot(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// xactLockSQL takes the transaction advisory lock ($1 class, $2 value),
// held until the transaction ends: xactLock, or queued in a batch.
const xactLockSQL = `SELECT pg_advisory_xact_lock($1, hashtext($2))`

// fail shapes an error of op for the caller: a *quire.Error is returned as
// is; an unreachable or overloaded database wraps quire.ErrUnavailable (the
// API answers 503); a NUL character, which PostgreSQL text cannot hold, is a
// VALIDATION_ERROR, as a client can send one; anything else is wrapped with
// op and is internal.
func (db *DB) fail(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var qe *quire.Error
	if errors.As(err, &qe) {
		return qe
	}
	if ctx.Err() != nil {
		// The caller gave up (or its deadline passed): say so, whatever
		// pgx made of it.
		return fmt.Errorf("%s: %w: %w", op, ctx.Err(), err)
	}
	switch code, _ := pgCode(err); code {
	case "22021": // character_not_in_repertoire: 0x00
		return quire.Invalid(map[string]string{"text": sqlstore.MsgNUL})
	case codeUnique: // one a method did not name more precisely
		return &quire.Error{Code: quire.ECONFLICT, Message: "The record already exists"}
	}
	if unavailable(err) {
		return fmt.Errorf("%s: %w: %w", op, quire.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unavailable reports whether err means that the database cannot serve
// now, rather than that the request was wrong: no connection, a connection
// lost, a server shutting down or out of resources, a statement timeout, a
// deadlock broken by the server: all worth a retry a moment later.
func unavailable(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true // whatever the server said: it did not let us in
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutdown, crash, starting up
			strings.HasPrefix(pe.Code, "53"),       // insufficient resources: connections, memory, disk
			pe.Code == "57014",                     // statement timeout
			pe.Code == "40P01", pe.Code == "40001": // deadlock, serialization failure
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// pgCode returns the SQLSTATE and constraint of a PostgreSQL error, or "".
func pgCode(err error) (code, constraint string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.ConstraintName
	}
	return "", ""
}

const (
	codeUnique     = "23505"
	codeForeignKey = "23503"
	codeCheck      = "23514"
)

// micro is t at the stored precision, in UTC.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// nullString maps "" to NULL for optional references.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// hasNUL reports whether any of ss holds U+0000, which no text column can
// store: a lookup by such a value finds nothing.
func hasNUL(ss ...string) bool {
	for _, s := range ss {
		if strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
	return false
}

// notFound is the store's ENOTFOUND.
func notFound(what string) error { return quire.Errorf(quire.ENOTFOUND, "%s not found", what) }

// params collects the arguments of a query built in pieces and returns
// their placeholders. Only the shape of the SQL is built; every value is
// bound.
type params []any

func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}
