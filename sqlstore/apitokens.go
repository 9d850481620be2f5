package sqlstore

import (
	"context"
	"time"

	"quire"
)

// API tokens are credentials as sessions are (sessions.go).

func (s *Store) CreateAPIToken(ctx context.Context, t *quire.APIToken) error {
	id, err := s.insertCredential(ctx, "api token", t.TokenHash, `INSERT INTO api_tokens
		(id, user_id, name, scope, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.UserID, t.Name, string(t.Scope), t.TokenHash, s.d.Time(t.CreatedAt), s.d.Time(t.ExpiresAt),
		s.d.Time(t.LastUsedAt), s.d.Time(t.RevokedAt), t.IP, t.UserAgent)
	if err == nil {
		t.ID = id
	}
	return err
}

func (s *Store) APITokenByHash(ctx context.Context, hash []byte) (*quire.APIToken, *quire.User, error) {
	var t quire.APIToken
	user, err := s.credentialByHash(ctx, "api token", "api_tokens", "t.id, t.name, t.scope, t.token_hash", hash,
		&t.ID, &t.Name, (*string)(&t.Scope), &t.TokenHash, T(&t.CreatedAt), T(&t.ExpiresAt), T(&t.LastUsedAt), T(&t.RevokedAt))
	if err != nil {
		return nil, nil, err
	}
	t.UserID = user.ID
	return &t, user, nil
}

func (s *Store) APITokens(ctx context.Context, userID string, now time.Time) ([]quire.APIToken, error) {
	return listCredentials(ctx, s, "api_tokens", "id, name, scope", userID, now, func(scan func(dest ...any) error) (quire.APIToken, error) {
		t := quire.APIToken{UserID: userID}
		err := scan(&t.ID, &t.Name, (*string)(&t.Scope), T(&t.CreatedAt), T(&t.ExpiresAt), T(&t.LastUsedAt), &t.IP, &t.UserAgent)
		return t, err
	})
}

// TouchAPIToken never moves the last-use time backwards, so that two nodes
// touching the same token with slightly different clocks keep the later.
func (s *Store) TouchAPIToken(ctx context.Context, tokenID string, at time.Time) error {
	return s.updateOne(ctx, "api token", tokenID, `UPDATE api_tokens SET last_used_at = `+s.d.Greatest+`(last_used_at, ?)
		WHERE id = ?`, s.d.Time(at), tokenID)
}

// RevokeAPIToken decides ENOTFOUND inside its transaction, so that the
// events it records are written only with a revocation.
func (s *Store) RevokeAPIToken(ctx context.Context, userID, tokenID string, at time.Time) error {
	return s.revokeCredential(ctx, "api token", "api_tokens", userID, tokenID, at)
}

// revokeAPITokens revokes, in q, every token of userID still valid. The
// transactions that end a user's credentials (DisableUser, RedeemToken)
// call it beside revokeSessions.
func (s *Store) revokeAPITokens(ctx context.Context, q Q, userID string, at time.Time) error {
	return s.revokeCredentials(ctx, q, "api_tokens", userID, "", at)
}
