package sqlite

import (
	"context"

	"quire/sqlstore"
)

// FoldersKeepAnswer keeps an idempotent answer in the committer's
// transaction q, for the changes written once in sqlstore (folders, trash,
// attachments).
func (e engine) FoldersKeepAnswer(ctx context.Context, q sqlstore.Q, result any) error {
	return e.db.keepAnswer(ctx, q.(liteQ).q.(cachedQuerier), result)
}
