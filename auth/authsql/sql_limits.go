package authsql

import (
	"context"
	"errors"
	"time"

	"quire"
	"quire/sqlstore"
)

// Messages of the two refusals (contract section 4).
const (
	msgTooManyAttempts = "Too many login attempts, please try again later."
	msgAccountLocked   = "Account is locked, please try again later."
)

// pruneBatch bounds the expired rows of other keys that one call deletes,
// so that the tables stay small without any call paying for a large
// backlog at once.
const pruneBatch = 100

// window prunes and judges the sliding window of a limit table (id, at).
// It deletes a bounded batch of the rows that left it, of any key, that no
// other node is deleting (SKIP LOCKED where writers run in parallel); then
// it returns TOO_MANY_ATTEMPTS when limit or more rows matching cond (a
// constant clause on bound args) are within it, with RetryAfter set to
// when the row whose leaving frees a place leaves: the oldest, or a later
// one when a lowered limit left more rows. It reads at most limit rows. A
// window of 0 or less, which would make every row expired, prunes and
// refuses nothing; a limit of 0 or less refuses nothing.
func (s *AuthSQL) window(ctx context.Context, q sqlstore.Q, table, cond string, now time.Time, window time.Duration, limit int,
	args ...any) (*quire.Error, error) {
	if window <= 0 {
		return nil, nil
	}
	cutoff := s.D.Time(now.Add(-window))
	if _, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE id IN
		(SELECT id FROM `+table+` WHERE at <= ? LIMIT ?`+s.D.Locked(" FOR UPDATE SKIP LOCKED")+`)`, cutoff, pruneBatch); err != nil || limit <= 0 {
		return nil, err
	}
	var freeAt time.Time
	err := q.QueryRow(ctx, `SELECT at FROM `+table+` WHERE `+cond+` AND at > ? ORDER BY at DESC LIMIT 1 OFFSET ?`,
		append(args, cutoff, limit-1)...).Scan(sqlstore.T(&freeAt))
	if errors.Is(err, sqlstore.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: msgTooManyAttempts,
		RetryAfter: retryAfter(freeAt.Add(window).Sub(now))}, nil
}

// retryAfter rounds a wait up to whole seconds, at least one: Retry-After
// is in seconds and "0" would invite an immediate retry that is still
// refused.
func retryAfter(d time.Duration) time.Duration {
	return max((d+time.Second-1)/time.Second, 1) * time.Second
}

// BeginLogin holds, from the first read to the commit, the lock of the
// email (PostgreSQL's advisory lock; SQLite's single writer), so that for
// every node and process the check of the lock and of the window and the
// reservation are one step: of any number of parallel attempts of one
// pair, no more than Limit get past. Expired rows (this pair's all, other
// pairs' a bounded batch) are deleted even when the attempt is refused
// (the refusal is reported after the commit): pruning records nothing.
// The window is read even when the email is locked; it only reads. A
// Limit or Window of 0 or less disables the window; a sqlstore.LockThreshold of 0
// or less never locks (LoginFailed).
func (s *AuthSQL) BeginLogin(ctx context.Context, addr, email string, now time.Time, l quire.LoginLimits) (string, error) {
	addr, email, now = sqlstore.ReplaceNUL(addr), sqlstore.ReplaceNUL(email), sqlstore.Micro(now)
	var (
		id      string
		refusal *quire.Error
	)
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		id = ""
		if err := s.D.Lock(ctx, q, sqlstore.LockLoginEmail, email); err != nil {
			return err
		}
		var lockedUntil time.Time
		err := q.QueryRow(ctx, `SELECT locked_until FROM login_locks WHERE email = ?`, email).Scan(sqlstore.T(&lockedUntil))
		if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
			return err
		}
		if l.Window > 0 {
			if _, err := q.Exec(ctx, `DELETE FROM login_failures WHERE email = ? AND addr = ? AND at <= ?`,
				email, addr, s.D.Time(now.Add(-l.Window))); err != nil {
				return err
			}
		}
		refusal, err = s.window(ctx, q, "login_failures", "email = ? AND addr = ?", now, l.Window, l.Limit, email, addr)
		if lockedUntil.After(now) {
			refusal = &quire.Error{Code: quire.EACCOUNTLOCKED, Message: msgAccountLocked,
				RetryAfter: retryAfter(lockedUntil.Sub(now))}
		}
		if err != nil || refusal != nil {
			return err
		}
		id = sqlstore.NewID()
		_, err = q.Exec(ctx, `INSERT INTO login_failures (id, addr, email, at) VALUES (?, ?, ?, ?)`,
			id, addr, email, s.D.Time(now))
		return err
	})
	if err != nil {
		return "", s.E.Fail(ctx, "begin login", err)
	}
	if refusal != nil {
		return "", refusal
	}
	return id, nil
}

// LoginFailed counts the failure and, at the threshold, locks the email and
// starts the count again from 0, so that the next lock takes sqlstore.LockThreshold
// more failures after this one expires. The upsert's row lock, held to the
// commit, makes concurrent failures on several nodes count one by one and
// lock once.
func (s *AuthSQL) LoginFailed(ctx context.Context, email string, now time.Time, l quire.LoginLimits, locked *quire.Event) error {
	email = sqlstore.ReplaceNUL(email)
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if _, err := q.Exec(ctx, `INSERT INTO login_locks (email, consecutive, locked_until) VALUES (?, 1, `+s.D.NoTime+`)
			ON CONFLICT (email) DO UPDATE SET consecutive = login_locks.consecutive + 1`, email); err != nil || l.LockThreshold <= 0 {
			return err
		}
		n, err := q.Exec(ctx, `UPDATE login_locks SET locked_until = ?, consecutive = 0
			WHERE email = ? AND consecutive >= ?`, s.D.Time(now.Add(l.LockDuration)), email, l.LockThreshold)
		if err != nil || n == 0 || locked == nil {
			return err
		}
		return sqlstore.InsertEvents(ctx, q, s.D, []*quire.Event{locked})
	})
	return s.E.Fail(ctx, "login failed", err)
}

// LoginSucceeded leaves an active lock alone: a lock set by parallel
// failures while this attempt was in flight still holds.
func (s *AuthSQL) LoginSucceeded(ctx context.Context, attemptID, email string) error {
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if _, err := q.Exec(ctx, `DELETE FROM login_failures WHERE id = ?`, sqlstore.ReplaceNUL(attemptID)); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `UPDATE login_locks SET consecutive = 0 WHERE email = ?`, sqlstore.ReplaceNUL(email))
		return err
	})
	return s.E.Fail(ctx, "login succeeded", err)
}

func (s *AuthSQL) ClearLoginFailures(ctx context.Context, email string) error {
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error { return s.clearLoginFailures(ctx, q, email) })
	return s.E.Fail(ctx, "clear login failures", err)
}

// clearLoginFailures removes, in q, the lock, the consecutive count and
// every windowed failure of email from any address, under the lock of the
// email that BeginLogin takes. RedeemToken uses it in its own transaction.
func (s *AuthSQL) clearLoginFailures(ctx context.Context, q sqlstore.Q, email string) error {
	email = sqlstore.ReplaceNUL(email)
	if err := s.D.Lock(ctx, q, sqlstore.LockLoginEmail, email); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `DELETE FROM login_locks WHERE email = ?`, email); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM login_failures WHERE email = ?`, email)
	return err
}

// WithdrawLoginAttempt withdraws the failure BeginLogin recorded for a
// sign-in whose second step (TOTP, passkey) decides it.
func (s *AuthSQL) WithdrawLoginAttempt(ctx context.Context, attemptID string) error {
	if sqlstore.HasNUL(attemptID) {
		return nil
	}
	_, err := s.E.ExecOne(ctx, "", `DELETE FROM login_failures WHERE id = ?`, attemptID)
	return s.E.Fail(ctx, "withdraw login attempt", err)
}
