package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"quire"
	"quire/sqlstore"
)

var _ quire.IdempotencyStore = (*DB)(nil)

// Idempotency keys on SQLite.
//
// One process serves a SQLite file, so a running claim is kept in that
// process's memory (claims), and only the kept answers are rows: a claim
// costs no write transaction, no commit and no fsync, which would
// otherwise double the writes of a keyed request. A crash forgets the
// running claims, which is what they are for: the change of a request
// that was cut short was not committed, or was committed with its answer.
// The answer row is written by the change's own transaction (keepAnswer)
// or, for a request that changed nothing, by CompleteIdempotencyKey; the
// claim is dropped once that row is committed.

// claims are the running claims of this process.
type claims struct {
	mu sync.Mutex
	m  map[claimKey]runningClaim
}

type claimKey struct{ user, key string }

type runningClaim struct {
	fingerprint []byte
	token       string
	until       time.Time
}

// holds reports whether c is the running claim of its key.
func (cs *claims) holds(c quire.IdempotencyClaim) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	r, ok := cs.m[claimKey{c.UserID, c.Key}]
	return ok && r.token == c.Token
}

// drop forgets c, if it is still the running claim of its key.
func (cs *claims) drop(c quire.IdempotencyClaim) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	k := claimKey{c.UserID, c.Key}
	if r, ok := cs.m[k]; ok && r.token == c.Token {
		delete(cs.m, k)
	}
}

// ClaimIdempotencyKey takes the key in memory first, so that of
// concurrent claims one wins, then looks for a kept answer. A claim is
// dropped only once the answer of its change is committed (or when it
// changed nothing), so a key found free in memory has its answer, if any,
// readable by the read pool. A key whose claim's lease ended is taken over
// through the committer, ordered with the change the old claim may still
// be making: that change either committed its answer before (and the read
// finds it) or finds its claim gone and is refused (keepAnswer).
func (db *DB) ClaimIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim, now time.Time,
	lease time.Duration) (*quire.IdempotentAnswer, error) {
	if err := sqlstore.ClaimNUL(c); err != nil {
		return nil, err
	}
	cs := &db.claims
	k := claimKey{c.UserID, c.Key}
	cs.mu.Lock()
	r, held := cs.m[k]
	if held && r.until.After(now) {
		cs.mu.Unlock()
		return quire.KeptAnswer(c, r.fingerprint, false, 0, nil, nil, r.until.Sub(now))
	}
	if cs.m == nil {
		cs.m = map[claimKey]runningClaim{}
	}
	cs.m[k] = runningClaim{fingerprint: c.Fingerprint, token: c.Token, until: now.Add(lease)}
	cs.mu.Unlock()

	var (
		fingerprint, header, body []byte
		status                    int
		err                       error
	)
	const keptQuery = `SELECT fingerprint, status, header, body FROM idempotency_keys
		WHERE user_id = ? AND key = ? AND state = 'done' AND expires_at > ?`
	if held {
		err = db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, keptQuery, c.UserID, c.Key, toMicros(now)).
				Scan(&fingerprint, &status, &header, &body)
		})
	} else {
		err = cachedQuerier{c: db.reads}.QueryRowContext(ctx, keptQuery, c.UserID, c.Key, toMicros(now)).
			Scan(&fingerprint, &status, &header, &body)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	cs.drop(c)
	if err != nil {
		return nil, fmt.Errorf("read idempotency key: %w", err)
	}
	return quire.KeptAnswer(c, fingerprint, true, status, header, body, 0)
}

func (db *DB) CompleteIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim, a quire.IdempotentAnswer) error {
	if !db.claims.holds(c) {
		return nil
	}
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Checked again on the committer: a write is ordered with every other.
		if !db.claims.holds(c) {
			return nil
		}
		return insertAnswer(ctx, tx, c, a)
	})
	if err == nil {
		db.claims.drop(c)
	}
	return err
}

// insertAnswer writes a as the kept answer of c, replacing a record that
// ended.
func insertAnswer(ctx context.Context, tx execer, c quire.IdempotencyClaim, a quire.IdempotentAnswer) error {
	header, body, err := sqlstore.AnswerColumns(a)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO idempotency_keys
		(user_id, key, fingerprint, claim, state, status, header, body, expires_at)
		VALUES (?, ?, ?, ?, 'done', ?, ?, ?, ?)`,
		c.UserID, c.Key, c.Fingerprint, c.Token, a.Status, header, body, toMicros(c.KeepUntil))
	if err != nil {
		return fmt.Errorf("keep idempotent answer: %w", err)
	}
	return nil
}

// keepAnswer writes a, inside the transaction of a change, as the answer
// of k's claim. A claim no longer held refuses the change (quire.Keep).
// The caller drops the claim once the transaction committed (kept).
func (db *DB) keepAnswer(ctx context.Context, tx cachedQuerier, k *quire.Keep, a quire.IdempotentAnswer) error {
	if !db.claims.holds(k.Claim) {
		return quire.IdempotencyTakenOver()
	}
	if err := insertAnswer(ctx, tx, k.Claim, a); err != nil {
		return err
	}
	k.SetKept()
	return nil
}

// kept drops the claim of a change whose transaction committed its answer
// (tx calls it after every commit).
func (db *DB) kept() {
	if db.keep.Kept() {
		db.claims.drop(db.keep.Claim)
	}
}

// Keeping returns a DB sharing db's database, its committer and its
// caches, recording db's events, whose changes keep k's answer.
func (db *DB) Keeping(k *quire.Keep) quire.Store {
	if k == db.keep {
		return db
	}
	return withStore(&DB{shared: db.shared, events: db.events, keep: k})
}

func (db *DB) ReleaseIdempotencyKey(ctx context.Context, c quire.IdempotencyClaim) error {
	db.claims.drop(c)
	return nil
}

// PruneIdempotencyKeys deletes the oldest ended answers first
// (sqlstore). It also forgets running claims whose lease ended an hour
// ago, long after any request: a claim is dropped by its own request, and
// is left behind only by one that panicked. One process writes a SQLite
// file, so there is no other node to wait for.
func (db *DB) PruneIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error) {
	db.claims.mu.Lock()
	for k, r := range db.claims.m {
		if r.until.Before(now.Add(-time.Hour)) {
			delete(db.claims.m, k)
		}
	}
	db.claims.mu.Unlock()
	return db.Store.PruneIdempotencyKeys(ctx, now, limit)
}
