// Package authsql is the store of sign-in, written once for SQLite and
// PostgreSQL on a sqlstore.Engine: sessions, API tokens, one-time tokens and
// the login limits. Package auth holds the rules; the engines embed this
// through stores.Set.
package authsql

import (
	"context"
	"fmt"
	"time"

	"quire"
	"quire/sqlstore"
)

// Sessions and API tokens are both credentials: a row of a user's, found by
// the hash of its secret, revoked alone or with all the user's.

func (s *AuthSQL) CreateSession(ctx context.Context, sess *quire.Session) error {
	id, err := s.insertCredential(ctx, "session", sess.TokenHash, `INSERT INTO sessions
		(id, user_id, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sess.UserID, sess.TokenHash, s.D.Time(sess.CreatedAt), s.D.Time(sess.ExpiresAt), s.D.Time(sess.LastUsedAt),
		s.D.Time(sess.RevokedAt), sess.IP, sess.UserAgent)
	if err == nil {
		sess.ID = id
	}
	return err
}

// insertCredential inserts a session or an API token (what) under a new
// id, the first value of query, named in the events the store records
// (quire.NameCreated), and returns the id.
func (s *AuthSQL) insertCredential(ctx context.Context, what string, hash []byte, query string, args ...any) (string, error) {
	if len(hash) == 0 {
		return "", fmt.Errorf("create %s: empty token hash", what)
	}
	id := sqlstore.NewID()
	quire.NameCreated(s.E.Events(), id)
	_, err := s.E.ExecOne(ctx, "", query, append([]any{id}, args...)...)
	return id, s.E.Fail(ctx, "create "+what, err)
}

func (s *AuthSQL) SessionByTokenHash(ctx context.Context, hash []byte) (*quire.Session, *quire.User, error) {
	var sess quire.Session
	user, err := s.credentialByHash(ctx, "session", "sessions", "t.id, t.token_hash", hash,
		&sess.ID, &sess.TokenHash, sqlstore.T(&sess.CreatedAt), sqlstore.T(&sess.ExpiresAt), sqlstore.T(&sess.LastUsedAt), sqlstore.T(&sess.RevokedAt))
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
func (s *AuthSQL) credentialByHash(ctx context.Context, what, table, cols string, hash []byte, dest ...any) (*quire.User, error) {
	user, err := sqlstore.ScanUser(s.E.Read().QueryRow(ctx, `SELECT `+cols+`, t.created_at, t.expires_at, t.last_used_at, t.revoked_at,
		`+sqlstore.UserColumns+`
		FROM `+table+` t
		JOIN users u ON u.id = t.user_id
		`+sqlstore.UserJoins+`
		WHERE t.token_hash = ?`, hash).Scan, dest...)
	return user, s.E.Fail(ctx, "read "+what, sqlstore.Found(err, what))
}

// TouchSession never moves the last-use time backwards, so that two nodes
// touching the same session with slightly different clocks keep the later.
// ENOTFOUND for an unknown session.
func (s *AuthSQL) TouchSession(ctx context.Context, sessionID string, at time.Time) error {
	return sqlstore.UpdateOne(ctx, s.E, "session", sessionID, `UPDATE sessions SET last_used_at = `+s.D.Greatest+`(last_used_at, ?)
		WHERE id = ?`, s.D.Time(at), sessionID)
}

// RevokeSession keeps the first revocation time of a session revoked twice.
// ENOTFOUND for an unknown session.
func (s *AuthSQL) RevokeSession(ctx context.Context, sessionID string, at time.Time) error {
	return sqlstore.UpdateOne(ctx, s.E, "session", sessionID, `UPDATE sessions SET revoked_at = CASE WHEN `+s.D.None("revoked_at")+` THEN ? ELSE revoked_at END
		WHERE id = ?`, s.D.Time(at), sessionID)
}

func (s *AuthSQL) RevokeUserSession(ctx context.Context, userID, sessionID string, at time.Time) error {
	return s.revokeCredential(ctx, "session", "sessions", userID, sessionID, at)
}

// revokeCredential revokes the session or API token id of userID (what,
// in table), while it is valid; ENOTFOUND otherwise.
func (s *AuthSQL) revokeCredential(ctx context.Context, what, table, userID, id string, at time.Time) error {
	return sqlstore.UpdateOne(ctx, s.E, what, userID+id, `UPDATE `+table+` SET revoked_at = ?
		WHERE id = ? AND user_id = ? AND `+s.D.None("revoked_at")+` AND expires_at > ?`, s.D.Time(at), id, userID, s.D.Time(at))
}

// UserSessions lists sessions as APITokens lists tokens.
func (s *AuthSQL) UserSessions(ctx context.Context, userID string, now time.Time) ([]quire.Session, error) {
	return listCredentials(ctx, s, "sessions", "id", userID, now, func(scan func(dest ...any) error) (quire.Session, error) {
		sess := quire.Session{UserID: userID}
		err := scan(&sess.ID, sqlstore.T(&sess.CreatedAt), sqlstore.T(&sess.ExpiresAt), sqlstore.T(&sess.LastUsedAt), &sess.IP, &sess.UserAgent)
		return sess, err
	})
}

// listCredentials lists the sessions or API tokens (table) of userID
// neither revoked nor expired at now, newest first. scan reads cols, then
// the times of creation, expiry and last use, the address and browser.
func listCredentials[C any](ctx context.Context, s *AuthSQL, table, cols, userID string, now time.Time,
	scan func(scan func(dest ...any) error) (C, error)) ([]C, error) {
	if sqlstore.HasNUL(userID) {
		return nil, nil
	}
	out, err := sqlstore.Collect(ctx, s.E.Read(), scan, `SELECT `+cols+`, created_at, expires_at, last_used_at, ip, user_agent
		FROM `+table+` WHERE user_id = ? AND `+s.D.None("revoked_at")+` AND expires_at > ?
		ORDER BY created_at DESC, id DESC`, userID, s.D.Time(now))
	return out, s.E.Fail(ctx, "list "+table, err)
}

// RevokeUserSessions runs in a transaction, which writes the events the
// store records.
func (s *AuthSQL) RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error {
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error { return s.revokeSessions(ctx, q, userID, except, at) })
	return s.E.Fail(ctx, "revoke sessions", err)
}

// revokeSessions revokes, in q, every session of userID still valid except
// the session except ("" for none).
func (s *AuthSQL) revokeSessions(ctx context.Context, q sqlstore.Q, userID, except string, at time.Time) error {
	return sqlstore.RevokeCredentials(ctx, q, s.D, "sessions", userID, except, at)
}

// API tokens are credentials as sessions are (above).

func (s *AuthSQL) CreateAPIToken(ctx context.Context, t *quire.APIToken) error {
	id, err := s.insertCredential(ctx, "api token", t.TokenHash, `INSERT INTO api_tokens
		(id, user_id, name, scope, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.UserID, t.Name, string(t.Scope), t.TokenHash, s.D.Time(t.CreatedAt), s.D.Time(t.ExpiresAt),
		s.D.Time(t.LastUsedAt), s.D.Time(t.RevokedAt), t.IP, t.UserAgent)
	if err == nil {
		t.ID = id
	}
	return err
}

func (s *AuthSQL) APITokenByHash(ctx context.Context, hash []byte) (*quire.APIToken, *quire.User, error) {
	var t quire.APIToken
	user, err := s.credentialByHash(ctx, "api token", "api_tokens", "t.id, t.name, t.scope, t.token_hash", hash,
		&t.ID, &t.Name, (*string)(&t.Scope), &t.TokenHash, sqlstore.T(&t.CreatedAt), sqlstore.T(&t.ExpiresAt), sqlstore.T(&t.LastUsedAt), sqlstore.T(&t.RevokedAt))
	if err != nil {
		return nil, nil, err
	}
	t.UserID = user.ID
	return &t, user, nil
}

func (s *AuthSQL) APITokens(ctx context.Context, userID string, now time.Time) ([]quire.APIToken, error) {
	return listCredentials(ctx, s, "api_tokens", "id, name, scope", userID, now, func(scan func(dest ...any) error) (quire.APIToken, error) {
		t := quire.APIToken{UserID: userID}
		err := scan(&t.ID, &t.Name, (*string)(&t.Scope), sqlstore.T(&t.CreatedAt), sqlstore.T(&t.ExpiresAt), sqlstore.T(&t.LastUsedAt), &t.IP, &t.UserAgent)
		return t, err
	})
}

// TouchAPIToken never moves the last-use time backwards, so that two nodes
// touching the same token with slightly different clocks keep the later.
func (s *AuthSQL) TouchAPIToken(ctx context.Context, tokenID string, at time.Time) error {
	return sqlstore.UpdateOne(ctx, s.E, "api token", tokenID, `UPDATE api_tokens SET last_used_at = `+s.D.Greatest+`(last_used_at, ?)
		WHERE id = ?`, s.D.Time(at), tokenID)
}

// RevokeAPIToken decides ENOTFOUND inside its transaction, so that the
// events it records are written only with a revocation.
func (s *AuthSQL) RevokeAPIToken(ctx context.Context, userID, tokenID string, at time.Time) error {
	return s.revokeCredential(ctx, "api token", "api_tokens", userID, tokenID, at)
}

// revokeAPITokens revokes, in q, every token of userID still valid.
// RedeemToken calls it beside revokeSessions.
func (s *AuthSQL) revokeAPITokens(ctx context.Context, q sqlstore.Q, userID string, at time.Time) error {
	return sqlstore.RevokeCredentials(ctx, q, s.D, "api_tokens", userID, "", at)
}

// AuthSQL is the store of sign-in written once for both engines, which
// embed it: sessions and API tokens (quire.SessionStore,
// quire.APITokenStore), one-time tokens (quire.TokenStore) and the login
// limits (quire.LoginGuard).
type AuthSQL struct{ sqlstore.Base }

// NewSQL returns the store of sign-in on e.
func NewSQL(e sqlstore.Engine) *AuthSQL { return &AuthSQL{sqlstore.NewBase(e)} }

var (
	_ quire.SessionStore  = (*AuthSQL)(nil)
	_ quire.APITokenStore = (*AuthSQL)(nil)
	_ quire.TokenStore    = (*AuthSQL)(nil)
	_ quire.LoginGuard    = (*AuthSQL)(nil)
)
