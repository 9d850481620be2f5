// Package ssosql is the store of single sign-on flows and linked identities,
// written once for SQLite and PostgreSQL on a sqlstore.Engine. Package sso
// holds the rules.
package ssosql

import (
	"context"
	"time"

	"quire"
	"quire/sqlstore"
)

// pruneFlows bounds the expired flows one new flow deletes, so that a new
// sign-in never pays for a backlog at once.
const pruneFlows = 64

var errIdentityLinked = &quire.Error{Code: quire.ECONFLICT, Message: "That account of the identity provider is linked already"}

// CreateSSOFlow prunes and bounds the flows in the transaction of the
// insert; on PostgreSQL the rows another node's prune holds are skipped.
func (s *SSOSQL) CreateSSOFlow(ctx context.Context, f *quire.SSOFlow, max int) error {
	if sqlstore.HasNUL(f.Nonce, f.Verifier, f.Next) {
		return quire.Invalid(map[string]string{"next": sqlstore.MsgNUL})
	}
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if _, err := q.Exec(ctx, `DELETE FROM sso_flows WHERE state_hash IN
			(SELECT state_hash FROM sso_flows WHERE expires_at < ? ORDER BY expires_at LIMIT ?`+s.D.Locked(" FOR UPDATE SKIP LOCKED")+`)`,
			s.D.Time(f.CreatedAt), pruneFlows); err != nil {
			return err
		}
		if max > 0 {
			var n int
			if err := q.QueryRow(ctx, `SELECT count(*) FROM sso_flows`).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				if _, err := q.Exec(ctx, `DELETE FROM sso_flows WHERE state_hash IN
					(SELECT state_hash FROM sso_flows ORDER BY expires_at LIMIT ?`+s.D.Locked(" FOR UPDATE SKIP LOCKED")+`)`, n-max+1); err != nil {
					return err
				}
			}
		}
		_, err := q.Exec(ctx, `INSERT INTO sso_flows (state_hash, nonce, verifier, next, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, f.StateHash, f.Nonce, f.Verifier, f.Next, s.D.Time(f.CreatedAt), s.D.Time(f.ExpiresAt))
		if s.D.IsUnique(err) {
			return quire.Errorf(quire.ECONFLICT, "sso flow exists")
		}
		return err
	})
	return s.E.Fail(ctx, "create sso flow", err)
}

// TakeSSOFlow deletes the row and reads it back in one statement: of two
// callers on any nodes, the second finds nothing to delete.
func (s *SSOSQL) TakeSSOFlow(ctx context.Context, stateHash []byte, now time.Time) (*quire.SSOFlow, error) {
	var f quire.SSOFlow
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		return q.QueryRow(ctx, `DELETE FROM sso_flows WHERE state_hash = ?
			RETURNING state_hash, nonce, verifier, next, created_at, expires_at`, stateHash).
			Scan(&f.StateHash, &f.Nonce, &f.Verifier, &f.Next, sqlstore.T(&f.CreatedAt), sqlstore.T(&f.ExpiresAt))
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "take sso flow", sqlstore.Found(err, "sign-in"))
	}
	if !now.Before(f.ExpiresAt) {
		return nil, sqlstore.NotFound("sign-in")
	}
	return &f, nil
}

func (s *SSOSQL) IdentityUser(ctx context.Context, issuer, subject string) (*quire.User, error) {
	if sqlstore.HasNUL(issuer, subject) {
		return nil, sqlstore.NotFound("identity")
	}
	u, err := sqlstore.ScanUser(s.E.Read().QueryRow(ctx, sqlstore.UserSelect+
		` JOIN sso_identities i ON i.user_id = u.id WHERE i.issuer = ? AND i.subject = ?`, issuer, subject).Scan)
	return u, s.E.Fail(ctx, "read identity", sqlstore.Found(err, "identity"))
}

func (s *SSOSQL) LinkIdentity(ctx context.Context, id *quire.Identity) error {
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error { return s.linkIdentity(ctx, q, id, id.UserID) })
	return s.E.Fail(ctx, "link identity", err)
}

func (s *SSOSQL) AcceptInvitationWithIdentity(ctx context.Context, userID string, id *quire.Identity, now time.Time) error {
	if sqlstore.HasNUL(userID) {
		return sqlstore.NotFound("user")
	}
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		n, err := q.Exec(ctx, `UPDATE users SET status = 'active', updated_at = ? WHERE id = ? AND status = 'invited'`,
			s.D.Time(now), userID)
		if err != nil {
			return err
		}
		if n == 0 {
			var exists bool
			if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)`, userID).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				return sqlstore.NotFound("user")
			}
			return quire.Errorf(quire.ECONFLICT, "the user is not invited")
		}
		if _, err := q.Exec(ctx, `UPDATE one_time_tokens SET used_at = ? WHERE user_id = ? AND `+s.D.None("used_at"),
			s.D.Time(now), userID); err != nil {
			return err
		}
		if id == nil {
			return nil
		}
		return s.linkIdentity(ctx, q, id, userID)
	})
	return s.E.Fail(ctx, "accept invitation", err)
}

func (s *SSOSQL) CreateUserWithIdentity(ctx context.Context, u *quire.User, id *quire.Identity) error {
	return s.users.CreateUserThen(ctx, u, func(ctx context.Context, q sqlstore.Q, userID string) error {
		quire.NameCreated(s.E.Events(), userID)
		return s.linkIdentity(ctx, q, id, userID)
	})
}

// linkIdentity inserts id for userID in q, through a SELECT of the user so
// that an unknown user inserts nothing (ENOTFOUND) rather than failing the
// foreign key, and fills id.UserID.
func (s *SSOSQL) linkIdentity(ctx context.Context, q sqlstore.Q, id *quire.Identity, userID string) error {
	if sqlstore.HasNUL(userID) {
		return sqlstore.NotFound("user")
	}
	if sqlstore.HasNUL(id.Issuer, id.Subject, id.Email) {
		return quire.Invalid(map[string]string{"sub": sqlstore.MsgNUL})
	}
	n, err := q.Exec(ctx, `INSERT INTO sso_identities (issuer, subject, user_id, email, created_at)
		SELECT ?, ?, id, ?, ? FROM users WHERE id = ?`,
		id.Issuer, id.Subject, id.Email, s.D.Time(id.CreatedAt), userID)
	switch {
	case s.D.IsUnique(err):
		return errIdentityLinked
	case err != nil:
		return err
	case n == 0:
		return sqlstore.NotFound("user")
	}
	id.UserID = userID
	return nil
}

// SSOSQL is quire.SSOStore written once for both engines, which embed it.
type SSOSQL struct {
	sqlstore.Base
	// users creates the user an SSO sign-up links its identity to.
	users *sqlstore.Store
}

// NewSQL returns the store of sign-in flows and identities on e.
func NewSQL(e sqlstore.Engine) *SSOSQL { return &SSOSQL{sqlstore.NewBase(e), sqlstore.New(e)} }

var _ quire.SSOStore = (*SSOSQL)(nil)
