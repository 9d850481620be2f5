package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

)

// API tokens and the lists of sessions are sqlstore's
// (sqlstore/apitokens.go).

// revokeAPITokens is DisableUser's (users.go) until it moves too.
func revokeAPITokens(ctx context.Context, tx *sql.Tx, userID string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at = 0`,
		toMicros(at), userID)
	if err != nil {
		return fmt.Errorf("revoke api tokens: %w", err)
	}
	return nil
}
