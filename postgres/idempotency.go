package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

var _ quire.IdempotencyStore = (*DB)(nil)

// ClaimIdempotencyKey claims the key in one statement: the insert takes a
// free key, and its ON CONFLICT branch takes over one whose record ended.
// When the record is live, the branch still locks its row (waiting for a
// claim another node is writing), and the read after it, a statement of
// its own in READ COMMITTED, sees the record as committed.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim, now time.Time,
	lease time.Duration) (*quire.IdempotentAnswer, error) {
	if err := sqlstore.ClaimNUL(c); err != nil {
		return nil, err
	}
	var kept *quire.IdempotentAnswer
	err := db.tx(ctx, func(tx pgx.Tx) error {
		kept = nil
		// A claim need not survive a crash of the database: the request
		// that held it ends too, and its change, if any, was committed
		// (durably) with its answer. So its commit does not wait for the
		// WAL to reach the disk.
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit TO OFF`); err != nil {
			return err
		}
		var claimed bool
		err := tx.QueryRow(ctx, `INSERT INTO idempotency_keys (user_id, key, fingerprint, claim, state, expires_at)
			VALUES ($1, $2, $3, $4, 'running', $5)
			ON CONFLICT (user_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, claim = excluded.claim,
				state = 'running', status = 0, header = '{}', body = '', expires_at = excluded.expires_at
			WHERE idempotency_keys.expires_at <= $6
			RETURNING true`,
			c.UserID, c.Key, c.Fingerprint, c.Token, micro(now.Add(lease)), micro(now)).Scan(&claimed)
		if err == nil {
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var (
			fingerprint, header, body []byte
			state                     string
			status                    int
			expires                   time.Time
		)
		err = tx.QueryRow(ctx, `SELECT fingerprint, state, status, header, body, expires_at
			FROM idempotency_keys WHERE user_id = $1 AND key = $2`, c.UserID, c.Key).
			Scan(&fingerprint, &state, &status, &header, &body, &expires)
		if err != nil {
			return err
		}
		kept, err = quire.KeptAnswer(c, fingerprint, state == "done", status, header, body, expires.Sub(micro(now)))
		return err
	})
	if err != nil {
		return nil, db.fail(ctx, "claim idempotency key", err)
	}
	return kept, nil
}

func (db *DB) CompleteIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim, a quire.IdempotentAnswer) error {
	_, err := completeKey(ctx, db.pool, c, a)
	return db.fail(ctx, "complete idempotency key", err)
}

func completeKey(ctx context.Context, q querier, c quire.IdempotencyClaim, a quire.IdempotentAnswer) (bool, error) {
	header, body, err := sqlstore.AnswerColumns(a)
	if err != nil {
		return false, err
	}
	tag, err := q.Exec(ctx, `UPDATE idempotency_keys SET state = 'done', status = $1, header = $2, body = $3,
		expires_at = $4 WHERE user_id = $5 AND key = $6 AND claim = $7 AND state = 'running'`,
		a.Status, header, body, micro(c.KeepUntil), c.UserID, c.Key, c.Token)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// keepAnswer writes a, inside the transaction of a change, as the answer
// of k's claim. A claim no longer held refuses the change (quire.Keep).
func keepAnswer(ctx context.Context, tx pgx.Tx, k *quire.Keep, a quire.IdempotentAnswer) error {
	held, err := completeKey(ctx, tx, k.Claim, a)
	if err != nil {
		return err
	}
	if !held {
		return quire.IdempotencyTakenOver()
	}
	k.SetKept()
	return nil
}

// Keeping returns a DB on db's pool, recording db's events, whose changes
// keep k's answer.
func (db *DB) Keeping(k *quire.Keep) quire.Store {
	if k == db.keep {
		return db
	}
	return withStore(&DB{pool: db.pool, searches: db.searches, index: db.index, events: db.events, keep: k})
}

func (db *DB) ReleaseIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE user_id = $1 AND key = $2 AND claim = $3 AND state = 'running'`, c.UserID, c.Key, c.Token)
	return db.fail(ctx, "release idempotency key", err)
}
