package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"quire/docs"
)

// defaultTrashRetention is how long a deleted document stays in the trash:
// 30 days (product.md section 7).
const defaultTrashRetention = 720 * time.Hour

// purgeInterval is how often a node looks for documents whose time in the
// trash is over. Every node runs the purge; the store lets one at a time
// delete (on PostgreSQL under an advisory lock), so more nodes do not
// purge more often than one does.
const purgeInterval = time.Hour

// purgeTrash deletes for good, at start and then every purgeInterval until
// ctx ends, the documents that have been in the trash longer than
// retention. A retention of 0 keeps them forever: nothing runs.
func purgeTrash(ctx context.Context, ds *docs.Service, retention time.Duration, logger *slog.Logger) {
	if retention <= 0 {
		return
	}
	tick := time.NewTicker(purgeInterval)
	defer tick.Stop()
	for {
		n, err := ds.PurgeExpired(ctx, retention)
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			logger.Error("trash purge failed", "err", err, "purged", n)
		case n > 0:
			logger.Info("trash purged", "documents", n, "retention", retention.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
