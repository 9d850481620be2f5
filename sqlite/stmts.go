package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps the read pool's prepared statements by their SQL text.
// Preparing a statement costs as much as running a point query (the
// profile of GET /api/auth/me showed 30% of each request in
// sqlite3_prepare), and the text of every query depends only on the shape
// of its filter, never on a value, so the texts are few. database/sql
// prepares each on a connection the first time it runs there.
type stmtCache struct {
	pool *sql.DB
	mu   sync.RWMutex
	m    map[string]*sql.Stmt
}

// maxCachedStmts bounds the cache; queries past it run unprepared.
const maxCachedStmts = 512

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, m: map[string]*sql.Stmt{}}
}

// get returns the prepared statement of query, or nil when the cache is
// full or preparing failed (the caller then runs the text, which reports
// the error).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	c.mu.RLock()
	s := c.m[query]
	c.mu.RUnlock()
	if s != nil {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.m[query]; s != nil {
		return s
	}
	if len(c.m) >= maxCachedStmts {
		return nil
	}
	s, err := c.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.m[query] = s
	return s
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		s.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// cachedQuerier runs queries through the cache, on the pool or, with tx
// set, inside that read transaction.
type cachedQuerier struct {
	c  *stmtCache
	tx *sql.Tx
}

func (q cachedQuerier) stmt(ctx context.Context, query string) *sql.Stmt {
	s := q.c.get(ctx, query)
	if s != nil && q.tx != nil {
		// Closed with the transaction; reuses the statement already
		// prepared on the transaction's connection.
		s = q.tx.StmtContext(ctx, s)
	}
	return s
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

func (q cachedQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	if q.tx != nil {
		return q.tx.QueryRowContext(ctx, query, args...)
	}
	return q.c.pool.QueryRowContext(ctx, query, args...)
}
