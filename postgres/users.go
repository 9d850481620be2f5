package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

// The users' operations are written once, in sqlstore/users.go and
// sqlstore/admin.go. What stays here is used by files of this package not
// yet moved there (apitokens.go, passkeys.go, sso.go, tokens.go and the
// NUL checks); it goes when they are.

const userColumns, userJoins, userSelect = sqlstore.UserColumns, sqlstore.UserJoins, sqlstore.UserSelect

var scanUser = sqlstore.ScanUser

// getUser reads the one user matched by where (a constant clause such as
// "u.id = $1") and arg. ENOTFOUND when there is none.
func getUser(ctx context.Context, q querier, where string, arg string) (*quire.User, error) {
	if hasNUL(arg) {
		return nil, notFound("user")
	}
	u, err := scanUser(q.QueryRow(ctx, userSelect+" WHERE "+where, arg).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("user")
	}
	return u, err
}

// createUser is the shared CreateUserThen with the transaction as sso.go
// takes it.
func (db *DB) createUser(ctx context.Context, u *quire.User, also func(tx pgx.Tx, id string) error) error {
	return db.CreateUserThen(ctx, u, func(ctx context.Context, q sqlstore.Q, id string) error {
		return also(q.(pgQ).q.(pgx.Tx), id)
	})
}

const msgNUL = sqlstore.MsgNUL

// noNUL refuses, as EVALIDATION naming each field, values that hold U+0000:
// a PostgreSQL text column cannot store it.
func noNUL(fields map[string]string) error { return sqlstore.NoNUL(fields) }
