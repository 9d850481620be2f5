// Package sqlstore holds each of quire's store operations once: its SQL,
// written once with ? placeholders, its rules and its messages. The two
// engines, sqlite and postgres, each give it an Engine: how to run a write
// transaction, where reads go, how an error is shaped for the caller, and a
// Dialect, the few clauses in which their SQL differs (how a time is
// stored, the "none" of a time, row locks, advisory locks). What truly
// differs stays in the engines: SQLite's group committer and statement
// cache, full-text search and the index of documents, PostgreSQL's
// advisory-lock protocol, LISTEN/NOTIFY and backup.
//
// An engine embeds a *Store, whose methods are then its own; a method the
// engine defines itself hides the Store's.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"quire"
)

// Q runs statements: a pool, or a transaction. Queries use ? placeholders,
// which the PostgreSQL engine rebinds to $n.
type Q interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Rows are the rows of a Query; close them when done.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the one row of a QueryRow. Its Scan returns ErrNoRows when the
// query matched none, on both engines.
type Row interface {
	Scan(dest ...any) error
}

// ErrNoRows is what Row.Scan returns for no row.
var ErrNoRows = sql.ErrNoRows

// Engine is what a store operation needs of the database under it.
type Engine interface {
	// Write runs fn in a write transaction, followed, when fn succeeds, by
	// the events of a recording store (quire.Store's Recording), and
	// commits both or neither. fn must not call Write itself.
	Write(ctx context.Context, fn func(ctx context.Context, q Q) error) error
	// ExecOne runs one write statement outside a transaction (inside one
	// when the store records events) and returns the rows it changed. With
	// what set, a statement that changed no row is ENOTFOUND naming what,
	// decided inside the transaction, so that no event is written.
	ExecOne(ctx context.Context, what, query string, args ...any) (int64, error)
	// Read is the pool for reads outside a transaction.
	Read() Q
	// Snapshot runs fn in a read-only transaction: every query of fn sees
	// the same state (a page and its total).
	Snapshot(ctx context.Context, fn func(q Q) error) error
	// Fail shapes the error of op for the caller: a *quire.Error as it is,
	// an unreachable database as quire.ErrUnavailable, anything else
	// wrapped with op. nil stays nil.
	Fail(ctx context.Context, op string, err error) error
	// Dialect is the engine's SQL where it differs.
	Dialect() *Dialect
	// Events are those a recording store writes with its write: an
	// operation names the record it creates in them (quire.NameCreated),
	// or blanks them when it finds it changes nothing (quire.Unchanged).
	// An operation that records events of its own writes them in its
	// transaction with InsertEvents.
	Events() []*quire.Event
	// Keep is the idempotency of the changes of this store
	// (quire.IdempotencyStore.Keeping), nil for none.
	Keep() *quire.Keep
	// KeepAnswer writes in q, the transaction of Write, a as the kept
	// answer of k's claim and marks k kept; a claim no longer held refuses
	// the change with IDEMPOTENCY_IN_PROGRESS. Where the claims are held
	// differs: in SQLite's process memory, in PostgreSQL's rows.
	KeepAnswer(ctx context.Context, q Q, k *quire.Keep, a quire.IdempotentAnswer) error
	// Purging is told, in the transaction q, before a purge deletes the
	// documents (alias d) that match cond with args: SQLite's full-text
	// journal reads their text while it is still there.
	Purging(ctx context.Context, q Q, cond string, args []any) error
}

// Store holds the store operations written once. Engines embed it.
type Store struct {
	e Engine
	d *Dialect
	// ContentChanged, when set (package stores sets it), is called in the
	// transaction of every write that changes a document's content or
	// content type, after the write, with the new content: the comments'
	// anchors follow the text (commentssql.Reanchor), and the live text
	// takes the write as one change (livesql.ContentWritten), which needs
	// the content it replaces (was), who wrote it (byUserID) and when (at:
	// the write's updated_at, from the clock of the service that wrote). A
	// document just created has nothing that follows it.
	ContentChanged func(ctx context.Context, q Q, id, contentType, was, content, byUserID string, at time.Time) error
}

