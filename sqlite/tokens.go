package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.TokenStore = (*DB)(nil)

var errInvalidToken = quire.Errorf(quire.EINVALIDTOKEN, "The link is invalid or has expired")

func (db *DB) CreateToken(ctx context.Context, t *quire.OneTimeToken, m *quire.Mail) error {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := insertToken(ctx, tx, t); err != nil {
			return err
		}
		if m != nil {
			return insertMail(ctx, tx, m)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

func insertToken(ctx context.Context, tx *sql.Tx, t *quire.OneTimeToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("empty token hash")
	}
	id := newID()
	_, err := tx.ExecContext(ctx, `INSERT INTO one_time_tokens
		(id, user_id, purpose, token_hash, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, t.UserID, string(t.Purpose), t.TokenHash, toMicros(t.CreatedAt), toMicros(t.ExpiresAt), toMicros(t.UsedAt))
	if err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	t.ID = id
	return nil
}

func (db *DB) TokenByHash(ctx context.Context, purpose quire.TokenPurpose, hash []byte) (*quire.OneTimeToken, error) {
	t, err := tokenByHash(ctx, db.read, purpose, hash)
	if err != nil {
		return nil, fmt.Errorf("read token: %w", err)
	}
	return t, nil
}

func tokenByHash(ctx context.Context, q rowQuerier, purpose quire.TokenPurpose, hash []byte) (*quire.OneTimeToken, error) {
	var (
		t                      quire.OneTimeToken
		p                      string
		created, expires, used int64
	)
	err := q.QueryRowContext(ctx, `SELECT id, user_id, purpose, token_hash, created_at, expires_at, used_at
		FROM one_time_tokens WHERE token_hash = ? AND purpose = ?`, hash, string(purpose)).
		Scan(&t.ID, &t.UserID, &p, &t.TokenHash, &created, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("token")
	}
	if err != nil {
		return nil, err
	}
	t.Purpose = quire.TokenPurpose(p)
	t.CreatedAt, t.ExpiresAt, t.UsedAt = fromMicros(created), fromMicros(expires), fromMicros(used)
	return &t, nil
}

// neededStatus is the state a user must be in for a token of each purpose
// to work: a reset token never activates an invited user (that is what
// setup is for), and no token revives a disabled one.
var neededStatus = map[quire.TokenPurpose]quire.UserStatus{
	quire.PurposeReset: quire.UserActive,
	quire.PurposeSetup: quire.UserInvited,
}

// RedeemToken holds the write lock from the first read to the commit, so of
// two requests with the same token exactly one gets past the used check.
func (db *DB) RedeemToken(ctx context.Context, purpose quire.TokenPurpose, hash []byte, passwordHash string, now time.Time) (*quire.User, error) {
	want, ok := neededStatus[purpose]
	if !ok {
		return nil, fmt.Errorf("redeem token: unknown purpose %q", purpose)
	}
	var userID string
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		t, err := tokenByHash(ctx, tx, purpose, hash)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return errInvalidToken
		}
		if err != nil {
			return err
		}
		if !t.UsedAt.IsZero() || !now.Before(t.ExpiresAt) {
			return errInvalidToken
		}
		var status, email string
		err = tx.QueryRowContext(ctx, `SELECT status, email FROM users WHERE id = ?`, t.UserID).Scan(&status, &email)
		if err != nil {
			return fmt.Errorf("read user: %w", err)
		}
		if quire.UserStatus(status) != want {
			return errInvalidToken
		}
		at := toMicros(now)
		if _, err := tx.ExecContext(ctx, `UPDATE one_time_tokens SET used_at = ? WHERE user_id = ? AND used_at = 0`,
			at, t.UserID); err != nil {
			return fmt.Errorf("use tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, must_change_password = 0, status = 'active', updated_at = ? WHERE id = ?`,
			passwordHash, at, t.UserID); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		if err := revokeSessions(ctx, tx, t.UserID, "", now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mfa_tokens WHERE user_id = ?`, t.UserID); err != nil {
			return fmt.Errorf("void mfa tokens: %w", err)
		}
		if err := revokeAPITokens(ctx, tx, t.UserID, now); err != nil {
			return err
		}
		if err := clearLoginFailures(ctx, tx, email); err != nil {
			return err
		}
		userID = t.UserID
		return nil
	})
	if err != nil {
		if quire.ErrorCode(err) == quire.EINVALIDTOKEN {
			return nil, err
		}
		return nil, fmt.Errorf("redeem token: %w", err)
	}
	return getUser(ctx, db.read, "u.id = ?", userID)
}

// RequestReset runs the same statements for every email: the user lookup
// is folded into the INSERT ... SELECT statements, which insert nothing
// when no active user has the email.
func (db *DB) RequestReset(ctx context.Context, addr, email string, now time.Time, window time.Duration, perAddr, perEmail int,
	t *quire.OneTimeToken, m *quire.Mail) (bool, error) {
	if len(t.TokenHash) == 0 {
		return false, errors.New("request reset: empty token hash")
	}
	var (
		created bool
		userID  string
		refusal error
	)
	nowUs := toMicros(now)
	cutoff := toMicros(now.Add(-window))
	tokenID, mailID := newID(), newID()
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM reset_requests WHERE id IN
			(SELECT id FROM reset_requests WHERE at <= ? LIMIT ?)`, cutoff, pruneBatch); err != nil {
			return fmt.Errorf("prune requests: %w", err)
		}
		var (
			byAddr int
			oldest sql.NullInt64
		)
		if err := tx.QueryRowContext(ctx, `SELECT count(*), min(at) FROM reset_requests WHERE addr = ? AND at > ?`,
			addr, cutoff).Scan(&byAddr, &oldest); err != nil {
			return fmt.Errorf("count requests: %w", err)
		}
		if byAddr >= perAddr {
			refusal = &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: msgTooManyAttempts,
				RetryAfter: retryAfter(oldest.Int64 + window.Microseconds() - nowUs)}
			return nil
		}
		var byEmail int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM reset_requests WHERE email = ? AND at > ?`,
			email, cutoff).Scan(&byEmail); err != nil {
			return fmt.Errorf("count requests: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO reset_requests (id, addr, email, at) VALUES (?, ?, ?, ?)`,
			newID(), addr, email, nowUs); err != nil {
			return fmt.Errorf("record request: %w", err)
		}
		// byEmail < perEmail is a bound parameter rather than a branch
		// here, so that every request runs the statements below.
		err := tx.QueryRowContext(ctx, `INSERT INTO one_time_tokens
			(id, user_id, purpose, token_hash, created_at, expires_at, used_at)
			SELECT ?, id, ?, ?, ?, ?, 0 FROM users WHERE email = ? AND status = 'active' AND ?
			RETURNING user_id`,
			tokenID, string(t.Purpose), t.TokenHash, toMicros(t.CreatedAt), toMicros(t.ExpiresAt), email, byEmail < perEmail).
			Scan(&userID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("insert token: %w", err)
		default:
			created = true
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (id, recipient, subject, text, html, created_at)
			SELECT ?, ?, ?, ?, ?, ? FROM one_time_tokens WHERE id = ?`,
			mailID, m.To, m.Subject, m.Text, m.HTML, toMicros(m.CreatedAt), tokenID); err != nil {
			return fmt.Errorf("queue mail: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("request reset: %w", err)
	}
	if refusal != nil {
		return false, refusal
	}
	if created {
		t.ID, t.UserID, m.ID = tokenID, userID, mailID
	}
	return created, nil
}

// BeginRedeem counts and records in one write transaction, so that of
// parallel requests from one address no more than perAddr get past.
func (db *DB) BeginRedeem(ctx context.Context, addr string, now time.Time, window time.Duration, perAddr int) error {
	var refusal error
	nowUs := toMicros(now)
	cutoff := toMicros(now.Add(-window))
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM redeem_requests WHERE id IN
			(SELECT id FROM redeem_requests WHERE at <= ? LIMIT ?)`, cutoff, pruneBatch); err != nil {
			return fmt.Errorf("prune requests: %w", err)
		}
		var (
			n      int
			oldest sql.NullInt64
		)
		if err := tx.QueryRowContext(ctx, `SELECT count(*), min(at) FROM redeem_requests WHERE addr = ? AND at > ?`,
			addr, cutoff).Scan(&n, &oldest); err != nil {
			return fmt.Errorf("count requests: %w", err)
		}
		if n >= perAddr {
			refusal = &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: msgTooManyAttempts,
				RetryAfter: retryAfter(oldest.Int64 + window.Microseconds() - nowUs)}
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO redeem_requests (id, addr, at) VALUES (?, ?, ?)`,
			newID(), addr, nowUs); err != nil {
			return fmt.Errorf("record request: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("begin redeem: %w", err)
	}
	return refusal
}
