// Package mfasql is the store of second factors (TOTP, recovery codes, MFA
// tokens), written once for SQLite and PostgreSQL on a sqlstore.Engine.
// Package mfa holds the rules.
package mfasql

import (
	"context"
	"errors"
	"time"

	"quire"
	"quire/sqlstore"
)

// hasSecondFactor is the one condition that says a user (u.id) has a
// second factor, a confirmed TOTP or a passkey.
func hasSecondFactor(d *sqlstore.Dialect) string {
	return `(EXISTS (SELECT 1 FROM mfa_totp f WHERE f.user_id = u.id AND ` + d.Some("f.confirmed_at") + `)
	OR EXISTS (SELECT 1 FROM passkeys pk WHERE pk.user_id = u.id))`
}

func (s *MFASQL) HasSecondFactor(ctx context.Context, userID string) (bool, error) {
	if sqlstore.HasNUL(userID) {
		return false, nil
	}
	var has bool
	err := s.E.Read().QueryRow(ctx, `SELECT count(*) > 0 FROM users u WHERE u.id = ? AND `+hasSecondFactor(s.D), userID).Scan(&has)
	return has, s.E.Fail(ctx, "has second factor", err)
}

func (s *MFASQL) TOTP(ctx context.Context, userID string) (*quire.TOTP, error) {
	if sqlstore.HasNUL(userID) {
		return nil, sqlstore.NotFound("totp")
	}
	t := quire.TOTP{UserID: userID}
	err := s.E.Read().QueryRow(ctx, `SELECT secret, created_at, confirmed_at, last_step FROM mfa_totp WHERE user_id = ?`,
		userID).Scan(&t.Secret, sqlstore.T(&t.CreatedAt), sqlstore.T(&t.ConfirmedAt), &t.LastStep)
	if err != nil {
		return nil, s.E.Fail(ctx, "read totp", sqlstore.Found(err, "totp"))
	}
	return &t, nil
}

// errMFAEnabled refuses a new set-up while a TOTP is on.
var errMFAEnabled = quire.Errorf(quire.EMFAENABLED, "A second factor is already on: switch it off first")

// BeginTOTP replaces a waiting set-up in one upsert whose update is
// conditional: a confirmed TOTP changes no row, and that is the refusal.
func (s *MFASQL) BeginTOTP(ctx context.Context, t *quire.TOTP) error {
	if len(t.Secret) == 0 {
		return errors.New("begin totp: empty secret")
	}
	if sqlstore.HasNUL(t.UserID) {
		return sqlstore.NotFound("user")
	}
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		n, err := q.Exec(ctx, `INSERT INTO mfa_totp (user_id, secret, created_at, confirmed_at, last_step)
			VALUES (?, ?, ?, `+s.D.NoTime+`, 0)
			ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = 0
			WHERE `+s.D.None("mfa_totp.confirmed_at"), t.UserID, t.Secret, s.D.Time(t.CreatedAt))
		if err == nil && n == 0 {
			return errMFAEnabled
		}
		return err
	})
	return s.E.Fail(ctx, "begin totp", err)
}

func (s *MFASQL) ConfirmTOTP(ctx context.Context, userID string, secret []byte, step int64, codeHashes [][]byte, now time.Time) error {
	if sqlstore.HasNUL(userID) {
		return sqlstore.NotFound("totp set-up")
	}
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if err := sqlstore.One(ctx, q, "totp set-up", `UPDATE mfa_totp SET confirmed_at = ?, last_step = ?
			WHERE user_id = ? AND secret = ? AND `+s.D.None("confirmed_at"), s.D.Time(now), step, userID, secret); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `DELETE FROM mfa_recovery_codes WHERE user_id = ?`, userID); err != nil {
			return err
		}
		for _, h := range codeHashes {
			if _, err := q.Exec(ctx, `INSERT INTO mfa_recovery_codes (id, user_id, code_hash, used_at) VALUES (?, ?, ?, `+s.D.NoTime+`)`,
				sqlstore.NewID(), userID, h); err != nil {
				return err
			}
		}
		return nil
	})
	return s.E.Fail(ctx, "confirm totp", err)
}

// mfaAffected runs one conditional write and reports whether it matched a
// row: the condition makes the check and the change one atomic step.
func (s *MFASQL) mfaAffected(ctx context.Context, what, query string, args ...any) (bool, error) {
	n, err := s.E.ExecOne(ctx, "", query, args...)
	if err != nil {
		return false, s.E.Fail(ctx, what, err)
	}
	return n > 0, nil
}

func (s *MFASQL) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	if sqlstore.HasNUL(userID) {
		return false, nil
	}
	return s.mfaAffected(ctx, "use totp step", `UPDATE mfa_totp SET last_step = ?
		WHERE user_id = ? AND `+s.D.Some("confirmed_at")+` AND last_step < ?`, step, userID, step)
}

