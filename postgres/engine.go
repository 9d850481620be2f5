package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

// engine is the DB as the shared store layer (package sqlstore) sees it.
type engine struct{ db *DB }

var dialect = &sqlstore.Dialect{
	Name: "postgres",
	Time: func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return micro(t)
	},
	NoTime:    "NULL",
	ForUpdate: " FOR UPDATE",
	Greatest:  "greatest",
	Least:     "least",
	Lock: func(ctx context.Context, q sqlstore.Q, class int32, key string) error {
		_, err := q.Exec(ctx, xactLockSQL, class, key)
		return err
	},
	IsUnique: func(err error) bool {
		code, _ := pgCode(err)
		return code == codeUnique
	},
	IsForeignKey: func(err error) bool {
		code, _ := pgCode(err)
		return code == codeForeignKey
	},
}

func (e engine) Dialect() *sqlstore.Dialect { return dialect }

func (e engine) Events() []*quire.Event { return e.db.events }

// Purging has nothing to do: the search vector goes with the row.
func (engine) Purging(context.Context, sqlstore.Q, string, []any) error { return nil }

func (e engine) Write(ctx context.Context, fn func(ctx context.Context, q sqlstore.Q) error) error {
	return e.db.tx(ctx, func(tx pgx.Tx) error { return fn(ctx, qOf(tx)) })
}

func (e engine) ExecOne(ctx context.Context, what, query string, args ...any) (int64, error) {
	tag, err := e.db.exec(ctx, what, rebind(query), args...)
	return tag.RowsAffected(), err
}

func (e engine) Read() sqlstore.Q { return qOf(e.db.pool) }

func (e engine) Snapshot(ctx context.Context, fn func(q sqlstore.Q) error) error {
	return e.db.snapshot(ctx, func(tx pgx.Tx) error { return fn(qOf(tx)) })
}

func (e engine) Fail(ctx context.Context, op string, err error) error { return e.db.fail(ctx, op, err) }

// qOf is the pool or a transaction as a sqlstore.Q: its queries' ?
// placeholders become $n.
func qOf(q querier) sqlstore.Q { return pgQ{q} }

type pgQ struct{ q querier }

func (p pgQ) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := p.q.Exec(ctx, rebind(query), args...)
	return tag.RowsAffected(), err
}

func (p pgQ) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := p.q.Query(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (p pgQ) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return pgRow{p.q.QueryRow(ctx, rebind(query), args...)}
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}

// rebound keeps the texts rebind made, by their ? text: the texts depend
// only on the shape of a query, never on a value, so they are few; past
// maxRebound they are made again each time.
var (
	rebound      sync.Map
	reboundCount atomic.Int64
)

const maxRebound = 4096

// rebind turns the ? placeholders of query into $1, $2, ..., leaving
// string literals, quoted names and comments alone. A query that already
// uses $n (this package's own) has no ? and is returned as it is.
func rebind(query string) string {
	if strings.IndexByte(query, '?') < 0 {
		return query
	}
	if s, ok := rebound.Load(query); ok {
		return s.(string)
	}
	s := rebindText(query)
	if reboundCount.Load() < maxRebound {
		if _, loaded := rebound.LoadOrStore(query, s); !loaded {
			reboundCount.Add(1)
		}
	}
	return s
}

func rebindText(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch c {
		case '\'', '"':
			j := strings.IndexByte(query[i+1:], c)
			if j < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+j+2])
			i += j + 1
		case '-':
			if i+1 < len(query) && query[i+1] == '-' {
				j := strings.IndexByte(query[i:], '\n')
				if j < 0 {
					b.WriteString(query[i:])
					return b.String()
				}
				b.WriteString(query[i : i+j])
				i += j - 1
				continue
			}
			b.WriteByte(c)
		case '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
