package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.TokenStore = (*DB)(nil)

var errInvalidToken = quire.Errorf(quire.EINVALIDTOKEN, "The link is invalid or has expired")

func (db *DB) CreateToken(ctx context.Context, t *quire.OneTimeToken, m *quire.Mail) error {
	if len(t.TokenHash) == 0 {
		return errors.New("create token: empty token hash")
	}
	if m != nil && m.To == "" {
		return errors.New("create token: mail has no recipient")
	}
	tokenID, mailID := newID(), newID()
	err := db.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO one_time_tokens
			(id, user_id, purpose, token_hash, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			tokenID, t.UserID, string(t.Purpose), t.TokenHash, micro(t.CreatedAt), micro(t.ExpiresAt), nullTime(t.UsedAt))
		if err != nil {
			return err
		}
		if m != nil {
			return insertMail(ctx, tx, mailID, m)
		}
		return nil
	})
	if err != nil {
		return db.fail(ctx, "create token", err)
	}
	t.ID = tokenID
	if m != nil {
		m.ID = mailID
	}
	return nil
}

func (db *DB) TokenByHash(ctx context.Context, purpose quire.TokenPurpose, hash []byte) (*quire.OneTimeToken, error) {
	t, err := tokenByHash(ctx, db.pool, purpose, hash, false)
	return t, db.fail(ctx, "read token", err)
}

// tokenByHash reads a token, locking its row when forUpdate is set.
func tokenByHash(ctx context.Context, q querier, purpose quire.TokenPurpose, hash []byte, forUpdate bool) (*quire.OneTimeToken, error) {
	if hasNUL(string(purpose)) {
		return nil, notFound("token")
	}
	var (
		t       quire.OneTimeToken
		p       string
		used    *time.Time
		locking string
	)
	if forUpdate {
		locking = " FOR NO KEY UPDATE"
	}
	err := q.QueryRow(ctx, `SELECT id, user_id, purpose, token_hash, created_at, expires_at, used_at
		FROM one_time_tokens WHERE token_hash = $1 AND purpose = $2`+locking, hash, string(purpose)).
		Scan(&t.ID, &t.UserID, &p, &t.TokenHash, &t.CreatedAt, &t.ExpiresAt, &used)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("token")
	}
	if err != nil {
		return nil, err
	}
	t.Purpose = quire.TokenPurpose(p)
	t.CreatedAt, t.ExpiresAt, t.UsedAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC(), timeOf(used)
	return &t, nil
}

// neededStatus is the state a user must be in for a token of each purpose
// to work: a reset token never activates an invited user (that is what
// setup is for), and no token revives a disabled one.
var neededStatus = map[quire.TokenPurpose]quire.UserStatus{
	quire.PurposeReset: quire.UserActive,
	quire.PurposeSetup: quire.UserInvited,
}

// RedeemToken locks the token's user row, then the token's, before
// checking them: of parallel redemptions of one token on any nodes, the
// first holds the locks and the others, once it commits, read the token
// used. The user comes first, as in SetPassword (which then voids the
// user's tokens), so that the two never wait for each other in a circle.
func (db *DB) RedeemToken(ctx context.Context, purpose quire.TokenPurpose, hash []byte, passwordHash string, now time.Time) (*quire.User, error) {
	want, ok := neededStatus[purpose]
	if !ok {
		return nil, fmt.Errorf("redeem token: unknown purpose %q", purpose)
	}
	var user *quire.User
	err := db.tx(ctx, func(tx pgx.Tx) error {
		t, err := tokenByHash(ctx, tx, purpose, hash, false)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return errInvalidToken
		}
		if err != nil {
			return err
		}
		var status, email string
		err = tx.QueryRow(ctx, `SELECT status, email FROM users WHERE id = $1 FOR NO KEY UPDATE`, t.UserID).Scan(&status, &email)
		if err != nil {
			return err
		}
		// Read again under the lock: a redemption or a password change
		// that committed meanwhile has used it.
		if t, err = tokenByHash(ctx, tx, purpose, hash, true); err != nil {
			return err
		}
		if !t.UsedAt.IsZero() || !now.Before(t.ExpiresAt) {
			return errInvalidToken
		}
		if quire.UserStatus(status) != want {
			return errInvalidToken
		}
		at := micro(now)
		if _, err := tx.Exec(ctx, `UPDATE one_time_tokens SET used_at = $1 WHERE user_id = $2 AND used_at IS NULL`,
			at, t.UserID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = $1, must_change_password = false, status = 'active', updated_at = $2 WHERE id = $3`,
			passwordHash, at, t.UserID); err != nil {
			return err
		}
		if err := revokeSessions(ctx, tx, t.UserID, "", now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM mfa_tokens WHERE user_id = $1`, t.UserID); err != nil {
			return err
		}
		if err := revokeAPITokens(ctx, tx, t.UserID, now); err != nil {
			return err
		}
		if err := clearLoginFailures(ctx, tx, email); err != nil {
			return err
		}
		user, err = getUser(ctx, tx, "u.id = $1", t.UserID)
		return err
	})
	if err != nil {
		return nil, db.fail(ctx, "redeem token", err)
	}
	return user, nil
}

