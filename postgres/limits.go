package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

// The login guard is sqlstore's (sqlstore/limits.go). What follows is
// tokens.go's until it moves too.

const msgTooManyAttempts = "Too many login attempts, please try again later."

const pruneBatch = 100

func guardKey(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

func retryAfter(d time.Duration) time.Duration {
	secs := (d + time.Second - 1) / time.Second
	return max(secs, 1) * time.Second
}

func clearLoginFailures(ctx context.Context, tx pgx.Tx, email string) error {
	email = guardKey(email)
	if err := xactLock(ctx, tx, lockLoginEmail, email); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM login_locks WHERE email = $1`, email); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM login_failures WHERE email = $1`, email)
	return err
}

// InsertEvents writes evs in q, a transaction of Write: sqlstore's
// LoginFailed (the login guard, sqlstore/limits.go) records the lock it
// sets with it.
func (e engine) InsertEvents(ctx context.Context, q sqlstore.Q, evs []*quire.Event) error {
	return insertEvents(ctx, q.(pgQ).q.(pgx.Tx), evs)
}
