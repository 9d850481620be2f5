package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

// FoldersKeepAnswer keeps an idempotent answer in the transaction q, for
// the changes written once in sqlstore (folders, trash, attachments).
func (e engine) FoldersKeepAnswer(ctx context.Context, q sqlstore.Q, result any) error {
	return keepAnswer(ctx, q.(pgQ).q.(pgx.Tx), result)
}

// FoldersInsertEvents writes evs in the transaction q.
func (e engine) FoldersInsertEvents(ctx context.Context, q sqlstore.Q, evs []*quire.Event) error {
	return insertEvents(ctx, q.(pgQ).q.(pgx.Tx), evs)
}
