package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.LoginGuard = (*DB)(nil)

// Messages of the two refusals (contract section 4).
const (
	msgTooManyAttempts = "Too many login attempts, please try again later."
	msgAccountLocked   = "Account is locked, please try again later."
)

// pruneBatch bounds the expired rows of other keys that one call deletes,
// so that the tables stay small without any call paying for a large
// backlog at once.
const pruneBatch = 100

// guardKey is how an address or email is stored in the limit tables. Text
// columns cannot hold U+0000, and a sign-in with such an email must still
// be counted, not refused as invalid: it becomes U+FFFD.
func guardKey(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// BeginLogin holds the transaction advisory lock of the email from the
// first read to the commit, so that for every node the check of the lock
// and of the window and the reservation are one step: of any number of
// parallel attempts of one pair, no more than Limit get past. A Limit of 0
// or less disables the window; a LockThreshold of 0 or less never locks.
func (db *DB) BeginLogin(ctx context.Context, addr, email string, now time.Time, l quire.LoginLimits) (string, error) {
	addr, email = guardKey(addr), guardKey(email)
	var (
		id      string
		refusal error
	)
	now = micro(now)
	cutoff := now.Add(-l.Window)
	err := db.tx(ctx, func(tx pgx.Tx) error {
		// The reads and the pruning go to the server as one batch, in
		// this order, behind the lock: a sign-in costs one round trip for
		// them instead of five. The window is read even when the email
		// turns out to be locked; it only reads.
		b := &pgx.Batch{}
		b.Queue(xactLockSQL, lockLoginEmail, email)
		b.Queue(`SELECT locked_until FROM login_locks WHERE email = $1`, email)
		// Expired rows: this pair's all, other pairs' a bounded batch that
		// no other node is deleting. They are deleted even when the attempt
		// is refused (the refusal is reported after the commit): pruning
		// records nothing.
		b.Queue(`DELETE FROM login_failures WHERE email = $1 AND addr = $2 AND at <= $3`, email, addr, cutoff)
		b.Queue(`DELETE FROM login_failures WHERE id IN
			(SELECT id FROM login_failures WHERE at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, cutoff, pruneBatch)
		if l.Limit > 0 {
			// The failure whose leaving the window frees a place: the
			// oldest, or a later one when a lowered limit left more rows.
			b.Queue(`SELECT at FROM login_failures WHERE email = $1 AND addr = $2 AND at > $3
				ORDER BY at DESC LIMIT 1 OFFSET $4`, email, addr, cutoff, l.Limit-1)
		}
		var lockedUntil, freeAt *time.Time
		err := func() error {
			br := tx.SendBatch(ctx, b)
			defer br.Close()
			if _, err := br.Exec(); err != nil {
				return err
			}
			if err := br.QueryRow().Scan(&lockedUntil); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			for range 2 {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
			if l.Limit > 0 {
				if err := br.QueryRow().Scan(&freeAt); err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
			return br.Close()
		}()
		if err != nil {
			return err
		}
		if lockedUntil != nil && lockedUntil.After(now) {
			refusal = &quire.Error{Code: quire.EACCOUNTLOCKED, Message: msgAccountLocked,
				RetryAfter: retryAfter(lockedUntil.Sub(now))}
			return nil
		}
		if freeAt != nil {
			refusal = &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: msgTooManyAttempts,
				RetryAfter: retryAfter(freeAt.Add(l.Window).Sub(now))}
			return nil
		}
		id = newID()
		_, err = tx.Exec(ctx, `INSERT INTO login_failures (id, addr, email, at) VALUES ($1, $2, $3, $4)`,
			id, addr, email, now)
		return err
	})
	if err != nil {
		return "", db.fail(ctx, "begin login", err)
	}
	if refusal != nil {
		return "", refusal
	}
	return id, nil
}

// retryAfter rounds a wait up to whole seconds, at least one: Retry-After
// is in seconds and "0" would invite an immediate retry that is still
// refused.
func retryAfter(d time.Duration) time.Duration {
	secs := (d + time.Second - 1) / time.Second
	return max(secs, 1) * time.Second
}

// LoginFailed counts the failure and, at the threshold, locks the email and
// starts the count again from 0, so that the next lock takes LockThreshold
// more failures after this one expires. One statement: the row lock of the
// upsert makes concurrent failures on several nodes count one by one.
// With events to record (Recording's, or locked) it runs in a transaction
// with them.
func (db *DB) LoginFailed(ctx context.Context, email string, now time.Time, l quire.LoginLimits, locked *quire.Event) error {
	email = guardKey(email)
	threshold := l.LockThreshold
	if threshold <= 0 {
		threshold = -1 // never reached: count without locking
	}
	if len(db.events) == 0 && locked == nil {
		_, err := db.pool.Exec(ctx, loginFailedSQL, email, threshold, micro(now.Add(l.LockDuration)))
		return db.fail(ctx, "login failed", err)
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var didLock bool
		if err := tx.QueryRow(ctx, loginFailedSQL+` RETURNING l.consecutive = 0`,
			email, threshold, micro(now.Add(l.LockDuration))).Scan(&didLock); err != nil {
			return err
		}
		if didLock && locked != nil {
			return insertEvents(ctx, tx, []*quire.Event{locked})
		}
		return nil
	})
	return db.fail(ctx, "login failed", err)
}

// loginFailedSQL counts one failure ($1 email, $2 threshold or -1, $3 the
// end of a lock it sets); after it, consecutive is 0 exactly when it locked.
const loginFailedSQL = `INSERT INTO login_locks AS l (email, consecutive, locked_until)
		VALUES ($1, CASE WHEN 1 >= $2 AND $2 > 0 THEN 0 ELSE 1 END, CASE WHEN 1 >= $2 AND $2 > 0 THEN $3::timestamptz END)
		ON CONFLICT (email) DO UPDATE SET
			consecutive = CASE WHEN l.consecutive + 1 >= $2 AND $2 > 0 THEN 0 ELSE l.consecutive + 1 END,
			locked_until = CASE WHEN l.consecutive + 1 >= $2 AND $2 > 0 THEN $3::timestamptz ELSE l.locked_until END`

// LoginSucceeded leaves an active lock alone: a lock set by parallel
// failures while this attempt was in flight still holds.
func (db *DB) LoginSucceeded(ctx context.Context, attemptID, email string) error {
	email = guardKey(email)
	// One batch, one round trip: PostgreSQL runs the statements of a
	// pipeline that ends in one Sync as one implicit transaction.
	b := &pgx.Batch{}
	if !hasNUL(attemptID) {
		b.Queue(`DELETE FROM login_failures WHERE id = $1`, attemptID)
	}
	b.Queue(`UPDATE login_locks SET consecutive = 0 WHERE email = $1`, email)
	return db.fail(ctx, "login succeeded", db.pool.SendBatch(ctx, b).Close())
}

func (db *DB) ClearLoginFailures(ctx context.Context, email string) error {
	return db.fail(ctx, "clear login failures", db.tx(ctx, func(tx pgx.Tx) error {
		return clearLoginFailures(ctx, tx, email)
	}))
}

// clearLoginFailures removes, inside tx, the lock, the consecutive count and
// every windowed failure of email from any address. RedeemToken uses it in
// its own transaction.
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
