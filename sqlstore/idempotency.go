package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"quire"
)

// Idempotency keys. A running claim lives where the engine can hold it
// against every other writer: in SQLite, whose file one process writes, in
// that process's memory; in PostgreSQL, in the database. The engines keep
// those; the kept answers and their prune are the same rows on both.

// lockIdempotencyPrune is the class of the prune's lock (one key): one node
// prunes at a time. Its number stays clear of the classes of sqlstore.go.
const lockIdempotencyPrune = 21

// ClaimNUL refuses a claim whose key holds U+0000, which PostgreSQL's text
// cannot store, on both engines alike.
func ClaimNUL(c quire.IdempotencyClaim) error {
	if HasNUL(c.UserID, c.Key) {
		return quire.Invalid(map[string]string{"Idempotency-Key": MsgNUL})
	}
	return nil
}

// AnswerColumns are the stored header and body of a.
func AnswerColumns(a quire.IdempotentAnswer) (header string, body []byte, err error) {
	h, err := json.Marshal(a.Header)
	if err != nil {
		return "", nil, fmt.Errorf("keep idempotent answer: %w", err)
	}
	body = a.Body
	if body == nil {
		body = []byte{}
	}
	return string(h), body, nil
}

// PruneIdempotencyKeys deletes the oldest ended records first, at most
// limit, one node at a time.
func (s *Store) PruneIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error) {
	return s.prune(ctx, "prune idempotency keys", lockIdempotencyPrune, limit, `DELETE FROM idempotency_keys
		WHERE expires_at <= ? AND (user_id, key) IN (
		SELECT user_id, key FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
		s.d.Time(now), s.d.Time(now), limit)
}
