package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.MFAStore = (*DB)(nil)

// hasSecondFactor is the one condition that says a user (u.id) has a
// second factor, a confirmed TOTP or a passkey: HasSecondFactor and the
// admin list both use it.
const hasSecondFactor = `(EXISTS (SELECT 1 FROM mfa_totp f WHERE f.user_id = u.id AND f.confirmed_at != 0)
	OR EXISTS (SELECT 1 FROM passkeys pk WHERE pk.user_id = u.id))`

func (db *DB) HasSecondFactor(ctx context.Context, userID string) (bool, error) {
	var has bool
	err := db.read.QueryRowContext(ctx, `SELECT `+hasSecondFactor+` FROM users u WHERE u.id = ?`, userID).Scan(&has)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("has second factor: %w", err)
	}
	return has, nil
}

func (db *DB) TOTP(ctx context.Context, userID string) (*quire.TOTP, error) {
	t := quire.TOTP{UserID: userID}
	var created, confirmed int64
	err := db.read.QueryRowContext(ctx, `SELECT secret, created_at, confirmed_at, last_step FROM mfa_totp WHERE user_id = ?`,
		userID).Scan(&t.Secret, &created, &confirmed, &t.LastStep)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("totp")
	}
	if err != nil {
		return nil, fmt.Errorf("read totp: %w", err)
	}
	t.CreatedAt, t.ConfirmedAt = fromMicros(created), fromMicros(confirmed)
	return &t, nil
}

// errMFAEnabled refuses a new set-up while a TOTP is on.
var errMFAEnabled = quire.Errorf(quire.EMFAENABLED, "A second factor is already on: switch it off first")

func (db *DB) BeginTOTP(ctx context.Context, t *quire.TOTP) error {
	if len(t.Secret) == 0 {
		return errors.New("begin totp: empty secret")
	}
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO mfa_totp (user_id, secret, created_at, confirmed_at, last_step)
			VALUES (?, ?, ?, 0, 0)
			ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = 0
			WHERE mfa_totp.confirmed_at = 0`, t.UserID, t.Secret, toMicros(t.CreatedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return errMFAEnabled
		}
		return nil
	})
	if err != nil && quire.ErrorCode(err) == quire.EINTERNAL {
		return fmt.Errorf("begin totp: %w", err)
	}
	return err
}

func (db *DB) ConfirmTOTP(ctx context.Context, userID string, secret []byte, step int64, codeHashes [][]byte, now time.Time) error {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := updateOne(ctx, tx, "totp set-up", `UPDATE mfa_totp SET confirmed_at = ?, last_step = ?
			WHERE user_id = ? AND secret = ? AND confirmed_at = 0`, toMicros(now), step, userID, secret); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mfa_recovery_codes WHERE user_id = ?`, userID); err != nil {
			return err
		}
		for _, h := range codeHashes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO mfa_recovery_codes (id, user_id, code_hash, used_at) VALUES (?, ?, ?, 0)`,
				newID(), userID, h); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && quire.ErrorCode(err) == quire.EINTERNAL {
		return fmt.Errorf("confirm totp: %w", err)
	}
	return err
}

// affected runs one conditional write and reports whether it matched a row.
func (db *DB) affected(ctx context.Context, what, query string, args ...any) (bool, error) {
	var n int64
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}

func (db *DB) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	return db.affected(ctx, "use totp step", `UPDATE mfa_totp SET last_step = ?
		WHERE user_id = ? AND confirmed_at != 0 AND last_step < ?`, step, userID, step)
}

func (db *DB) RecoveryCodes(ctx context.Context, userID string) ([]quire.RecoveryCode, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, code_hash FROM mfa_recovery_codes
		WHERE user_id = ? AND used_at = 0 ORDER BY id`, userID)
	if err != nil {
		return nil, fmt.Errorf("recovery codes: %w", err)
	}
	defer rows.Close()
	var out []quire.RecoveryCode
	for rows.Next() {
		var c quire.RecoveryCode
		if err := rows.Scan(&c.ID, &c.CodeHash); err != nil {
			return nil, fmt.Errorf("recovery codes: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recovery codes: %w", err)
	}
	return out, nil
}

func (db *DB) UseRecoveryCode(ctx context.Context, userID, codeID string, now time.Time) (bool, error) {
	return db.affected(ctx, "use recovery code", `UPDATE mfa_recovery_codes SET used_at = ?
		WHERE id = ? AND user_id = ? AND used_at = 0`, toMicros(now), codeID, userID)
}

func (db *DB) DeleteTOTP(ctx context.Context, userID string) (bool, error) {
	var had bool
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var confirmed int64
		err := tx.QueryRowContext(ctx, `DELETE FROM mfa_totp WHERE user_id = ? RETURNING confirmed_at`, userID).Scan(&confirmed)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			had = confirmed != 0
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mfa_recovery_codes WHERE user_id = ?`, userID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mfa_tokens WHERE user_id = ?`, userID); err != nil {
			return err
		}
		if !had {
			quire.Unchanged(db.events)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("delete totp: %w", err)
	}
	return had, nil
}

func (db *DB) CreateMFAToken(ctx context.Context, t *quire.MFAToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("create mfa token: empty token hash")
	}
	id := newID()
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM mfa_tokens WHERE user_id = ? AND (used_at != 0 OR expires_at <= ?)`,
			t.UserID, toMicros(t.CreatedAt)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mfa_tokens
			(id, user_id, token_hash, timezone, created_at, expires_at, used_at, tries) VALUES (?, ?, ?, ?, ?, ?, 0, 0)`,
			id, t.UserID, t.TokenHash, t.Timezone, toMicros(t.CreatedAt), toMicros(t.ExpiresAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("create mfa token: %w", err)
	}
	t.ID = id
	return nil
}

func (db *DB) MFATokenByHash(ctx context.Context, hash []byte) (*quire.MFAToken, error) {
	var (
		t                      quire.MFAToken
		created, expires, used int64
	)
	err := db.read.QueryRowContext(ctx, `SELECT id, user_id, token_hash, timezone, created_at, expires_at, used_at, tries
		FROM mfa_tokens WHERE token_hash = ?`, hash).
		Scan(&t.ID, &t.UserID, &t.TokenHash, &t.Timezone, &created, &expires, &used, &t.Tries)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("mfa token")
	}
	if err != nil {
		return nil, fmt.Errorf("read mfa token: %w", err)
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = fromMicros(created), fromMicros(expires), fromMicros(used)
	return &t, nil
}

func (db *DB) TryMFAToken(ctx context.Context, id string, now time.Time, max int) (bool, error) {
	return db.affected(ctx, "try mfa token", `UPDATE mfa_tokens SET tries = tries + 1
		WHERE id = ? AND used_at = 0 AND expires_at > ? AND tries < ?`, id, toMicros(now), max)
}

func (db *DB) UseMFAToken(ctx context.Context, id string, now time.Time) (bool, error) {
	return db.affected(ctx, "use mfa token", `UPDATE mfa_tokens SET used_at = ? WHERE id = ? AND used_at = 0`,
		toMicros(now), id)
}

// WithdrawLoginAttempt (quire.LoginGuard) is here rather than in
// limits.go: the two-step sign-in is its only caller.
func (db *DB) WithdrawLoginAttempt(ctx context.Context, attemptID string) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM login_failures WHERE id = ?`, attemptID); err != nil {
		return fmt.Errorf("withdraw login attempt: %w", db.noteWrite(err))
	}
	return nil
}
