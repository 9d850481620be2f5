package postgres

import (
	"context"
	"time"
)

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
