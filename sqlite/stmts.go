package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps a pool's prepared statements by their SQL text.
// Preparing a statement costs as much as running a point query (the
// profile of GET /api/auth/me showed 30% of each request in
// sqlite3_prepare; a document write also compiles its full-text and count
// triggers), and the text of every query depends only on the shape of its
// filter, never on a value, so the texts are few. database/sql prepares
// each on a connection the first time it runs there.
//
// Preparing needs a connection of the pool. Inside a transaction, which
// holds one, a statement not yet prepared is run as text and noted, and is
// prepared before the next transaction begins: preparing from inside would
// wait for a second connection, which the single writer never has and the
// readers may all be holding.
type stmtCache struct {
	pool    *sql.DB
	mu      sync.RWMutex
	m       map[string]*sql.Stmt
	pending map[string]bool
}

// maxCachedStmts bounds the cache; queries past it run unprepared.
const maxCachedStmts = 512

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

// get returns the prepared statement of query, preparing it on the pool
// (so never call it while holding a connection of the pool), or nil when
// the cache is full or preparing failed (the caller then runs the text,
// which reports the error).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	if s := c.lookup(query); s != nil {
		return s
	}
	return c.prepare(ctx, query)
}

// prepare prepares query on the pool and keeps it. The lock is not held
// while preparing: preparing waits for a connection of the pool, and the
// goroutine holding that connection may need the lock to look a statement
// up (a transaction on the single writer does), which would deadlock.
func (c *stmtCache) prepare(ctx context.Context, query string) *sql.Stmt {
	c.mu.RLock()
	full := len(c.m) >= maxCachedStmts
	c.mu.RUnlock()
	if full {
		return nil
	}
	s, err := c.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept := c.m[query]; kept != nil {
		s.Close() // another goroutine prepared it meanwhile
		return kept
	}
	if len(c.m) >= maxCachedStmts {
		s.Close()
		return nil
	}
	c.m[query] = s
	return s
}

// note records a query met inside a transaction, to be prepared later.
func (c *stmtCache) note(query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(c.pending) < maxCachedStmts {
		c.pending[query] = true
	}
}

// preparePending prepares the queries noted inside transactions. Call it
// before taking a connection of the pool.
func (c *stmtCache) preparePending(ctx context.Context) {
	c.mu.Lock()
	queries := make([]string, 0, len(c.pending))
	for q := range c.pending {
		queries = append(queries, q)
		delete(c.pending, q)
	}
	c.mu.Unlock()
	for _, q := range queries {
		c.prepare(ctx, q)
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		s.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// cachedQuerier runs statements through the cache, on the pool or, with tx
// set, inside that transaction (of the same pool).
type cachedQuerier struct {
	c  *stmtCache
	tx *sql.Tx
}

func (q cachedQuerier) stmt(ctx context.Context, query string) *sql.Stmt {
	if q.tx == nil {
		return q.c.get(ctx, query)
	}
	s := q.c.lookup(query)
	if s == nil {
		q.c.note(query)
		return nil
	}
	// Closed with the transaction; reuses the statement already prepared
	// on the transaction's connection.
	return q.tx.StmtContext(ctx, s)
}

func (q cachedQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	if q.tx != nil {
		return q.tx.QueryContext(ctx, query, args...)
	}
	return q.c.pool.QueryContext(ctx, query, args...)
}

// QueryRowContext outside a transaction runs without ctx's cancellation.
// Its queries are point reads (a session by its token hash, a document by
// its id) that take microseconds, and a cancellable context costs more
// than that: database/sql starts a goroutine per query to watch it and the
// driver arms its interrupt (5% of GET /api/auth/me in the profile).
func (q cachedQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if q.tx == nil {
		ctx = context.WithoutCancel(ctx)
	}
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	if q.tx != nil {
		return q.tx.QueryRowContext(ctx, query, args...)
	}
	return q.c.pool.QueryRowContext(ctx, query, args...)
}

func (q cachedQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := q.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	if q.tx != nil {
		return q.tx.ExecContext(ctx, query, args...)
	}
	return q.c.pool.ExecContext(ctx, query, args...)
}
