package postgres

import (
	"context"
	"time"

	"quire"
)

var _ quire.StatsStore = (*DB)(nil)

// Stats reads the counts through indexes or small tables, as the SQLite
// store does (users, the sum of document_counts, the pending mails of the
// partial index outbox_due), and the pool's figures, which pgxpool keeps.
func (db *DB) Stats(ctx context.Context) (quire.StoreStats, error) {
	var (
		st                    quire.StoreStats
		oldest, oldestWebhook *time.Time
	)
	// The webhook backlog is counted on the partial index of pending
	// deliveries, and the oldest found by its smallest seq (deliveries are
	// numbered in the order they are made), one row read by its key.
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM users),
		(SELECT COALESCE(sum(n), 0)::bigint FROM document_counts),
		(SELECT count(*) FROM outbox WHERE sent_at IS NULL AND given_up_at IS NULL),
		(SELECT min(created_at) FROM outbox WHERE sent_at IS NULL AND given_up_at IS NULL),
		(SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'),
		(SELECT created_at FROM webhook_deliveries WHERE seq = (SELECT min(seq) FROM webhook_deliveries WHERE state = 'pending')),
		pg_database_size(current_database())`).
		Scan(&st.Users, &st.Documents, &st.OutboxPending, &oldest, &st.WebhooksPending, &oldestWebhook, &st.DatabaseBytes)
	if err != nil {
		return quire.StoreStats{}, db.fail(ctx, "read stats", err)
	}
	if oldest != nil {
		st.OutboxOldest = oldest.UTC()
	}
	if oldestWebhook != nil {
		st.WebhooksOldest = oldestWebhook.UTC()
	}
	s := db.pool.Stat()
	st.Pool = &quire.PoolStats{
		Acquires: s.AcquireCount(), AcquireWait: s.AcquireDuration(),
		EmptyAcquires: s.EmptyAcquireCount(), EmptyAcquireWait: s.EmptyAcquireWaitTime(),
		InUse: s.AcquiredConns(), Idle: s.IdleConns(), Max: s.MaxConns(),
	}
	return st, nil
}
