package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"quire"
	"quire/sqlstore"
)

// The login guard is sqlstore's (sqlstore/limits.go). What follows is
// tokens.go's until it moves too.

const msgTooManyAttempts = "Too many login attempts, please try again later."

const pruneBatch = 100

func retryAfter(us int64) time.Duration {
	secs := (us + 999_999) / 1_000_000
	return time.Duration(max(secs, 1)) * time.Second
}

func clearLoginFailures(ctx context.Context, tx *sql.Tx, email string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM login_locks WHERE email = ?`, email); err != nil {
		return fmt.Errorf("clear login failures: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE email = ?`, email); err != nil {
		return fmt.Errorf("clear login failures: %w", err)
	}
	return nil
}

// InsertEvents writes evs in q, a transaction of Write: sqlstore's
// LoginFailed (the login guard, sqlstore/limits.go) records the lock it
// sets with it.
func (e engine) InsertEvents(ctx context.Context, q sqlstore.Q, evs []*quire.Event) error {
	return insertEvents(ctx, q.(liteQ).q, evs)
}
