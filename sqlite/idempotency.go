package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.IdempotencyStore = (*DB)(nil)

// ClaimIdempotencyKey claims the key in one statement: the insert takes a
// free key, and its ON CONFLICT branch takes over one whose record ended;
// a live record is then read in the same transaction.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim, now time.Time,
	lease time.Duration) (*quire.IdempotentAnswer, error) {
	var kept *quire.IdempotentAnswer
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		kept = nil
		var claimed bool
		err := tx.QueryRowContext(ctx, `INSERT INTO idempotency_keys (user_id, key, fingerprint, claim, state, expires_at)
			VALUES (?1, ?2, ?3, ?4, 'running', ?5)
			ON CONFLICT (user_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, claim = excluded.claim,
				state = 'running', status = 0, header = '{}', body = x'', expires_at = excluded.expires_at
			WHERE idempotency_keys.expires_at <= ?6
			RETURNING 1`,
			c.UserID, c.Key, c.Fingerprint, c.Token, toMicros(now.Add(lease)), toMicros(now)).Scan(&claimed)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("claim idempotency key: %w", err)
		}
		var (
			r       idemRecord
			expires int64
		)
		err = tx.QueryRowContext(ctx, `SELECT fingerprint, state, status, header, body, expires_at
			FROM idempotency_keys WHERE user_id = ? AND key = ?`, c.UserID, c.Key).
			Scan(&r.fingerprint, &r.state, &r.status, &r.header, &r.body, &expires)
		if err != nil {
			return fmt.Errorf("read idempotency key: %w", err)
		}
		kept, err = r.answer(c, now, fromMicros(expires))
		return err
	})
	if err != nil {
		return nil, err
	}
	return kept, nil
}

// idemRecord is a live record read back by a claim that found one.
type idemRecord struct {
	fingerprint  []byte
	state        string
	status       int
	header, body []byte
}

// answer is what a claim that found r gets: quire.IdempotencyStore says.
func (r idemRecord) answer(c quire.IdempotencyClaim, now, expires time.Time) (*quire.IdempotentAnswer, error) {
	return quire.KeptAnswer(c, r.fingerprint, r.state == "done", r.status, r.header, r.body, expires.Sub(now))
}

func (db *DB) CompleteIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim, a quire.IdempotentAnswer) error {
	header, err := json.Marshal(a.Header)
	if err != nil {
		return fmt.Errorf("complete idempotency key: %w", err)
	}
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := completeKey(ctx, tx, c, a, header)
		return err
	})
}

func completeKey(ctx context.Context, tx interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, c quire.IdempotencyClaim, a quire.IdempotentAnswer, header []byte) (bool, error) {
	body := a.Body
	if body == nil {
		body = []byte{}
	}
	res, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET state = 'done', status = ?, header = ?, body = ?,
		expires_at = ? WHERE user_id = ? AND key = ? AND claim = ? AND state = 'running'`,
		a.Status, string(header), body, toMicros(c.KeepUntil), c.UserID, c.Key, c.Token)
	if err != nil {
		return false, fmt.Errorf("complete idempotency key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("complete idempotency key: %w", err)
	}
	return n == 1, nil
}

// keepAnswer writes, inside the transaction of a change, the answer of the
// idempotency claim ctx carries (none: nothing to do), made of result. A
// claim no longer held refuses the change (quire.IdempotentWrite).
func keepAnswer(ctx context.Context, tx cachedQuerier, result any) error {
	w := quire.IdempotentWriteFrom(ctx)
	if w == nil {
		return nil
	}
	a, err := w.Answer(result)
	if err != nil {
		return err
	}
	header, err := json.Marshal(a.Header)
	if err != nil {
		return fmt.Errorf("keep idempotent answer: %w", err)
	}
	held, err := completeKey(ctx, tx, w.Claim, a, header)
	if err != nil {
		return err
	}
	if !held {
		return quire.IdempotencyTakenOver()
	}
	w.Kept.Store(true)
	return nil
}

func (db *DB) ReleaseIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys
			WHERE user_id = ? AND key = ? AND claim = ? AND state = 'running'`, c.UserID, c.Key, c.Token)
		if err != nil {
			return fmt.Errorf("release idempotency key: %w", err)
		}
		return nil
	})
}

// PruneIdempotencyKeys deletes the oldest ended records first. One process
// writes a SQLite file, so there is no other node to wait for.
func (db *DB) PruneIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error) {
	var n int64
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?1 AND (user_id, key) IN (
			SELECT user_id, key FROM idempotency_keys WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)`,
			toMicros(now), limit)
		if err != nil {
			return fmt.Errorf("prune idempotency keys: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
