package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.SessionStore = (*DB)(nil)

func (db *DB) CreateSession(ctx context.Context, s *quire.Session) error {
	if len(s.TokenHash) == 0 {
		return errors.New("create session: empty token hash")
	}
	id := newID()
	_, err := db.exec(ctx, "", `INSERT INTO sessions
		(id, user_id, token_hash, created_at, expires_at, last_used_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		id, s.UserID, s.TokenHash, micro(s.CreatedAt), micro(s.ExpiresAt), micro(s.LastUsedAt), nullTime(s.RevokedAt))
	if err != nil {
		return db.fail(ctx, "create session", err)
	}
	s.ID = id
	return nil
}

// SessionByTokenHash reads the session and its user in one query, so the
// role and department are those of this moment, whichever node changed
// them.
func (db *DB) SessionByTokenHash(ctx context.Context, hash []byte) (*quire.Session, *quire.User, error) {
	var (
		s       quire.Session
		revoked *time.Time
	)
	user, err := scanUser(func(dest ...any) error {
		dest = append([]any{&s.ID, &s.TokenHash, &s.CreatedAt, &s.ExpiresAt, &s.LastUsedAt, &revoked}, dest...)
		return db.pool.QueryRow(ctx, `SELECT s.id, s.token_hash, s.created_at, s.expires_at, s.last_used_at, s.revoked_at,
			`+userColumns+`
			FROM sessions s
			JOIN users u ON u.id = s.user_id
			`+userJoins+`
			WHERE s.token_hash = $1`, hash).Scan(dest...)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, notFound("session")
	}
	if err != nil {
		return nil, nil, db.fail(ctx, "read session", err)
	}
	s.UserID = user.ID
	s.CreatedAt, s.ExpiresAt, s.LastUsedAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC(), s.LastUsedAt.UTC()
	s.RevokedAt = timeOf(revoked)
	return &s, user, nil
}

// TouchSession never moves the last-use time backwards, so that two nodes
// touching the same session with slightly different clocks keep the later.
// ENOTFOUND for an unknown session.
func (db *DB) TouchSession(ctx context.Context, sessionID string, at time.Time) error {
	return db.updateSession(ctx, sessionID, `UPDATE sessions SET last_used_at = greatest(last_used_at, $1) WHERE id = $2`,
		micro(at), sessionID)
}

// RevokeSession keeps the first revocation time of a session revoked twice.
// ENOTFOUND for an unknown session.
func (db *DB) RevokeSession(ctx context.Context, sessionID string, at time.Time) error {
	return db.updateSession(ctx, sessionID, `UPDATE sessions SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`,
		micro(at), sessionID)
}

func (db *DB) updateSession(ctx context.Context, sessionID, query string, args ...any) error {
	if hasNUL(sessionID) {
		return notFound("session")
	}
	_, err := db.exec(ctx, "session", query, args...)
	return db.fail(ctx, "update session", err)
}

func (db *DB) RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error {
	return db.fail(ctx, "revoke sessions", revokeSessions(ctx, db.pool, userID, except, at))
}

// revokeSessions revokes every session of userID still valid except the
// session except ("" for none). Transactions that must revoke sessions with
// other writes (DisableUser, RedeemToken) pass their tx.
func revokeSessions(ctx context.Context, q querier, userID, except string, at time.Time) error {
	if hasNUL(userID) {
		return nil // no such user
	}
	if hasNUL(except) {
		except = "" // no such session
	}
	_, err := q.Exec(ctx, `UPDATE sessions SET revoked_at = $1 WHERE user_id = $2 AND id <> $3 AND revoked_at IS NULL`,
		micro(at), userID, except)
	return err
}
