package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.SSOStore = (*DB)(nil)

// pruneFlows bounds the expired flows one new flow deletes, so that a new
// sign-in never pays for a backlog at once.
const pruneFlows = 64

var errIdentityLinked = &quire.Error{Code: quire.ECONFLICT, Message: "That account of the identity provider is linked already"}

func (db *DB) CreateSSOFlow(ctx context.Context, f *quire.SSOFlow, max int) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sso_flows WHERE state_hash IN
			(SELECT state_hash FROM sso_flows WHERE expires_at < ? ORDER BY expires_at LIMIT ?)`,
			toMicros(f.CreatedAt), pruneFlows); err != nil {
			return fmt.Errorf("prune sso flows: %w", err)
		}
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sso_flows`).Scan(&n); err != nil {
				return fmt.Errorf("count sso flows: %w", err)
			}
			if n >= max {
				if _, err := tx.ExecContext(ctx, `DELETE FROM sso_flows WHERE state_hash IN
					(SELECT state_hash FROM sso_flows ORDER BY expires_at LIMIT ?)`, n-max+1); err != nil {
					return fmt.Errorf("make room for an sso flow: %w", err)
				}
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sso_flows (state_hash, nonce, verifier, next, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, f.StateHash, f.Nonce, f.Verifier, f.Next, toMicros(f.CreatedAt), toMicros(f.ExpiresAt))
		if isUnique(err) {
			return quire.Errorf(quire.ECONFLICT, "sso flow exists")
		}
		if err != nil {
			return fmt.Errorf("create sso flow: %w", err)
		}
		return nil
	})
}

// TakeSSOFlow deletes the row and reads it back in one statement: of two
// callers, the second finds nothing to delete.
func (db *DB) TakeSSOFlow(ctx context.Context, stateHash []byte, now time.Time) (*quire.SSOFlow, error) {
	var (
		f                quire.SSOFlow
		created, expires int64
	)
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `DELETE FROM sso_flows WHERE state_hash = ?
			RETURNING state_hash, nonce, verifier, next, created_at, expires_at`, stateHash).
			Scan(&f.StateHash, &f.Nonce, &f.Verifier, &f.Next, &created, &expires)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("sign-in")
	}
	if err != nil {
		return nil, fmt.Errorf("take sso flow: %w", err)
	}
	f.CreatedAt, f.ExpiresAt = fromMicros(created), fromMicros(expires)
	if !now.Before(f.ExpiresAt) {
		return nil, notFound("sign-in")
	}
	return &f, nil
}

func (db *DB) IdentityUser(ctx context.Context, issuer, subject string) (*quire.User, error) {
	u, err := scanUser(db.read.QueryRowContext(ctx, userSelect+
		` JOIN sso_identities i ON i.user_id = u.id WHERE i.issuer = ? AND i.subject = ?`, issuer, subject).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("identity")
	}
	if err != nil {
		return nil, fmt.Errorf("read identity: %w", err)
	}
	return u, nil
}

func (db *DB) LinkIdentity(ctx context.Context, id *quire.Identity) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return linkIdentity(ctx, tx, id, id.UserID)
	})
}

func (db *DB) CreateUserWithIdentity(ctx context.Context, u *quire.User, id *quire.Identity) error {
	return db.createUser(ctx, u, func(ctx context.Context, tx *sql.Tx, userID string) error {
		quire.NameCreated(db.events, userID)
		return linkIdentity(ctx, tx, id, userID)
	})
}

func (db *DB) AcceptInvitationWithIdentity(ctx context.Context, userID string, id *quire.Identity, now time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET status = 'active', updated_at = ? WHERE id = ? AND status = 'invited'`,
			toMicros(now), userID)
		if err != nil {
			return fmt.Errorf("accept invitation: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("accept invitation: %w", err)
		} else if n == 0 {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = ?`, userID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return notFound("user")
			}
			if err != nil {
				return fmt.Errorf("accept invitation: %w", err)
			}
			return quire.Errorf(quire.ECONFLICT, "the user is not invited")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE one_time_tokens SET used_at = ? WHERE user_id = ? AND used_at = 0`,
			toMicros(now), userID); err != nil {
			return fmt.Errorf("void tokens: %w", err)
		}
		if id == nil {
			return nil
		}
		if err := linkIdentity(ctx, tx, id, userID); err != nil {
			return err
		}
		id.UserID = userID
		return nil
	})
}

// linkIdentity inserts id for userID, through a SELECT of the user so that
// an unknown user inserts nothing (ENOTFOUND) rather than failing the
// foreign key.
func linkIdentity(ctx context.Context, tx *sql.Tx, id *quire.Identity, userID string) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO sso_identities (issuer, subject, user_id, email, created_at)
		SELECT ?, ?, id, ?, ? FROM users WHERE id = ?`,
		id.Issuer, id.Subject, id.Email, toMicros(id.CreatedAt), userID)
	if isUnique(err) {
		return errIdentityLinked
	}
	if err != nil {
		return fmt.Errorf("link identity: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("link identity: %w", err)
	} else if n == 0 {
		return notFound("user")
	}
	id.UserID = userID
	return nil
}
