package sqlite

import (
	"context"

	"quire"
	"quire/sqlstore"
)

// FoldersKeepAnswer keeps an idempotent answer in the committer's
// transaction q, for the changes written once in sqlstore (folders, trash,
// attachments).
func (e engine) FoldersKeepAnswer(ctx context.Context, q sqlstore.Q, result any) error {
	return e.db.keepAnswer(ctx, q.(liteQ).q.(cachedQuerier), result)
}

// FoldersInsertEvents writes evs in the committer's transaction q.
func (e engine) FoldersInsertEvents(ctx context.Context, q sqlstore.Q, evs []*quire.Event) error {
	return insertEvents(ctx, q.(liteQ).q.(cachedQuerier), evs)
}
