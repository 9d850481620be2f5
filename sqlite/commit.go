package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"time"

	"quire"
	"quire/sqlstore"
)

// Group commit.
//
// Every write transaction runs on the one writing connection, and with
// synchronous=FULL its commit costs more than its statements: the profile
// of concurrent document updates spent 46% of the server's time in COMMIT
// (the full-text index flushing its pending terms into a new segment, the
// WAL frames of every page touched, and the fsync), and 27% in the
// statements themselves. So a single goroutine, the committer, runs the
// transactions that wait at the same moment inside one SQLite transaction,
// one after the other, and commits them together: one flush, one set
// of pages, one fsync for all of them. Nobody waits for company: the
// committer takes whatever is queued when it is free, so a lone write is
// committed at once, exactly as before, and under load the queue that
// builds up while one batch commits is the next batch.
//
// A transaction's function returning an error has its writes undone and
// the others in the batch commit (see commitOnce).
// Every caller is answered only after the COMMIT that holds its writes
// returned, so an acknowledged write is on disk as before. If the commit
// fails, every caller of the batch gets the error, and none of its writes
// is kept.

// maxBatch bounds the transactions committed together, so that a burst of
// writes cannot make one transaction (and the WAL) grow without bound.
const maxBatch = 64

// txRequest is one transaction waiting for the committer.
type txRequest struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	done chan error // buffered: the committer never waits for the caller
}

// errClosed answers transactions sent after Close.
var errClosed = errors.New("sqlite: database closed")

func (db *DB) startCommitter() {
	db.txs = make(chan *txRequest)
	db.closing = make(chan struct{})
	db.stopped = make(chan struct{})
	go db.commitLoop()
}

// stopCommitter lets the batch in progress finish and stops the committer;
// transactions sent afterwards get errClosed.
func (db *DB) stopCommitter() {
	db.closeOne.Do(func() { close(db.closing) })
	<-db.stopped
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE), followed, when fn
// succeeds, by the insert of db.events (audit.go), which is committed
// when fn returns nil and undone otherwise, and returns fn's error or the
// commit's. fn runs on the committer's goroutine, with ctx's values but
// not its cancellation: a statement interrupted halfway would roll back
// the whole SQLite transaction, the other callers' writes with it. A
// caller whose ctx ends while it is still queued is answered with ctx's
// error and its fn never runs. fn must not call tx itself.
func (db *DB) tx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if evs := db.events; len(evs) > 0 {
		change := fn
		fn = func(ctx context.Context, tx *sql.Tx) error {
			if err := change(ctx, tx); err != nil {
				return err
			}
			// A cachedQuerier: the events' statements stay prepared.
			return sqlstore.InsertEvents(ctx, qOf(cachedQuerier{c: db.writes, tx: tx}), dialect, evs)
		}
	}
	r := &txRequest{ctx: ctx, fn: fn, done: make(chan error, 1)}
	db.waiting.Add(1)
	select {
	case db.txs <- r:
	case <-ctx.Done():
		db.waiting.Add(-1)
		return ctx.Err()
	case <-db.closing:
		db.waiting.Add(-1)
		return errClosed
	}
	err := db.noteWrite(<-r.done)
	if err == nil {
		// A change that kept its idempotent answer is committed with it:
		// its claim can go (idempotency.go).
		db.kept()
	}
	return err
}

func (db *DB) commitLoop() {
	defer close(db.stopped)
	var batch []*txRequest
	for {
		select {
		case r := <-db.txs:
			db.waiting.Add(-1)
			batch = append(batch[:0], r)
		case <-db.closing:
			return
		}
		// Let the goroutines that are ready to run reach their own tx
		// first: on a busy server they are handlers a few microseconds
		// from queueing, and waiting for them costs less than the commit
		// they would otherwise each pay. On an idle one there is nobody
		// to run and this returns at once.
		runtime.Gosched()
	more:
		for len(batch) < maxBatch {
			select {
			case r := <-db.txs:
				db.waiting.Add(-1)
				batch = append(batch, r)
			default:
				break more
			}
		}
		began := time.Now()
		db.commitBatch(batch)
		db.commitSeconds.Observe(time.Since(began).Seconds())
		db.batchSizes.Observe(float64(len(batch)))
		db.batches.Add(1)
		clear(batch) // let the requests go
	}
}

