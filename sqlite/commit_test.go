package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"quire"
)

// What a queued transaction does.
type txKind int

const (
	writes        txKind = iota // writes a row and succeeds
	refusesFirst                // returns a quire.Error before writing
	refusesAfter                // writes, then returns a quire.Error
	failsAfter                  // writes, then returns another error
	panicsAfter                 // writes, then panics
	givesUpQueued               // its caller's context ends while it waits
)

var errFailure = errors.New("failure")

// TestGroupCommit holds the committer in one transaction while others
// queue, so that they are committed as one batch, and checks that each of
// them is answered with its own outcome: the writes of a transaction that
// failed (before or after writing, with a quire.Error or another error) or
// panicked are undone, those of the others in its batch are kept, and a
// caller that gave up while queued never runs. Each batch holds at most
// one kind of failure after writing, so that no other failure's rollback
// hides what was done with it.
func TestGroupCommit(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "quire.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	for b, kinds := range [][]txKind{
		{writes, refusesFirst, writes, refusesFirst, givesUpQueued, writes, refusesFirst, writes},
		{writes, refusesFirst, refusesAfter, writes, writes, refusesFirst, writes},
		{writes, failsAfter, writes, refusesFirst, writes},
		{writes, writes, panicsAfter, writes, refusesFirst},
	} {
		before := db.largestBatch.Load()
		results := runBatch(t, db, fmt.Sprintf("b%d-", b), kinds)
		for i, err := range results {
			name := fmt.Sprintf("b%d-%d", b, i)
			kind := kinds[i]
			var ok bool
			switch kind {
			case writes:
				ok = err == nil
			case refusesFirst, refusesAfter:
				ok = quire.ErrorCode(err) != quire.EINTERNAL
			case failsAfter:
				ok = errors.Is(err, errFailure)
			case panicsAfter:
				ok = err != nil
			case givesUpQueued:
				ok = errors.Is(err, context.Canceled)
			}
			if !ok {
				t.Errorf("%s (kind %d) answered %v", name, kind, err)
			}
			var count int
			if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM departments WHERE id = ?`, name).Scan(&count); err != nil {
				t.Fatal(err)
			}
			if kept := count == 1; kept != (kind == writes) {
				t.Errorf("%s (kind %d): its write kept = %v", name, kind, kept)
			}
		}
		if db.largestBatch.Load() < 2 && before < 2 {
			t.Errorf("batch %d: nothing was committed together", b)
		}
	}

	db.Close()
	if err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error { return nil }); !errors.Is(err, errClosed) {
		t.Errorf("tx after Close: got %v, want errClosed", err)
	}
}

// runBatch queues one transaction per kind behind a transaction that holds
// the committer, cancels the callers that give up, lets them all go and
// returns their answers. Transaction i writes the department prefix+i.
func runBatch(t *testing.T, db *DB, prefix string, kinds []txKind) []error {
	t.Helper()
	ctx := t.Context()
	gate, entered := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			close(entered)
			<-gate
			return nil
		})
	}()
	<-entered

	results := make([]error, len(kinds))
	var wg sync.WaitGroup
	gaveUp, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, kind := range kinds {
		c := ctx
		if kind == givesUpQueued {
			c = gaveUp
		}
		wg.Go(func() {
			results[i] = db.tx(c, func(ctx context.Context, tx *sql.Tx) error {
				if kind == refusesFirst {
					return quire.Errorf(quire.ENOTFOUND, "refused before writing")
				}
				name := fmt.Sprint(prefix, i)
				if _, err := tx.ExecContext(ctx, `INSERT INTO departments (id, name) VALUES (?, ?)`, name, name); err != nil {
					return err
				}
				switch kind {
				case refusesAfter:
					return quire.Errorf(quire.EVALIDATION, "refused after writing")
				case failsAfter:
					return errFailure
				case panicsAfter:
					panic("boom")
				}
				return nil
			})
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for db.queued() < len(kinds) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if q := db.queued(); q != len(kinds) {
		t.Fatalf("%d transactions queued, want %d", q, len(kinds))
	}
	cancel()
	close(gate)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	return results
}
