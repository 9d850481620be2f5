package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"quire"
)

// The one-time tokens are sqlstore's (sqlstore/tokens.go).

// insertToken is ResendInvite's (admin.go) until it moves too.
func insertToken(ctx context.Context, tx *sql.Tx, t *quire.OneTimeToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("empty token hash")
	}
	id := newID()
	_, err := tx.ExecContext(ctx, `INSERT INTO one_time_tokens
		(id, user_id, purpose, token_hash, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, t.UserID, string(t.Purpose), t.TokenHash, toMicros(t.CreatedAt), toMicros(t.ExpiresAt), toMicros(t.UsedAt))
	if err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	t.ID = id
	return nil
}
