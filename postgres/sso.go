package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"quire"
)

// CreateUserWithIdentity stays here while createUser is the engine's: the
// rest of the SSO store is written once in package sqlstore (sso.go).
// TODO(lead): once createUser is in sqlstore, move this there beside
// LinkIdentity, calling s.createUser with SSOLinkIdentity (then unexported).
func (db *DB) CreateUserWithIdentity(ctx context.Context, u *quire.User, id *quire.Identity) error {
	return db.createUser(ctx, u, func(tx pgx.Tx, userID string) error {
		quire.NameCreated(db.events, userID)
		return db.SSOLinkIdentity(ctx, qOf(tx), id, userID)
	})
}
