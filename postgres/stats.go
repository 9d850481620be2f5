package postgres

import (
	"context"

	"quire"
)

var _ quire.StatsStore = (*DB)(nil)

// Stats adds to the counts (sqlstore) the database's size and the pool's
// figures, which pgxpool keeps.
func (db *DB) Stats(ctx context.Context) (quire.StoreStats, error) {
	st, err := db.Store.Stats(ctx)
	if err != nil {
		return quire.StoreStats{}, err
	}
	if err := db.pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&st.DatabaseBytes); err != nil {
		return quire.StoreStats{}, db.fail(ctx, "read stats", err)
	}
	s := db.pool.Stat()
	st.Pool = &quire.PoolStats{
		Acquires: s.AcquireCount(), AcquireWait: s.AcquireDuration(),
		EmptyAcquires: s.EmptyAcquireCount(), EmptyAcquireWait: s.EmptyAcquireWaitTime(),
		InUse: s.AcquiredConns(), Idle: s.IdleConns(), Max: s.MaxConns(),
	}
	if db.index != nil {
		st.Index = db.index.Stats()
	}
	return st, nil
}
