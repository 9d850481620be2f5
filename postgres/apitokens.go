package postgres

import (
	"context"
	"time"

)

// API tokens and the lists of sessions are sqlstore's
// (sqlstore/apitokens.go).

// revokeAPITokens is DisableUser's (users.go) until it moves too.
func revokeAPITokens(ctx context.Context, q querier, userID string, at time.Time) error {
	if hasNUL(userID) {
		return nil // no such user
	}
	_, err := q.Exec(ctx, `UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL`,
		micro(at), userID)
	return err
}

// updateOneRow runs an UPDATE that should match the one row named id, and
// returns ENOTFOUND naming what when it matched none, decided inside the
// transaction that writes the recorded events.
func (db *DB) updateOneRow(ctx context.Context, what, id, query string, args ...any) error {
	if hasNUL(id) {
		return notFound(what)
	}
	_, err := db.exec(ctx, what, query, args...)
	return db.fail(ctx, "update "+what, err)
}
