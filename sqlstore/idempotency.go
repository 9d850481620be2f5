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
// limit, holding the prune's lock: a node that finds it taken returns at
// once, since another node is doing the same work.
func (s *Store) PruneIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		n = 0
		if mine, err := s.d.tryLock(ctx, q, lockIdempotencyPrune); err != nil || !mine {
			return err
		}
		var err error
		n, err = q.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ? AND (user_id, key) IN (
			SELECT user_id, key FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
			s.d.Time(now), s.d.Time(now), limit)
		return err
	})
	if err != nil {
		return 0, s.e.Fail(ctx, "prune idempotency keys", err)
	}
	return int(n), nil
}