// RequestReset runs the same statements for every email: the user lookup
// is folded into INSERT ... SELECT statements, which insert nothing when no
// active user has the email. Advisory locks on the address and then the
// email (always in that order) make the two counts and the insert one step
// across nodes.
func (db *DB) RequestReset(ctx context.Context, addr, email string, now time.Time, window time.Duration, perAddr, perEmail int,
	t *quire.OneTimeToken, m *quire.Mail) (bool, error) {
	if len(t.TokenHash) == 0 {
		return false, errors.New("request reset: empty token hash")
	}
	addr, email = guardKey(addr), guardKey(email)
	var (
		created bool
		userID  string
		refusal error
	)
	now = micro(now)
	cutoff := now.Add(-window)
	tokenID, mailID := newID(), newID()
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := xactLock(ctx, tx, lockResetAddr, addr); err != nil {
			return err
		}
		if err := xactLock(ctx, tx, lockResetEmail, email); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM reset_requests WHERE id IN
			(SELECT id FROM reset_requests WHERE at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, cutoff, pruneBatch); err != nil {
			return err
		}
		var (
			byAddr int
			oldest *time.Time
		)
		if err := tx.QueryRow(ctx, `SELECT count(*), min(at) FROM reset_requests WHERE addr = $1 AND at > $2`,
			addr, cutoff).Scan(&byAddr, &oldest); err != nil {
			return err
		}
		if byAddr >= perAddr && oldest != nil {
			refusal = &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: msgTooManyAttempts,
				RetryAfter: retryAfter(oldest.Add(window).Sub(now))}
			return nil
		}
		var byEmail int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM reset_requests WHERE email = $1 AND at > $2`,
			email, cutoff).Scan(&byEmail); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO reset_requests (id, addr, email, at) VALUES ($1, $2, $3, $4)`,
			newID(), addr, email, now); err != nil {
			return err
		}
		// byEmail < perEmail is a bound parameter rather than a branch
		// here, so that every request runs the statements below.
		err := tx.QueryRow(ctx, `INSERT INTO one_time_tokens
			(id, user_id, purpose, token_hash, created_at, expires_at)
			SELECT $1, id, $2, $3, $4, $5 FROM users WHERE email = $6 AND status = 'active' AND $7
			RETURNING user_id`,
			tokenID, string(t.Purpose), t.TokenHash, micro(t.CreatedAt), micro(t.ExpiresAt), email, byEmail < perEmail).
			Scan(&userID)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			created = true
		}
		_, err = tx.Exec(ctx, `INSERT INTO outbox (id, recipient, subject, text, html, created_at)
			SELECT $1, $2, $3, $4, $5, $6 FROM one_time_tokens WHERE id = $7`,
			mailID, noNULText(m.To), noNULText(m.Subject), noNULText(m.Text), noNULText(m.HTML), mailCreatedAt(m), tokenID)
		return err
	})
	if err != nil {
		return false, db.fail(ctx, "request reset", err)
	}
	if refusal != nil {
		return false, refusal
	}
	if created {
		t.ID, t.UserID, m.ID = tokenID, userID, mailID
	}
	return created, nil
}

// BeginRedeem holds the advisory lock of the address while it counts and
// records, so that of parallel requests from one address on any nodes no
// more than perAddr get past.
func (db *DB) BeginRedeem(ctx context.Context, addr string, now time.Time, window time.Duration, perAddr int) error {
	addr = guardKey(addr)
	var refusal error
	now = micro(now)
	cutoff := now.Add(-window)
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := xactLock(ctx, tx, lockRedeemAddr, addr); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM redeem_requests WHERE id IN
			(SELECT id FROM redeem_requests WHERE at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, cutoff, pruneBatch); err != nil {
			return err
		}
		var (
			n      int
			oldest *time.Time
		)
		if err := tx.QueryRow(ctx, `SELECT count(*), min(at) FROM redeem_requests WHERE addr = $1 AND at > $2`,
			addr, cutoff).Scan(&n, &oldest); err != nil {
			return err
		}
		if n >= perAddr && oldest != nil {
			refusal = &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: msgTooManyAttempts,
				RetryAfter: retryAfter(oldest.Add(window).Sub(now))}
			return nil
		}
		_, err := tx.Exec(ctx, `INSERT INTO redeem_requests (id, addr, at) VALUES ($1, $2, $3)`, newID(), addr, now)
		return err
	})
	if err != nil {
		return db.fail(ctx, "begin redeem", err)
	}
	return refusal
}
