package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

// InsertEvents writes evs in q, a transaction of Write: sqlstore's
// LoginFailed (the login guard, sqlstore/limits.go) records the lock it
// sets with it.
func (e engine) InsertEvents(ctx context.Context, q sqlstore.Q, evs []*quire.Event) error {
	return insertEvents(ctx, q.(pgQ).q.(pgx.Tx), evs)
}
