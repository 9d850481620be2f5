package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

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
