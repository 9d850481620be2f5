package sqlstore

import (
	"context"
	"time"
)

// The store of sessions, API tokens, one-time tokens and login limits is
// package auth's (auth.AuthSQL). The transactions of other capabilities
// that end a user's credentials (DisableUser) revoke them here.

func (s *Store) revokeSessions(ctx context.Context, q Q, userID, except string, at time.Time) error {
	return RevokeCredentials(ctx, q, s.d, "sessions", userID, except, at)
}

// RevokeCredentials revokes, in q, every session or API token (table) of
// userID still valid but except ("" for none).
func RevokeCredentials(ctx context.Context, q Q, d *Dialect, table, userID, except string, at time.Time) error {
	if HasNUL(userID) {
		return nil // no such user
	}
	if HasNUL(except) {
		except = "" // no such credential
	}
	_, err := q.Exec(ctx, `UPDATE `+table+` SET revoked_at = ? WHERE user_id = ? AND id <> ? AND `+d.None("revoked_at"),
		d.Time(at), userID, except)
	return err
}
