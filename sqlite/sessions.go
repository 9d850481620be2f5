package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.SessionStore = (*DB)(nil)

func (db *DB) CreateSession(ctx context.Context, s *quire.Session) error {
	if len(s.TokenHash) == 0 {
		return errors.New("create session: empty token hash")
	}
	id := newID()
	_, err := db.exec(ctx, `INSERT INTO sessions
		(id, user_id, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, s.UserID, s.TokenHash, toMicros(s.CreatedAt), toMicros(s.ExpiresAt), toMicros(s.LastUsedAt), toMicros(s.RevokedAt),
		s.IP, s.UserAgent)
	if err != nil {
		return fmt.Errorf("create session: %w", db.noteWrite(err))
	}
	db.noteChange()
	s.ID = id
	return nil
}

// SessionByTokenHash reads the session and its user in one query, so the
// role and department are those of this moment.
func (db *DB) SessionByTokenHash(ctx context.Context, hash []byte) (*quire.Session, *quire.User, error) {
	var (
		s                                   quire.Session
		created, expires, lastUsed, revoked int64
	)
	user, err := scanUser(func(dest ...any) error {
		dest = append([]any{&s.ID, &s.TokenHash, &created, &expires, &lastUsed, &revoked}, dest...)
		return cachedQuerier{c: db.reads}.QueryRowContext(ctx, `SELECT s.id, s.token_hash, s.created_at, s.expires_at, s.last_used_at, s.revoked_at,
			`+userColumns+`
			FROM sessions s
			JOIN users u ON u.id = s.user_id
			`+userJoins+`
			WHERE s.token_hash = ?`, hash).Scan(dest...)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, notFound("session")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read session: %w", err)
	}
	s.UserID = user.ID
	s.CreatedAt, s.ExpiresAt = fromMicros(created), fromMicros(expires)
	s.LastUsedAt, s.RevokedAt = fromMicros(lastUsed), fromMicros(revoked)
	return &s, user, nil
}

// TouchSession never moves the last-use time backwards, so that two nodes
// touching the same session with slightly different clocks keep the later.
// ENOTFOUND for an unknown session.
func (db *DB) TouchSession(ctx context.Context, sessionID string, at time.Time) error {
	return db.updateSession(ctx, `UPDATE sessions SET last_used_at = max(last_used_at, ?) WHERE id = ?`,
		toMicros(at), sessionID)
}

// RevokeSession keeps the first revocation time of a session revoked twice.
// ENOTFOUND for an unknown session.
func (db *DB) RevokeSession(ctx context.Context, sessionID string, at time.Time) error {
	return db.updateSession(ctx, `UPDATE sessions SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END
		WHERE id = ?`, toMicros(at), sessionID)
}

// updateSession runs one statement on a session; for a recording store in
// a transaction of the committer, so that its events (auth.logout) are
// written with the change, and not when no session was changed.
func (db *DB) updateSession(ctx context.Context, query string, args ...any) error {
	if len(db.events) == 0 {
		return updateOne(ctx, db.write, "session", query, args...)
	}
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "session", query, args...)
	})
}

func (db *DB) RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error { return revokeSessions(ctx, tx, userID, except, at) })
}

// revokeSessions revokes, inside tx, every session of userID still valid
// except the session except ("" for none). Other stores' transactions that
// must revoke sessions (RedeemToken) use it too.
func revokeSessions(ctx context.Context, tx *sql.Tx, userID, except string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND id <> ? AND revoked_at = 0`,
		toMicros(at), userID, except)
	if err != nil {
		return fmt.Errorf("revoke sessions: %w", err)
	}
	return nil
}