// contentChanged calls ContentChanged when d's content or content type
// differs from was's.
func (s *Store) contentChanged(ctx context.Context, q Q, d, was *quire.Document, byUserID string) error {
	if s.ContentChanged == nil || (d.Content == was.Content && d.ContentType == was.ContentType) {
		return nil
	}
	return s.ContentChanged(ctx, q, d.ID, d.ContentType, was.Content, d.Content, byUserID, d.UpdatedAt)
}

// New returns the operations of e.
func New(e Engine) *Store { return &Store{e: e, d: e.Dialect()} }

// T is a scan destination for a time column of either engine: INTEGER
// microseconds (0 for none) or a timestamp (NULL for none), read in UTC.
func T(t *time.Time) sql.Scanner { return timeDest{t} }

type timeDest struct{ t *time.Time }

func (d timeDest) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*d.t = time.Time{}
	case int64:
		if v == 0 {
			*d.t = time.Time{}
		} else {
			*d.t = time.UnixMicro(v).UTC()
		}
	case time.Time:
		*d.t = v.UTC()
	default:
		return fmt.Errorf("scan time: unexpected %T", v)
	}
	return nil
}

// Micro is t at the stored precision (microseconds), in UTC.
func Micro(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Microsecond).UTC()
}

// WallClock is the time of writes whose interface passes no clock, at the
// stored precision.
func WallClock() time.Time { return Micro(time.Now()) }

// NewID returns a new UUID v7 as a string.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// NullString maps "" to NULL, for optional references.
func NullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// NotFound is the store's ENOTFOUND naming what.
func NotFound(what string) error { return quire.Errorf(quire.ENOTFOUND, "%s not found", what) }

// MsgNUL is the message of a value that holds U+0000, which a PostgreSQL
// text column cannot store; both engines refuse it alike.
const MsgNUL = "must not contain the NUL character"

// HasNUL reports whether any of ss holds U+0000: a lookup by such a value
// finds nothing.
func HasNUL(ss ...string) bool {
	for _, s := range ss {
		if strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
	return false
}

// NoNUL refuses, as EVALIDATION naming each field, values that hold U+0000.
func NoNUL(fields map[string]string) error {
	var bad map[string]string
	for field, v := range fields {
		if HasNUL(v) {
			if bad == nil {
				bad = map[string]string{}
			}
			bad[field] = MsgNUL
		}
	}
	if bad != nil {
		return quire.Invalid(bad)
	}
	return nil
}

// One runs a statement that should change one row and returns ENOTFOUND
// naming what when it changed none.
func One(ctx context.Context, q Q, what, query string, args ...any) error {
	n, err := q.Exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return NotFound(what)
	}
	return nil
}

// Each runs query on q and calls fn with each row's Scan.
func Each(ctx context.Context, q Q, fn func(scan func(dest ...any) error) error, query string, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Collect runs query on q and returns each row read by scan.
func Collect[T any](ctx context.Context, q Q, scan func(scan func(dest ...any) error) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := Each(ctx, q, func(s func(dest ...any) error) error {
		v, err := scan(s)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	}, query, args...)
	return out, err
}

// Found returns ENOTFOUND naming what for ErrNoRows, and err otherwise.
func Found(err error, what string) error {
	if errors.Is(err, ErrNoRows) {
		return NotFound(what)
	}
	return err
}

// Params collects the arguments of a query built in pieces: Add returns
// the placeholder of its value. Only the shape of the SQL is built; every
// value is bound.
type Params []any

// Add appends v and returns its placeholder.
func (p *Params) Add(v any) string {
	*p = append(*p, v)
	return "?"
}

// In appends vs and returns the list of their placeholders, "(?, ?, ?)";
// vs must not be empty.
func (p *Params) In(vs ...string) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Add(v))
	}
	b.WriteByte(')')
	return b.String()
}

