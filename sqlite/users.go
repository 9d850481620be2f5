package sqlite

import (
	"context"
	"database/sql"

	"quire"
	"quire/sqlstore"
)

// The users' operations are written once, in sqlstore/users.go and
// sqlstore/admin.go. What stays here is used by files of this package not
// yet moved there (apitokens.go, passkeys.go, sso.go, tokens.go,
// outbox.go); it goes when they are.

// createUser is the shared CreateUserThen with the transaction as sso.go
// takes it.
func (db *DB) createUser(ctx context.Context, u *quire.User, also func(ctx context.Context, tx *sql.Tx, id string) error) error {
	return db.CreateUserThen(ctx, u, func(ctx context.Context, q sqlstore.Q, id string) error {
		return also(ctx, q.(liteQ).q.(cachedQuerier).tx, id)
	})
}
