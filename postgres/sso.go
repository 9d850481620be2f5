package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.SSOStore = (*DB)(nil)

// pruneFlows bounds the expired flows one new flow deletes, so that a new
// sign-in never pays for a backlog at once.
const pruneFlows = 64

var errIdentityLinked = &quire.Error{Code: quire.ECONFLICT, Message: "That account of the identity provider is linked already"}

func (db *DB) CreateSSOFlow(ctx context.Context, f *quire.SSOFlow, max int) error {
	if hasNUL(f.Nonce, f.Verifier, f.Next) {
		return quire.Invalid(map[string]string{"next": "must not contain NUL"})
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM sso_flows WHERE state_hash IN
			(SELECT state_hash FROM sso_flows WHERE expires_at < $1 ORDER BY expires_at LIMIT $2
			FOR UPDATE SKIP LOCKED)`, micro(f.CreatedAt), pruneFlows); err != nil {
			return err
		}
		if max > 0 {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM sso_flows`).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				if _, err := tx.Exec(ctx, `DELETE FROM sso_flows WHERE state_hash IN
					(SELECT state_hash FROM sso_flows ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`, n-max+1); err != nil {
					return err
				}
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO sso_flows (state_hash, nonce, verifier, next, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, f.StateHash, f.Nonce, f.Verifier, f.Next, micro(f.CreatedAt), micro(f.ExpiresAt))
		if code, _ := pgCode(err); code == codeUnique {
			return quire.Errorf(quire.ECONFLICT, "sso flow exists")
		}
		return err
	})
	return db.fail(ctx, "create sso flow", err)
}

// TakeSSOFlow deletes the row and reads it back in one statement: of two
// callers on any nodes, the second finds nothing to delete.
func (db *DB) TakeSSOFlow(ctx context.Context, stateHash []byte, now time.Time) (*quire.SSOFlow, error) {
	var f quire.SSOFlow
	err := db.pool.QueryRow(ctx, `DELETE FROM sso_flows WHERE state_hash = $1
		RETURNING state_hash, nonce, verifier, next, created_at, expires_at`, stateHash).
		Scan(&f.StateHash, &f.Nonce, &f.Verifier, &f.Next, &f.CreatedAt, &f.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("sign-in")
	}
	if err != nil {
		return nil, db.fail(ctx, "take sso flow", err)
	}
	f.CreatedAt, f.ExpiresAt = f.CreatedAt.UTC(), f.ExpiresAt.UTC()
	if !now.Before(f.ExpiresAt) {
		return nil, notFound("sign-in")
	}
	return &f, nil
}

func (db *DB) IdentityUser(ctx context.Context, issuer, subject string) (*quire.User, error) {
	if hasNUL(issuer, subject) {
		return nil, notFound("identity")
	}
	u, err := scanUser(db.pool.QueryRow(ctx, userSelect+
		` JOIN sso_identities i ON i.user_id = u.id WHERE i.issuer = $1 AND i.subject = $2`, issuer, subject).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("identity")
	}
	return u, db.fail(ctx, "read identity", err)
}

func (db *DB) LinkIdentity(ctx context.Context, id *quire.Identity) error {
	if hasNUL(id.UserID) {
		return notFound("user")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error { return linkIdentity(ctx, tx, id, id.UserID) })
	return db.fail(ctx, "link identity", err)
}

func (db *DB) CreateUserWithIdentity(ctx context.Context, u *quire.User, id *quire.Identity) error {
	if hasNUL(id.Issuer, id.Subject, id.Email) {
		return quire.Invalid(map[string]string{"sub": "must not contain NUL"})
	}
	return db.createUser(ctx, u, func(tx pgx.Tx, userID string) error {
		quire.NameCreated(db.events, userID)
		return linkIdentity(ctx, tx, id, userID)
	})
}

func (db *DB) AcceptInvitationWithIdentity(ctx context.Context, userID string, id *quire.Identity, now time.Time) error {
	if hasNUL(userID) {
		return notFound("user")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE users SET status = 'active', updated_at = $1 WHERE id = $2 AND status = 'invited'`,
			micro(now), userID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1)`, userID).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				return notFound("user")
			}
			return quire.Errorf(quire.ECONFLICT, "the user is not invited")
		}
		if _, err := tx.Exec(ctx, `UPDATE one_time_tokens SET used_at = $1 WHERE user_id = $2 AND used_at IS NULL`,
			micro(now), userID); err != nil {
			return err
		}
		if id == nil {
			return nil
		}
		return linkIdentity(ctx, tx, id, userID)
	})
	return db.fail(ctx, "accept invitation", err)
}

// linkIdentity inserts id for userID, through a SELECT of the user so that
// an unknown user inserts nothing (ENOTFOUND) rather than failing the
// foreign key.
func linkIdentity(ctx context.Context, tx pgx.Tx, id *quire.Identity, userID string) error {
	if hasNUL(id.Issuer, id.Subject, id.Email) {
		return quire.Invalid(map[string]string{"sub": "must not contain NUL"})
	}
	tag, err := tx.Exec(ctx, `INSERT INTO sso_identities (issuer, subject, user_id, email, created_at)
		SELECT $1, $2, id, $3, $4 FROM users WHERE id = $5`,
		id.Issuer, id.Subject, id.Email, micro(id.CreatedAt), userID)
	if code, _ := pgCode(err); code == codeUnique {
		return errIdentityLinked
	}
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("user")
	}
	id.UserID = userID
	return nil
}
