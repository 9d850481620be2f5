package sqlite

import (
	"context"
	"os"

	"quire"
)

var _ quire.StatsStore = (*DB)(nil)

// The group commit's buckets: transactions per commit up to maxBatch, and
// the time of a commit from a lone fsync to a batch stuck on a slow disk.
func newBatchHistogram() *quire.Histogram { return quire.NewHistogram(1, 2, 4, 8, 16, 32, maxBatch) }
func newCommitHistogram() *quire.Histogram {
	return quire.NewHistogram(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5)
}

// Stats adds to the counts (sqlstore) the size of the file and its WAL,
// the group commit's figures and those of the index of documents.
func (db *DB) Stats(ctx context.Context) (quire.StoreStats, error) {
	st, err := db.Store.Stats(ctx)
	if err != nil {
		return quire.StoreStats{}, err
	}
	for _, name := range []string{db.path, db.path + "-wal"} {
		if fi, err := os.Stat(name); err == nil {
			st.DatabaseBytes += fi.Size()
		}
	}
	st.CommitBatch, st.CommitSeconds = db.batchSizes.Snapshot(), db.commitSeconds.Snapshot()
	st.Index = db.index.Stats()
	return st, nil
}
