package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

// The users' operations are written once, in sqlstore/users.go and
// sqlstore/admin.go. What stays here is used by files of this package not
// yet moved there (apitokens.go, passkeys.go, sso.go, tokens.go and the
// NUL checks); it goes when they are.

// createUser is the shared CreateUserThen with the transaction as sso.go
// takes it.
func (db *DB) createUser(ctx context.Context, u *quire.User, also func(tx pgx.Tx, id string) error) error {
	return db.CreateUserThen(ctx, u, func(ctx context.Context, q sqlstore.Q, id string) error {
		return also(q.(pgQ).q.(pgx.Tx), id)
	})
}

const msgNUL = sqlstore.MsgNUL