// commitBatch runs the batch's transactions in one SQLite transaction and
// answers each.
func (db *DB) commitBatch(batch []*txRequest) {
	live := make([]*txRequest, 0, len(batch))
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		live = append(live, r)
	}
	for len(live) > 0 {
		live = db.commitOnce(live)
	}
}

// commitOnce runs live's functions in one transaction, brings the
// full-text index up to date with what they wrote (fts.go) and commits it,
// answering each caller, or, when one of them failed after writing,
// answers that one, rolls everything back and returns the others to be run
// again in a fresh transaction (none of them has been answered yet, and
// each reads what it needs inside its transaction, so running it again is
// running it for the first time). Savepoints would undo the one without
// the others, at the cost of a savepoint for every function, to save work
// only in the rare case of a failure after writing.
//
// A function that returns a quire.Error (a conflict, a validation error,
// something not found) without having changed a row is simply answered:
// the transaction holds nothing of it. That is how those errors happen: a
// function checks before it writes. Any other error, or one after a row
// changed, may have left the SQLite transaction half done or ended it, so
// the whole transaction is rolled back.
func (db *DB) commitOnce(live []*txRequest) (again []*txRequest) {
	ctx := context.Background()
	db.writes.preparePending(ctx)
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		answer(live, fmt.Errorf("begin: %w", err))
		return nil
	}
	db.fts.reset()
	start := db.changesBefore(ctx, tx)
	if len(live) == 1 {
		// Alone: the function's error rolls back only its own writes.
		r := live[0]
		if err := run(r, tx); err != nil {
			tx.Rollback()
			r.done <- err
			return nil
		}
		r.done <- db.finish(ctx, tx, start)
		return nil
	}
	q := cachedQuerier{c: db.writes, tx: tx}
	changes := func() (n int64, err error) {
		err = q.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n)
		return n, err
	}
	kept := make([]*txRequest, 0, len(live))
	for i, r := range live {
		before, err := changes()
		if err != nil {
			tx.Rollback()
			answer(live[i:], fmt.Errorf("count changes: %w", err))
			return kept
		}
		ferr := run(r, tx)
		if ferr == nil {
			kept = append(kept, r)
			continue
		}
		var qe *quire.Error
		if errors.As(ferr, &qe) {
			if after, err := changes(); err == nil && after == before {
				r.done <- ferr
				continue
			}
		}
		tx.Rollback()
		r.done <- ferr
		return append(kept, live[i+1:]...)
	}
	answer(kept, db.finish(ctx, tx, start))
	return nil
}

// finish brings the full-text index up to date with what tx wrote and
// commits tx, or rolls it back when the index cannot be written. start is
// changesBefore's count: when it is not -1 and tx changed rows, a commit
// that succeeds ends the full state.
func (db *DB) finish(ctx context.Context, tx *sql.Tx, start int64) error {
	if err := db.fts.flush(ctx, cachedQuerier{c: db.writes, tx: tx}); err != nil {
		tx.Rollback()
		return err
	}
	changed := false
	if start >= 0 {
		n, err := totalChanges(ctx, tx)
		changed = err == nil && n > start
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if changed {
		db.noteChange()
	}
	return nil
}

// run calls r's fn, turning a panic into an error so that one bad
// transaction cannot stop the committer (and with it every write).
func run(r *txRequest, tx *sql.Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic in transaction: %v", v)
		}
	}()
	return r.fn(context.WithoutCancel(r.ctx), tx)
}

// queued is the number of transactions waiting for the committer.
func (db *DB) queued() int { return int(db.waiting.Load()) }

func answer(rs []*txRequest, err error) {
	for _, r := range rs {
		r.done <- err
	}
}
