package sqlstore

import (
	"context"
	"errors"
	"time"

	"quire"
)

func (s *Store) CreateSession(ctx context.Context, sess *quire.Session) error {
	if len(sess.TokenHash) == 0 {
		return errors.New("create session: empty token hash")
	}
	id := NewID()
	_, err := s.e.ExecOne(ctx, "", `INSERT INTO sessions
		(id, user_id, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, sess.UserID, sess.TokenHash, s.d.Time(sess.CreatedAt), s.d.Time(sess.ExpiresAt), s.d.Time(sess.LastUsedAt),
		s.d.Time(sess.RevokedAt), sess.IP, sess.UserAgent)
	if err != nil {
		return s.e.Fail(ctx, "create session", err)
	}
	sess.ID = id
	return nil
}

// SessionByTokenHash reads the session and its user in one query, so the
// role and department are those of this moment, whichever node changed
// them.
func (s *Store) SessionByTokenHash(ctx context.Context, hash []byte) (*quire.Session, *quire.User, error) {
	var sess quire.Session
	user, err := scanUser(s.e.Read().QueryRow(ctx, `SELECT s.id, s.token_hash, s.created_at, s.expires_at, s.last_used_at, s.revoked_at,
		`+userColumns+`
		FROM sessions s
		JOIN users u ON u.id = s.user_id
		`+userJoins+`
		WHERE s.token_hash = ?`, hash).Scan,
		&sess.ID, &sess.TokenHash, T(&sess.CreatedAt), T(&sess.ExpiresAt), T(&sess.LastUsedAt), T(&sess.RevokedAt))
	if errors.Is(err, ErrNoRows) {
		return nil, nil, NotFound("session")
	}
	if err != nil {
		return nil, nil, s.e.Fail(ctx, "read session", err)
	}
	sess.UserID = user.ID
	return &sess, user, nil
}

// TouchSession never moves the last-use time backwards, so that two nodes
// touching the same session with slightly different clocks keep the later.
// ENOTFOUND for an unknown session.
func (s *Store) TouchSession(ctx context.Context, sessionID string, at time.Time) error {
	return s.updateSession(ctx, sessionID, `UPDATE sessions SET last_used_at = `+s.d.Greatest+`(last_used_at, ?) WHERE id = ?`,
		s.d.Time(at), sessionID)
}

// RevokeSession keeps the first revocation time of a session revoked twice.
// ENOTFOUND for an unknown session.
func (s *Store) RevokeSession(ctx context.Context, sessionID string, at time.Time) error {
	return s.updateSession(ctx, sessionID, `UPDATE sessions SET revoked_at = CASE WHEN `+s.d.None("revoked_at")+` THEN ? ELSE revoked_at END
		WHERE id = ?`, s.d.Time(at), sessionID)
}

// updateSession runs one statement on a session; for a recording store in
// a transaction, so that its events (auth.logout) are written with the
// change, and not when no session was changed.
func (s *Store) updateSession(ctx context.Context, sessionID, query string, args ...any) error {
	if HasNUL(sessionID) {
		return NotFound("session")
	}
	_, err := s.e.ExecOne(ctx, "session", query, args...)
	return s.e.Fail(ctx, "update session", err)
}

// RevokeUserSessions runs in a transaction, which writes the events the
// store records.
func (s *Store) RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error {
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error { return s.revokeSessions(ctx, q, userID, except, at) })
	return s.e.Fail(ctx, "revoke sessions", err)
}

// revokeSessions revokes, in q, every session of userID still valid except
// the session except ("" for none). Transactions that must revoke sessions
// with other writes (DisableUser, RedeemToken) use it.
func (s *Store) revokeSessions(ctx context.Context, q Q, userID, except string, at time.Time) error {
	if HasNUL(userID) {
		return nil // no such user
	}
	if HasNUL(except) {
		except = "" // no such session
	}
	_, err := q.Exec(ctx, `UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND id <> ? AND `+s.d.None("revoked_at"),
		s.d.Time(at), userID, except)
	return err
}
