package sqlstore

import (
	"context"

	"quire"
)

// Stats reads the counts through indexes or small tables: users (one row
// per person), the live documents from document_counts (a sum over the
// combinations of visibility, department, project and owner, not a scan
// of documents), and the pending mails from the partial index outbox_due.
// The webhook backlog is counted on the partial index of pending
// deliveries, and the oldest found by its smallest seq (deliveries are
// numbered in the order they are made), one row read by its key. The
// engines add their own figures (the database's size, the commits, the
// pool).
func (s *Store) Stats(ctx context.Context) (quire.StoreStats, error) {
	var st quire.StoreStats
	pending := s.d.None("sent_at") + ` AND ` + s.d.None("given_up_at")
	err := s.e.Read().QueryRow(ctx, `SELECT
		(SELECT count(*) FROM users),
		(SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM document_counts),
		(SELECT count(*) FROM outbox WHERE `+pending+`),
		(SELECT min(created_at) FROM outbox WHERE `+pending+`),
		(SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'),
		(SELECT created_at FROM webhook_deliveries WHERE seq = (SELECT min(seq) FROM webhook_deliveries WHERE state = 'pending'))`).
		Scan(&st.Users, &st.Documents, &st.OutboxPending, T(&st.OutboxOldest), &st.WebhooksPending, T(&st.WebhooksOldest))
	return st, s.e.Fail(ctx, "read stats", err)
}
