package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"quire/audit"
	"quire/documents"
)

// defaultTrashRetention is how long a deleted document stays in the trash:
// 30 days (product.md section 7).
const defaultTrashRetention = 720 * time.Hour

// purgeInterval is how often a node looks for what its retention has
// made due: a tenth of the retention, so that nothing outlives it by more
// than a tenth, but no more often than once a second and no less often
// than once an hour. Every node runs the purge; the store lets one at a
// time delete (on PostgreSQL under an advisory lock), so more nodes do
// not purge more often than one does.
func purgeInterval(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Second), time.Hour)
}

// purgeTrash deletes for good, at start and then every purgeInterval(retention)
// until ctx ends, the documents that have been in the trash longer than
// retention. A retention of 0 keeps them forever: nothing runs.
func purgeTrash(ctx context.Context, ds *documents.Service, retention time.Duration, logger *slog.Logger) {
	repeatPurge(ctx, retention, ds.PurgeExpired,
		func(n int, err error) { logger.Error("trash purge failed", "err", err, "purged", n) },
		func(n int) { logger.Info("trash purged", "documents", n, "retention", retention.String()) })
}

// repeatPurge calls run with retention at start and then every
// purgeInterval(retention) until ctx ends, reporting a failure (not the end
// of ctx) through failed and a run that deleted something through purged.
// A retention of 0 keeps everything: nothing runs.
func repeatPurge(ctx context.Context, retention time.Duration, run func(context.Context, time.Duration) (int, error),
	failed func(n int, err error), purged func(n int)) {
	if retention <= 0 {
		return
	}
	tick := time.NewTicker(purgeInterval(retention))
	defer tick.Stop()
	for {
		n, err := run(ctx, retention)
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			failed(n, err)
		case n > 0:
			purged(n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// defaultAuditRetention is how long an event stays in the audit log: a year
// (product.md section 8).
const defaultAuditRetention = 8760 * time.Hour

// pruneAudit deletes, at start and then every purgeInterval(retention) until ctx ends,
// the events of the audit log older than retention. Like the purge of the
// trash, every node runs it and the store lets one at a time delete (on
// PostgreSQL under its own advisory lock). A retention of 0 keeps every
// event: nothing runs.
func pruneAudit(ctx context.Context, log *audit.Service, retention time.Duration, logger *slog.Logger) {
	repeatPurge(ctx, retention, log.Prune,
		func(n int, err error) { logger.Error("audit prune failed", "err", err, "pruned", n) },
		func(n int) { logger.Info("audit log pruned", "events", n, "retention", retention.String()) })
}