func (s *MFASQL) RecoveryCodes(ctx context.Context, userID string) ([]quire.RecoveryCode, error) {
	if sqlstore.HasNUL(userID) {
		return nil, nil
	}
	out, err := sqlstore.Collect(ctx, s.E.Read(), func(scan func(dest ...any) error) (c quire.RecoveryCode, err error) {
		return c, scan(&c.ID, &c.CodeHash)
	}, `SELECT id, code_hash FROM mfa_recovery_codes WHERE user_id = ? AND `+s.D.None("used_at")+` ORDER BY id`, userID)
	return out, s.E.Fail(ctx, "recovery codes", err)
}

func (s *MFASQL) UseRecoveryCode(ctx context.Context, userID, codeID string, now time.Time) (bool, error) {
	if sqlstore.HasNUL(userID, codeID) {
		return false, nil
	}
	return s.mfaAffected(ctx, "use recovery code", `UPDATE mfa_recovery_codes SET used_at = ?
		WHERE id = ? AND user_id = ? AND `+s.D.None("used_at"), s.D.Time(now), codeID, userID)
}

func (s *MFASQL) DeleteTOTP(ctx context.Context, userID string) (bool, error) {
	if sqlstore.HasNUL(userID) {
		return false, nil
	}
	var had bool
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		var confirmed time.Time
		err := q.QueryRow(ctx, `DELETE FROM mfa_totp WHERE user_id = ? RETURNING confirmed_at`, userID).Scan(sqlstore.T(&confirmed))
		if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
			return err
		}
		had = err == nil && !confirmed.IsZero()
		for _, table := range []string{"mfa_recovery_codes", "mfa_tokens"} {
			if _, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE user_id = ?`, userID); err != nil {
				return err
			}
		}
		if !had {
			quire.Unchanged(s.E.Events())
		}
		return nil
	})
	return had, s.E.Fail(ctx, "delete totp", err)
}

// CreateMFAToken deletes the user's ended tokens first, so that a user's
// tokens stay as few as their sign-ins under way.
func (s *MFASQL) CreateMFAToken(ctx context.Context, t *quire.MFAToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("create mfa token: empty token hash")
	}
	if err := sqlstore.NoNUL(map[string]string{"timezone": t.Timezone}); err != nil {
		return err
	}
	id := sqlstore.NewID()
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if _, err := q.Exec(ctx, `DELETE FROM mfa_tokens WHERE user_id = ? AND (`+s.D.Some("used_at")+` OR expires_at <= ?)`,
			t.UserID, s.D.Time(t.CreatedAt)); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `INSERT INTO mfa_tokens (id, user_id, token_hash, timezone, created_at, expires_at, used_at, tries)
			VALUES (?, ?, ?, ?, ?, ?, `+s.D.NoTime+`, 0)`,
			id, t.UserID, t.TokenHash, t.Timezone, s.D.Time(t.CreatedAt), s.D.Time(t.ExpiresAt))
		return err
	})
	if err != nil {
		return s.E.Fail(ctx, "create mfa token", err)
	}
	t.ID = id
	return nil
}

func (s *MFASQL) MFATokenByHash(ctx context.Context, hash []byte) (*quire.MFAToken, error) {
	var t quire.MFAToken
	err := s.E.Read().QueryRow(ctx, `SELECT id, user_id, token_hash, timezone, created_at, expires_at, used_at, tries
		FROM mfa_tokens WHERE token_hash = ?`, hash).
		Scan(&t.ID, &t.UserID, &t.TokenHash, &t.Timezone, sqlstore.T(&t.CreatedAt), sqlstore.T(&t.ExpiresAt), sqlstore.T(&t.UsedAt), &t.Tries)
	if err != nil {
		return nil, s.E.Fail(ctx, "read mfa token", sqlstore.Found(err, "mfa token"))
	}
	return &t, nil
}

func (s *MFASQL) TryMFAToken(ctx context.Context, id string, now time.Time, max int) (bool, error) {
	if sqlstore.HasNUL(id) {
		return false, nil
	}
	return s.mfaAffected(ctx, "try mfa token", `UPDATE mfa_tokens SET tries = tries + 1
		WHERE id = ? AND `+s.D.None("used_at")+` AND expires_at > ? AND tries < ?`, id, s.D.Time(now), max)
}

func (s *MFASQL) UseMFAToken(ctx context.Context, id string, now time.Time) (bool, error) {
	if sqlstore.HasNUL(id) {
		return false, nil
	}
	return s.mfaAffected(ctx, "use mfa token", `UPDATE mfa_tokens SET used_at = ? WHERE id = ? AND `+s.D.None("used_at"),
		s.D.Time(now), id)
}

// MFASQL is quire.MFAStore written once for both engines, which embed it.
type MFASQL struct{ sqlstore.Base }

// NewSQL returns the store of second factors on e.
func NewSQL(e sqlstore.Engine) *MFASQL { return &MFASQL{sqlstore.NewBase(e)} }

var _ quire.MFAStore = (*MFASQL)(nil)
