package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.MFAStore = (*DB)(nil)

// hasSecondFactor is the one condition that says a user (u.id) has a
// second factor, a confirmed TOTP or a passkey: HasSecondFactor and the
// admin list both use it.
const hasSecondFactor = `(EXISTS (SELECT 1 FROM mfa_totp f WHERE f.user_id = u.id AND f.confirmed_at IS NOT NULL)
	OR EXISTS (SELECT 1 FROM passkeys pk WHERE pk.user_id = u.id))`

func (db *DB) HasSecondFactor(ctx context.Context, userID string) (bool, error) {
	if hasNUL(userID) {
		return false, nil
	}
	var has bool
	err := db.pool.QueryRow(ctx, `SELECT `+hasSecondFactor+` FROM users u WHERE u.id = $1`, userID).Scan(&has)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return has, db.fail(ctx, "has second factor", err)
}

func (db *DB) TOTP(ctx context.Context, userID string) (*quire.TOTP, error) {
	if hasNUL(userID) {
		return nil, notFound("totp")
	}
	t := quire.TOTP{UserID: userID}
	var confirmed *time.Time
	err := db.pool.QueryRow(ctx, `SELECT secret, created_at, confirmed_at, last_step FROM mfa_totp WHERE user_id = $1`,
		userID).Scan(&t.Secret, &t.CreatedAt, &confirmed, &t.LastStep)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("totp")
	}
	if err != nil {
		return nil, db.fail(ctx, "read totp", err)
	}
	t.CreatedAt, t.ConfirmedAt = t.CreatedAt.UTC(), timeOf(confirmed)
	return &t, nil
}

// errMFAEnabled refuses a new set-up while a TOTP is on.
var errMFAEnabled = quire.Errorf(quire.EMFAENABLED, "A second factor is already on: switch it off first")

func (db *DB) BeginTOTP(ctx context.Context, t *quire.TOTP) error {
	if len(t.Secret) == 0 {
		return errors.New("begin totp: empty secret")
	}
	if hasNUL(t.UserID) {
		return notFound("user")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO mfa_totp (user_id, secret, created_at, confirmed_at, last_step)
			VALUES ($1, $2, $3, NULL, 0)
			ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = 0
			WHERE mfa_totp.confirmed_at IS NULL`, t.UserID, t.Secret, micro(t.CreatedAt))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errMFAEnabled
		}
		return nil
	})
	return db.fail(ctx, "begin totp", err)
}

func (db *DB) ConfirmTOTP(ctx context.Context, userID string, secret []byte, step int64, codeHashes [][]byte, now time.Time) error {
	if hasNUL(userID) {
		return notFound("totp set-up")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE mfa_totp SET confirmed_at = $1, last_step = $2
			WHERE user_id = $3 AND secret = $4 AND confirmed_at IS NULL`, micro(now), step, userID, secret)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("totp set-up")
		}
		if _, err := tx.Exec(ctx, `DELETE FROM mfa_recovery_codes WHERE user_id = $1`, userID); err != nil {
			return err
		}
		for _, h := range codeHashes {
			if _, err := tx.Exec(ctx, `INSERT INTO mfa_recovery_codes (id, user_id, code_hash) VALUES ($1, $2, $3)`,
				newID(), userID, h); err != nil {
				return err
			}
		}
		return nil
	})
	return db.fail(ctx, "confirm totp", err)
}

// affected runs one conditional write and reports whether it matched a row.
func (db *DB) affected(ctx context.Context, what, query string, args ...any) (bool, error) {
	tag, err := db.exec(ctx, "", query, args...)
	if err != nil {
		return false, db.fail(ctx, what, err)
	}
	return tag.RowsAffected() > 0, nil
}

func (db *DB) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	if hasNUL(userID) {
		return false, nil
	}
	return db.affected(ctx, "use totp step", `UPDATE mfa_totp SET last_step = $1
		WHERE user_id = $2 AND confirmed_at IS NOT NULL AND last_step < $1`, step, userID)
}

