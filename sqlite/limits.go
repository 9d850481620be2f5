package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.LoginGuard = (*DB)(nil)

// Messages of the two refusals (contract section 4).
const (
	msgTooManyAttempts = "Too many login attempts, please try again later."
	msgAccountLocked   = "Account is locked, please try again later."
)

// pruneBatch bounds the expired failure rows of other pairs that one
// BeginLogin deletes, so that the table stays small without any call
// paying for a large backlog at once.
const pruneBatch = 100

// BeginLogin runs in one write transaction, so that the check and the
// reservation are one step for every process on the file. A Limit or Window
// of 0 or less disables the window; a LockThreshold of 0 or less never
// locks (LoginFailed).
func (db *DB) BeginLogin(ctx context.Context, addr, email string, now time.Time, l quire.LoginLimits) (string, error) {
	var (
		id      string
		refusal error
	)
	nowUs := toMicros(now)
	cutoff := toMicros(now.Add(-l.Window))
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var lockedUntil int64
		err := tx.QueryRowContext(ctx, `SELECT locked_until FROM login_locks WHERE email = ?`, email).Scan(&lockedUntil)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read lock: %w", err)
		}
		// Expired rows: this pair's all, other pairs' a bounded batch. They
		// are deleted even when the attempt is refused (the refusal is
		// reported after the commit): pruning records nothing. A window of
		// zero or less would make every row "expired": prune nothing then.
		if l.Window > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE email = ? AND addr = ? AND at <= ?`,
				email, addr, cutoff); err != nil {
				return fmt.Errorf("prune failures: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE id IN
				(SELECT id FROM login_failures WHERE at <= ? LIMIT ?)`, cutoff, pruneBatch); err != nil {
				return fmt.Errorf("prune failures: %w", err)
			}
		}
		if lockedUntil > nowUs {
			refusal = &quire.Error{Code: quire.EACCOUNTLOCKED, Message: msgAccountLocked,
				RetryAfter: retryAfter(lockedUntil - nowUs)}
			return nil
		}
		if l.Limit > 0 && l.Window > 0 {
			var (
				n      int
				oldest sql.NullInt64
			)
			if err := tx.QueryRowContext(ctx, `SELECT count(*), min(at) FROM login_failures
				WHERE email = ? AND addr = ? AND at > ?`, email, addr, cutoff).Scan(&n, &oldest); err != nil {
				return fmt.Errorf("count failures: %w", err)
			}
			if n >= l.Limit {
				refusal = &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: msgTooManyAttempts,
					RetryAfter: retryAfter(oldest.Int64 + l.Window.Microseconds() - nowUs)}
				return nil
			}
		}
		id = newID()
		if _, err := tx.ExecContext(ctx, `INSERT INTO login_failures (id, addr, email, at) VALUES (?, ?, ?, ?)`,
			id, addr, email, nowUs); err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("begin login: %w", err)
	}
	if refusal != nil {
		return "", refusal
	}
	return id, nil
}

// retryAfter rounds a wait in microseconds up to whole seconds, at least
// one: Retry-After is in seconds and "0" would invite an immediate retry
// that is still refused.
func retryAfter(us int64) time.Duration {
	secs := (us + 999_999) / 1_000_000
	return time.Duration(max(secs, 1)) * time.Second
}

// LoginFailed counts the failure and, at the threshold, locks the email and
// starts the count again from 0, so that the next lock takes LockThreshold
// more failures after this one expires.
func (db *DB) LoginFailed(ctx context.Context, email string, now time.Time, l quire.LoginLimits, locked *quire.Event) error {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO login_locks (email, consecutive, locked_until) VALUES (?, 1, 0)
			ON CONFLICT (email) DO UPDATE SET consecutive = login_locks.consecutive + 1`, email); err != nil {
			return err
		}
		if l.LockThreshold <= 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, `UPDATE login_locks SET locked_until = ?, consecutive = 0
			WHERE email = ? AND consecutive >= ?`, toMicros(now.Add(l.LockDuration)), email, l.LockThreshold)
		if err != nil || locked == nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return insertEvents(ctx, tx, []*quire.Event{locked})
	})
	if err != nil {
		return fmt.Errorf("login failed: %w", err)
	}
	return nil
}

// LoginSucceeded leaves an active lock alone: a lock set by parallel
// failures while this attempt was in flight still holds.
func (db *DB) LoginSucceeded(ctx context.Context, attemptID, email string) error {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE id = ?`, attemptID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE login_locks SET consecutive = 0 WHERE email = ?`, email)
		return err
	})
	if err != nil {
		return fmt.Errorf("login succeeded: %w", err)
	}
	return nil
}

func (db *DB) ClearLoginFailures(ctx context.Context, email string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error { return clearLoginFailures(ctx, tx, email) })
}

// clearLoginFailures removes, inside tx, the lock, the consecutive count and
// every windowed failure of email from any address. Other stores'
// transactions that must clear them (RedeemToken) use it too.
func clearLoginFailures(ctx context.Context, tx *sql.Tx, email string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM login_locks WHERE email = ?`, email); err != nil {
		return fmt.Errorf("clear login failures: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE email = ?`, email); err != nil {
		return fmt.Errorf("clear login failures: %w", err)
	}
	return nil
}
