package sqlstore

import (
	"context"
	"fmt"
	"time"

	"quire"
)

// Sessions and API tokens are both credentials: a row of a user's, found by
// the hash of its secret, revoked alone or with all the user's.

func (s *Store) CreateSession(ctx context.Context, sess *quire.Session) error {
	id, err := s.insertCredential(ctx, "session", sess.TokenHash, `INSERT INTO sessions
		(id, user_id, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sess.UserID, sess.TokenHash, s.d.Time(sess.CreatedAt), s.d.Time(sess.ExpiresAt), s.d.Time(sess.LastUsedAt),
		s.d.Time(sess.RevokedAt), sess.IP, sess.UserAgent)
	if err == nil {
		sess.ID = id
	}
	return err
}

// insertCredential inserts a session or an API token (what) under a new
// id, the first value of query, named in the events the store records
// (quire.NameCreated), and returns the id.
func (s *Store) insertCredential(ctx context.Context, what string, hash []byte, query string, args ...any) (string, error) {
	if len(hash) == 0 {
		return "", fmt.Errorf("create %s: empty token hash", what)
	}
	id := NewID()
	quire.NameCreated(s.e.Events(), id)
	_, err := s.e.ExecOne(ctx, "", query, append([]any{id}, args...)...)
	return id, s.e.Fail(ctx, "create "+what, err)
}

func (s *Store) SessionByTokenHash(ctx context.Context, hash []byte) (*quire.Session, *quire.User, error) {
	var sess quire.Session
	user, err := s.credentialByHash(ctx, "session", "sessions", "t.id, t.token_hash", hash,
		&sess.ID, &sess.TokenHash, T(&sess.CreatedAt), T(&sess.ExpiresAt), T(&sess.LastUsedAt), T(&sess.RevokedAt))
	if err != nil {
		return nil, nil, err
	}
	sess.UserID = user.ID
	return &sess, user, nil
}

// credentialByHash reads a session or an API token (what, in table) and
// its user in one query through the unique index of token_hash, so that
// the role and department are those of this moment, whichever node changed
// them. dest receives cols (of alias t) and then the credential's times.
func (s *Store) credentialByHash(ctx context.Context, what, table, cols string, hash []byte, dest ...any) (*quire.User, error) {
	user, err := scanUser(s.e.Read().QueryRow(ctx, `SELECT `+cols+`, t.created_at, t.expires_at, t.last_used_at, t.revoked_at,
		`+userColumns+`
		FROM `+table+` t
		JOIN users u ON u.id = t.user_id
		`+userJoins+`
		WHERE t.token_hash = ?`, hash).Scan, dest...)
	return user, s.e.Fail(ctx, "read "+what, Found(err, what))
}

// TouchSession never moves the last-use time backwards, so that two nodes
// touching the same session with slightly different clocks keep the later.
// ENOTFOUND for an unknown session.
func (s *Store) TouchSession(ctx context.Context, sessionID string, at time.Time) error {
	return s.updateOne(ctx, "session", sessionID, `UPDATE sessions SET last_used_at = `+s.d.Greatest+`(last_used_at, ?)
		WHERE id = ?`, s.d.Time(at), sessionID)
}

// RevokeSession keeps the first revocation time of a session revoked twice.
// ENOTFOUND for an unknown session.
func (s *Store) RevokeSession(ctx context.Context, sessionID string, at time.Time) error {
	return s.updateOne(ctx, "session", sessionID, `UPDATE sessions SET revoked_at = CASE WHEN `+s.d.None("revoked_at")+` THEN ? ELSE revoked_at END
		WHERE id = ?`, s.d.Time(at), sessionID)
}

func (s *Store) RevokeUserSession(ctx context.Context, userID, sessionID string, at time.Time) error {
	return s.revokeCredential(ctx, "session", "sessions", userID, sessionID, at)
}

// revokeCredential revokes the session or API token id of userID (what,
// in table), while it is valid; ENOTFOUND otherwise.
func (s *Store) revokeCredential(ctx context.Context, what, table, userID, id string, at time.Time) error {
	return s.updateOne(ctx, what, userID+id, `UPDATE `+table+` SET revoked_at = ?
		WHERE id = ? AND user_id = ? AND `+s.d.None("revoked_at")+` AND expires_at > ?`, s.d.Time(at), id, userID, s.d.Time(at))
}

func (s *Store) updateOne(ctx context.Context, what, key, query string, args ...any) error {
	return UpdateOne(ctx, s.e, what, key, query, args...)
}

// UserSessions lists sessions as APITokens lists tokens.
func (s *Store) UserSessions(ctx context.Context, userID string, now time.Time) ([]quire.Session, error) {
	return listCredentials(ctx, s, "sessions", "id", userID, now, func(scan func(dest ...any) error) (quire.Session, error) {
		sess := quire.Session{UserID: userID}
		err := scan(&sess.ID, T(&sess.CreatedAt), T(&sess.ExpiresAt), T(&sess.LastUsedAt), &sess.IP, &sess.UserAgent)
		return sess, err
	})
}

// listCredentials lists the sessions or API tokens (table) of userID
// neither revoked nor expired at now, newest first. scan reads cols, then
// the times of creation, expiry and last use, the address and browser.
func listCredentials[C any](ctx context.Context, s *Store, table, cols, userID string, now time.Time,
	scan func(scan func(dest ...any) error) (C, error)) ([]C, error) {
	if HasNUL(userID) {
		return nil, nil
	}
	out, err := Collect(ctx, s.e.Read(), scan, `SELECT `+cols+`, created_at, expires_at, last_used_at, ip, user_agent
		FROM `+table+` WHERE user_id = ? AND `+s.d.None("revoked_at")+` AND expires_at > ?
		ORDER BY created_at DESC, id DESC`, userID, s.d.Time(now))
	return out, s.e.Fail(ctx, "list "+table, err)
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
	return s.revokeCredentials(ctx, q, "sessions", userID, except, at)
}

// revokeCredentials revokes, in q, every session or API token (table) of
// userID still valid but except ("" for none).
func (s *Store) revokeCredentials(ctx context.Context, q Q, table, userID, except string, at time.Time) error {
	if HasNUL(userID) {
		return nil // no such user
	}
	if HasNUL(except) {
		except = "" // no such credential
	}
	_, err := q.Exec(ctx, `UPDATE `+table+` SET revoked_at = ? WHERE user_id = ? AND id <> ? AND `+s.d.None("revoked_at"),
		s.d.Time(at), userID, except)
	return err
}