// Classes of the transaction-scoped locks (Dialect.Lock): each serialises
// one check-then-write among the nodes of a PostgreSQL cluster.
const (
	LockLoginEmail        = 1  // per normalised email: the sign-in window and lock
	LockResetAddr         = 2  // per client address: forgot-password requests
	LockResetEmail        = 3  // per email: forgot-password requests
	LockFolderTree        = 4  // one key: moves in the folder tree
	LockRedeemAddr        = 5  // per client address: reset and setup requests
	LockTrashPurge        = 6  // one key: the purge of the trash, one node at a time
	LockAdmins            = 7  // one key: changes that may take the last active administrator away
	LockAuditPrune        = 8  // one key: the prune of the audit log, one node at a time
	LockPasskeyCeremonies = 12 // per client address: passkey ceremonies begun
	LockDocumentChanges   = 34 // one key: the commits that write document_changes (migration 0033's trigger)
	LockWebhooks          = 35 // one key: the creates of webhooks, counted against quire.MaxWebhooks
)

// The helpers below serve the stores written once in the packages of their
// capabilities (webhook, mail, mfa, ...), which hold an Engine, not a Store.

// List is Collect on e's read pool: an empty list when no row matches, and
// errors shaped as op's.
func List[T any](ctx context.Context, e Engine, op string, scan func(scan func(dest ...any) error) (T, error), query string, args ...any) ([]T, error) {
	out, err := Collect(ctx, e.Read(), scan, query, args...)
	if err != nil {
		return nil, e.Fail(ctx, op, err)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

func list[T any](ctx context.Context, s *Store, op string, scan func(scan func(dest ...any) error) (T, error), query string, args ...any) ([]T, error) {
	return List(ctx, s.e, op, scan, query, args...)
}

// UpdateOne runs one write of the record what (ENOTFOUND when it changes
// no row); for a recording store in a transaction, so that its events
// (auth.logout, ...) are written with the change and not without one. key
// (the ids it matches, concatenated) holding U+0000 matches nothing.
func UpdateOne(ctx context.Context, e Engine, what, key, query string, args ...any) error {
	if HasNUL(key) {
		return NotFound(what)
	}
	_, err := e.ExecOne(ctx, what, query, args...)
	return e.Fail(ctx, "update "+what, err)
}

// ReplaceNUL replaces U+0000, which a PostgreSQL text column cannot hold,
// with U+FFFD in text that quire composes itself (mails, delivery errors)
// from what a client or a remote server sent, and in the keys of the limit
// tables: a sign-in with such an email must still be counted, not refused.
func ReplaceNUL(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// UserColumns and UserJoins read a user (alias u) with its role and
// department name, for ScanUser; UserSelect is the plain query.
const (
	UserColumns = userColumns
	UserJoins   = userJoins
	UserSelect  = userSelect
)

// ScanUser reads a user of UserColumns, followed by extra.
func ScanUser(scan func(dest ...any) error, extra ...any) (*quire.User, error) {
	return scanUser(scan, extra...)
}

// CreateUserThen is CreateUser, running also (when not nil) with the new
// id in the same transaction after the insert (an SSO sign-up links its
// identity).
func (s *Store) CreateUserThen(ctx context.Context, u *quire.User, also func(ctx context.Context, q Q, id string) error) error {
	return s.createUser(ctx, u, also)
}

// GetUser reads the one user matched by where (a constant clause such as
// "u.id = ?") and arg. ENOTFOUND when there is none.
func GetUser(ctx context.Context, q Q, where string, arg string) (*quire.User, error) {
	return getUser(ctx, q, where, arg)
}

// Base is what the store of a capability holds: the engine it runs on (E)
// and the engine's Dialect (D). The store embeds it.
type Base struct {
	E Engine
	D *Dialect
}

// NewBase returns the Base of e.
func NewBase(e Engine) Base { return Base{E: e, D: e.Dialect()} }
