package authsql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quire"
	"quire/sqlstore"
)

func (s *AuthSQL) CreateToken(ctx context.Context, t *quire.OneTimeToken, m *quire.Mail) error {
	if m != nil && m.To == "" {
		return errors.New("create token: mail has no recipient")
	}
	var tokenID, mailID string
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) (err error) {
		if tokenID, err = s.insertToken(ctx, q, t); err == nil && m != nil {
			mailID, err = sqlstore.InsertMail(ctx, q, s.D, m, tokenID)
		}
		return err
	})
	if err != nil {
		return s.E.Fail(ctx, "create token", err)
	}
	if t.ID = tokenID; m != nil {
		m.ID = mailID
	}
	return nil
}

// insertToken inserts t in q and returns its id, which the caller sets
// once the transaction committed.
func (s *AuthSQL) insertToken(ctx context.Context, q sqlstore.Q, t *quire.OneTimeToken) (string, error) {
	if len(t.TokenHash) == 0 {
		return "", errors.New("empty token hash")
	}
	id := sqlstore.NewID()
	_, err := q.Exec(ctx, `INSERT INTO one_time_tokens
		(id, user_id, purpose, token_hash, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, t.UserID, string(t.Purpose), t.TokenHash, s.D.Time(t.CreatedAt), s.D.Time(t.ExpiresAt), s.D.Time(t.UsedAt))
	return id, err
}

func (s *AuthSQL) TokenByHash(ctx context.Context, purpose quire.TokenPurpose, hash []byte) (*quire.OneTimeToken, error) {
	t, err := s.tokenByHash(ctx, s.E.Read(), purpose, hash, "")
	return t, s.E.Fail(ctx, "read token", err)
}

// tokenByHash reads a token in q; lock ends the SELECT (a row lock, or "").
func (s *AuthSQL) tokenByHash(ctx context.Context, q sqlstore.Q, purpose quire.TokenPurpose, hash []byte, lock string) (*quire.OneTimeToken, error) {
	t := quire.OneTimeToken{Purpose: purpose}
	if sqlstore.HasNUL(string(purpose)) {
		return nil, sqlstore.NotFound("token")
	}
	err := q.QueryRow(ctx, `SELECT id, user_id, token_hash, created_at, expires_at, used_at
		FROM one_time_tokens WHERE token_hash = ? AND purpose = ?`+lock, hash, string(purpose)).
		Scan(&t.ID, &t.UserID, &t.TokenHash, sqlstore.T(&t.CreatedAt), sqlstore.T(&t.ExpiresAt), sqlstore.T(&t.UsedAt))
	if err != nil {
		return nil, sqlstore.Found(err, "token")
	}
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
// checking them (FOR NO KEY UPDATE, which inserts naming the user, such as
// a session, do not wait for; SQLite's transaction is the only writer from
// its first read): of parallel redemptions of one token on any nodes, the
// first holds the locks and the others, once it commits, read the token
// used. The user comes first, as in SetPassword (which then voids the
// user's tokens), so that the two never wait for each other in a circle.
func (s *AuthSQL) RedeemToken(ctx context.Context, purpose quire.TokenPurpose, hash []byte, passwordHash string, now time.Time) (*quire.User, error) {
	want, ok := neededStatus[purpose]
	if !ok {
		return nil, fmt.Errorf("redeem token: unknown purpose %q", purpose)
	}
	lock := s.D.Locked(" FOR NO KEY UPDATE")
	var user *quire.User
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		t, err := s.tokenByHash(ctx, q, purpose, hash, "")
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return quire.InvalidToken()
		} else if err != nil {
			return err
		}
		var status, email string
		if err = q.QueryRow(ctx, `SELECT status, email FROM users WHERE id = ?`+lock, t.UserID).Scan(&status, &email); err != nil {
			return err
		}
		// Read again under the lock: a redemption or a password change
		// that committed meanwhile has used it.
		if t, err = s.tokenByHash(ctx, q, purpose, hash, lock); err != nil {
			return err
		}
		if !t.UsedAt.IsZero() || !now.Before(t.ExpiresAt) || quire.UserStatus(status) != want {
			return quire.InvalidToken()
		}
		at := s.D.Time(now)
		if _, err := q.Exec(ctx, `UPDATE one_time_tokens SET used_at = ? WHERE user_id = ? AND `+s.D.None("used_at"),
			at, t.UserID); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `UPDATE users SET password_hash = ?, must_change_password = false, status = 'active', updated_at = ?
			WHERE id = ?`, passwordHash, at, t.UserID); err != nil {
			return err
		}
		if err := s.revokeSessions(ctx, q, t.UserID, "", now); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `DELETE FROM mfa_tokens WHERE user_id = ?`, t.UserID); err != nil {
			return err
		}
		if err := s.revokeAPITokens(ctx, q, t.UserID, now); err != nil {
			return err
		}
		if err := s.clearLoginFailures(ctx, q, email); err != nil {
			return err
		}
		user, err = sqlstore.GetUser(ctx, q, "u.id = ?", t.UserID)
		return err
	})
	return user, s.E.Fail(ctx, "redeem token", err)
}

// RequestReset runs the same statements for every email: the user lookup
// is folded into INSERT ... SELECT statements, which insert nothing when no
// active user has the email. The locks of the address and then of the
// email (always in that order; SQLite's single writer needs none) make the
// two counts and the insert one step across nodes.
func (s *AuthSQL) RequestReset(ctx context.Context, addr, email string, now time.Time, window time.Duration, perAddr, perEmail int,
	t *quire.OneTimeToken, m *quire.Mail) (bool, error) {
	if len(t.TokenHash) == 0 {
		return false, errors.New("request reset: empty token hash")
	}
	addr, email, now = sqlstore.ReplaceNUL(addr), sqlstore.ReplaceNUL(email), sqlstore.Micro(now)
	var (
		userID, mailID string
		refusal        *quire.Error
	)
	tokenID := sqlstore.NewID()
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) (err error) {
		userID = ""
		if err = s.D.Lock(ctx, q, sqlstore.LockResetAddr, addr); err == nil {
			err = s.D.Lock(ctx, q, sqlstore.LockResetEmail, email)
		}
		if err != nil {
			return err
		}
		if refusal, err = s.window(ctx, q, "reset_requests", "addr = ?", now, window, perAddr, addr); err != nil || refusal != nil {
			return err
		}
		var byEmail int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM reset_requests WHERE email = ? AND at > ?`,
			email, s.D.Time(now.Add(-window))).Scan(&byEmail); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `INSERT INTO reset_requests (id, addr, email, at) VALUES (?, ?, ?, ?)`,
			sqlstore.NewID(), addr, email, s.D.Time(now)); err != nil {
			return err
		}
		// byEmail < perEmail is a bound parameter rather than a branch
		// here, so that every request runs the statements below.
		err = q.QueryRow(ctx, `INSERT INTO one_time_tokens
			(id, user_id, purpose, token_hash, created_at, expires_at, used_at)
			SELECT ?, id, ?, ?, ?, ?, `+s.D.NoTime+` FROM users WHERE email = ? AND status = 'active' AND ?
			RETURNING user_id`,
			tokenID, string(t.Purpose), t.TokenHash, s.D.Time(t.CreatedAt), s.D.Time(t.ExpiresAt), email, byEmail < perEmail).
			Scan(&userID)
		if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
			return err
		}
		mailID, err = sqlstore.InsertMail(ctx, q, s.D, m, tokenID)
		return err
	})
	switch {
	case err != nil:
		return false, s.E.Fail(ctx, "request reset", err)
	case refusal != nil:
		return false, refusal
	case userID == "":
		return false, nil
	}
	t.ID, t.UserID, m.ID = tokenID, userID, mailID
	return true, nil
}

// BeginRedeem holds the lock of the address (PostgreSQL's advisory lock;
// SQLite's single writer) while it counts and records, so that of parallel
// requests from one address on any nodes no more than perAddr get past.
func (s *AuthSQL) BeginRedeem(ctx context.Context, addr string, now time.Time, window time.Duration, perAddr int) error {
	addr, now = sqlstore.ReplaceNUL(addr), sqlstore.Micro(now)
	var refusal *quire.Error
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) (err error) {
		if err = s.D.Lock(ctx, q, sqlstore.LockRedeemAddr, addr); err != nil {
			return err
		}
		if refusal, err = s.window(ctx, q, "redeem_requests", "addr = ?", now, window, perAddr, addr); err != nil || refusal != nil {
			return err
		}
		_, err = q.Exec(ctx, `INSERT INTO redeem_requests (id, addr, at) VALUES (?, ?, ?)`, sqlstore.NewID(), addr, s.D.Time(now))
		return err
	})
	if err == nil && refusal != nil {
		return refusal
	}
	return s.E.Fail(ctx, "begin redeem", err)
}
