package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
	"quire/sqlstore"
)

// The users' operations are written once, in sqlstore/users.go and
// sqlstore/admin.go. What stays here is used by files of this package not
// yet moved there (apitokens.go, passkeys.go, sso.go, tokens.go,
// outbox.go); it goes when they are.

// rowQuerier is what both *sql.DB and *sql.Tx offer, so that a user can be
// read from the read pool or inside a write transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const userColumns, userJoins, userSelect = sqlstore.UserColumns, sqlstore.UserJoins, sqlstore.UserSelect

var scanUser = sqlstore.ScanUser

// getUser reads the one user matched by where (a constant clause of this
// package, such as "u.id = ?") and arg. ENOTFOUND when there is none.
func getUser(ctx context.Context, q rowQuerier, where string, arg any) (*quire.User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, userSelect+" WHERE "+where, arg).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("user")
	}
	if err != nil {
		return nil, fmt.Errorf("read user: %w", err)
	}
	return u, nil
}

// wallClock is the time of writes whose interface passes no clock (creation and
// profile changes), at the stored precision.
func wallClock() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// createUser is the shared CreateUserThen with the transaction as sso.go
// takes it.
func (db *DB) createUser(ctx context.Context, u *quire.User, also func(ctx context.Context, tx *sql.Tx, id string) error) error {
	return db.CreateUserThen(ctx, u, func(ctx context.Context, q sqlstore.Q, id string) error {
		return also(ctx, q.(liteQ).q.(cachedQuerier).tx, id)
	})
}
