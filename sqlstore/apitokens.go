package sqlstore

import (
	"context"
	"errors"
	"time"

	"quire"
)

func (s *Store) CreateAPIToken(ctx context.Context, t *quire.APIToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("create api token: empty token hash")
	}
	id := NewID()
	quire.NameCreated(s.e.(recorder).Events(), id)
	_, err := s.e.ExecOne(ctx, "", `INSERT INTO api_tokens
		(id, user_id, name, scope, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, t.UserID, t.Name, string(t.Scope), t.TokenHash, s.d.Time(t.CreatedAt), s.d.Time(t.ExpiresAt),
		s.d.Time(t.LastUsedAt), s.d.Time(t.RevokedAt), t.IP, t.UserAgent)
	if err != nil {
		return s.e.Fail(ctx, "create api token", err)
	}
	t.ID = id
	return nil
}

// APITokenByHash reads the token and its user in one query through the
// unique index of token_hash, as SessionByTokenHash does for a session.
func (s *Store) APITokenByHash(ctx context.Context, hash []byte) (*quire.APIToken, *quire.User, error) {
	var t quire.APIToken
	user, err := scanUser(s.e.Read().QueryRow(ctx, `SELECT t.id, t.name, t.scope, t.token_hash,
		t.created_at, t.expires_at, t.last_used_at, t.revoked_at,
		`+userColumns+`
		FROM api_tokens t
		JOIN users u ON u.id = t.user_id
		`+userJoins+`
		WHERE t.token_hash = ?`, hash).Scan,
		&t.ID, &t.Name, (*string)(&t.Scope), &t.TokenHash, T(&t.CreatedAt), T(&t.ExpiresAt), T(&t.LastUsedAt), T(&t.RevokedAt))
	if err != nil {
		return nil, nil, s.e.Fail(ctx, "read api token", Found(err, "api token"))
	}
	t.UserID = user.ID
	return &t, user, nil
}

func (s *Store) APITokens(ctx context.Context, userID string, now time.Time) ([]quire.APIToken, error) {
	if HasNUL(userID) {
		return nil, nil
	}
	out, err := Collect(ctx, s.e.Read(), func(scan func(dest ...any) error) (quire.APIToken, error) {
		t := quire.APIToken{UserID: userID}
		err := scan(&t.ID, &t.Name, (*string)(&t.Scope), T(&t.CreatedAt), T(&t.ExpiresAt), T(&t.LastUsedAt), &t.IP, &t.UserAgent)
		return t, err
	}, `SELECT id, name, scope, created_at, expires_at, last_used_at, ip, user_agent
		FROM api_tokens WHERE user_id = ? AND `+s.d.None("revoked_at")+` AND expires_at > ?
		ORDER BY created_at DESC, id DESC`, userID, s.d.Time(now))
	return out, s.e.Fail(ctx, "list api tokens", err)
}

// TouchAPIToken never moves the last-use time backwards, so that two nodes
// touching the same token with slightly different clocks keep the later.
func (s *Store) TouchAPIToken(ctx context.Context, tokenID string, at time.Time) error {
	return s.apiTokensUpdate(ctx, "api token", tokenID, `UPDATE api_tokens SET last_used_at = `+s.d.Greatest+`(last_used_at, ?)
		WHERE id = ?`, s.d.Time(at), tokenID)
}

// RevokeAPIToken decides ENOTFOUND inside its transaction, so that the
// events it records are written only with a revocation.
func (s *Store) RevokeAPIToken(ctx context.Context, userID, tokenID string, at time.Time) error {
	return s.apiTokensUpdate(ctx, "api token", userID+tokenID, `UPDATE api_tokens SET revoked_at = ?
		WHERE id = ? AND user_id = ? AND `+s.d.None("revoked_at")+` AND expires_at > ?`,
		s.d.Time(at), tokenID, userID, s.d.Time(at))
}

// revokeAPITokens revokes, in q, every token of userID still valid. The
// transactions that end a user's credentials (DisableUser, RedeemToken)
// call it beside revokeSessions.
func (s *Store) revokeAPITokens(ctx context.Context, q Q, userID string, at time.Time) error {
	if HasNUL(userID) {
		return nil // no such user
	}
	_, err := q.Exec(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND `+s.d.None("revoked_at"),
		s.d.Time(at), userID)
	return err
}

func (s *Store) UserSessions(ctx context.Context, userID string, now time.Time) ([]quire.Session, error) {
	if HasNUL(userID) {
		return nil, nil
	}
	out, err := Collect(ctx, s.e.Read(), func(scan func(dest ...any) error) (quire.Session, error) {
		sess := quire.Session{UserID: userID}
		err := scan(&sess.ID, T(&sess.CreatedAt), T(&sess.ExpiresAt), T(&sess.LastUsedAt), &sess.IP, &sess.UserAgent)
		return sess, err
	}, `SELECT id, created_at, expires_at, last_used_at, ip, user_agent
		FROM sessions WHERE user_id = ? AND `+s.d.None("revoked_at")+` AND expires_at > ?
		ORDER BY created_at DESC, id DESC`, userID, s.d.Time(now))
	return out, s.e.Fail(ctx, "list sessions", err)
}

func (s *Store) RevokeUserSession(ctx context.Context, userID, sessionID string, at time.Time) error {
	return s.apiTokensUpdate(ctx, "session", userID+sessionID, `UPDATE sessions SET revoked_at = ?
		WHERE id = ? AND user_id = ? AND `+s.d.None("revoked_at")+` AND expires_at > ?`,
		s.d.Time(at), sessionID, userID, s.d.Time(at))
}

// apiTokensUpdate runs an UPDATE that should change the one row what, and
// returns ENOTFOUND naming what when it changed none, decided inside the
// transaction that writes the recorded events. keys (the ids the UPDATE
// matches, concatenated) holding U+0000 match nothing.
func (s *Store) apiTokensUpdate(ctx context.Context, what, keys, query string, args ...any) error {
	if HasNUL(keys) {
		return NotFound(what)
	}
	_, err := s.e.ExecOne(ctx, what, query, args...)
	return s.e.Fail(ctx, "update "+what, err)
}
