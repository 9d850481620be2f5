package sqlite

import (
	"context"
	"fmt"
	"os"

	"quire"
)

var _ quire.StatsStore = (*DB)(nil)

// The group commit's buckets: transactions per commit up to maxBatch, and
// the time of a commit from a lone fsync to a batch stuck on a slow disk.
func newBatchHistogram() *quire.Histogram { return quire.NewHistogram(1, 2, 4, 8, 16, 32, maxBatch) }
func newCommitHistogram() *quire.Histogram {
	return quire.NewHistogram(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5)
}

// Stats reads the counts through indexes or small tables: users (one row
// per person), the live documents from document_counts (a sum over the
// combinations of visibility, department, project and owner, not a scan
// of documents), and the pending mails from the partial index outbox_due.
func (db *DB) Stats(ctx context.Context) (quire.StoreStats, error) {
	var (
		st                    quire.StoreStats
		oldest, oldestWebhook int64
	)
	// The webhook backlog is counted on the partial index of pending
	// deliveries, and the oldest found by its smallest seq (deliveries are
	// numbered in the order they are made), one row read by its key.
	err := db.read.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM users),
		(SELECT COALESCE(sum(n), 0) FROM document_counts),
		(SELECT count(*) FROM outbox WHERE sent_at = 0 AND given_up_at = 0),
		(SELECT COALESCE(min(created_at), 0) FROM outbox WHERE sent_at = 0 AND given_up_at = 0),
		(SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'),
		COALESCE((SELECT created_at FROM webhook_deliveries WHERE seq = (SELECT min(seq) FROM webhook_deliveries WHERE state = 'pending')), 0)`).
		Scan(&st.Users, &st.Documents, &st.OutboxPending, &oldest, &st.WebhooksPending, &oldestWebhook)
	if err != nil {
		return quire.StoreStats{}, fmt.Errorf("read stats: %w", err)
	}
	st.OutboxOldest = fromMicros(oldest)
	st.WebhooksOldest = fromMicros(oldestWebhook)
	for _, name := range []string{db.path, db.path + "-wal"} {
		if fi, err := os.Stat(name); err == nil {
			st.DatabaseBytes += fi.Size()
		}
	}
	st.CommitBatch, st.CommitSeconds = db.batchSizes.Snapshot(), db.commitSeconds.Snapshot()
	st.Index = &quire.IndexStats{ListsByIndex: db.index.byIndex.Load(), ListsByStore: db.index.byStore.Load()}
	if x := db.index.x.Load(); x != nil {
		xs := x.Stats()
		st.Index.Ready = true
		st.Index.Rows, st.Index.DeadStates = int64(xs.Rows), int64(xs.Dead)
		st.Index.Terms, st.Index.Postings = int64(xs.Terms), int64(xs.Postings)
	}
	return st, nil
}