func (db *DB) RecoveryCodes(ctx context.Context, userID string) ([]quire.RecoveryCode, error) {
	if hasNUL(userID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, code_hash FROM mfa_recovery_codes
		WHERE user_id = $1 AND used_at IS NULL ORDER BY id`, userID)
	if err != nil {
		return nil, db.fail(ctx, "recovery codes", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.RecoveryCode, error) {
		var c quire.RecoveryCode
		err := row.Scan(&c.ID, &c.CodeHash)
		return c, err
	})
	return out, db.fail(ctx, "recovery codes", err)
}

func (db *DB) UseRecoveryCode(ctx context.Context, userID, codeID string, now time.Time) (bool, error) {
	if hasNUL(userID, codeID) {
		return false, nil
	}
	return db.affected(ctx, "use recovery code", `UPDATE mfa_recovery_codes SET used_at = $1
		WHERE id = $2 AND user_id = $3 AND used_at IS NULL`, micro(now), codeID, userID)
}

func (db *DB) DeleteTOTP(ctx context.Context, userID string) (bool, error) {
	if hasNUL(userID) {
		return false, nil
	}
	var had bool
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var confirmed *time.Time
		err := tx.QueryRow(ctx, `DELETE FROM mfa_totp WHERE user_id = $1 RETURNING confirmed_at`, userID).Scan(&confirmed)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			had = confirmed != nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM mfa_recovery_codes WHERE user_id = $1`, userID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM mfa_tokens WHERE user_id = $1`, userID); err != nil {
			return err
		}
		if !had {
			quire.Unchanged(db.events)
		}
		return nil
	})
	return had, db.fail(ctx, "delete totp", err)
}

func (db *DB) CreateMFAToken(ctx context.Context, t *quire.MFAToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("create mfa token: empty token hash")
	}
	if err := noNUL(map[string]string{"timezone": t.Timezone}); err != nil {
		return err
	}
	id := newID()
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM mfa_tokens WHERE user_id = $1 AND (used_at IS NOT NULL OR expires_at <= $2)`,
			t.UserID, micro(t.CreatedAt)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO mfa_tokens (id, user_id, token_hash, timezone, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)`,
			id, t.UserID, t.TokenHash, t.Timezone, micro(t.CreatedAt), micro(t.ExpiresAt))
		return err
	})
	if err != nil {
		return db.fail(ctx, "create mfa token", err)
	}
	t.ID = id
	return nil
}

func (db *DB) MFATokenByHash(ctx context.Context, hash []byte) (*quire.MFAToken, error) {
	var (
		t    quire.MFAToken
		used *time.Time
	)
	err := db.pool.QueryRow(ctx, `SELECT id, user_id, token_hash, timezone, created_at, expires_at, used_at, tries
		FROM mfa_tokens WHERE token_hash = $1`, hash).
		Scan(&t.ID, &t.UserID, &t.TokenHash, &t.Timezone, &t.CreatedAt, &t.ExpiresAt, &used, &t.Tries)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("mfa token")
	}
	if err != nil {
		return nil, db.fail(ctx, "read mfa token", err)
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC(), timeOf(used)
	return &t, nil
}

func (db *DB) TryMFAToken(ctx context.Context, id string, now time.Time, max int) (bool, error) {
	if hasNUL(id) {
		return false, nil
	}
	return db.affected(ctx, "try mfa token", `UPDATE mfa_tokens SET tries = tries + 1
		WHERE id = $1 AND used_at IS NULL AND expires_at > $2 AND tries < $3`, id, micro(now), max)
}

func (db *DB) UseMFAToken(ctx context.Context, id string, now time.Time) (bool, error) {
	if hasNUL(id) {
		return false, nil
	}
	return db.affected(ctx, "use mfa token", `UPDATE mfa_tokens SET used_at = $1 WHERE id = $2 AND used_at IS NULL`,
		micro(now), id)
}

// WithdrawLoginAttempt (quire.LoginGuard) is here rather than in
// limits.go: the two-step sign-in is its only caller.
func (db *DB) WithdrawLoginAttempt(ctx context.Context, attemptID string) error {
	if hasNUL(attemptID) {
		return nil
	}
	_, err := db.pool.Exec(ctx, `DELETE FROM login_failures WHERE id = $1`, attemptID)
	return db.fail(ctx, "withdraw login attempt", err)
}
