package quire

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// StatsStore reads what /metrics reports of the database.
type StatsStore interface {
	// Stats returns cheap counts (no scan of a table that grows with the
	// documents) and the figures of the store's connections or commits.
	Stats(ctx context.Context) (StoreStats, error)
}

// StoreStats are the database's figures at one moment.
type StoreStats struct {
	Users     int64 // every user, whatever the status
	Documents int64 // documents outside the trash
	// OutboxPending counts the mails neither sent nor given up;
	// OutboxOldest is the creation time of the oldest of them (zero when
	// there is none).
	OutboxPending int64
	OutboxOldest  time.Time
	// WebhooksPending counts the webhook deliveries not yet delivered nor
	// failed for good (the backlog); WebhooksOldest is the creation time
	// of the oldest of them (zero when there is none).
	WebhooksPending int64
	WebhooksOldest  time.Time
	// DatabaseBytes is the size of the database on disk: SQLite's file and
	// its write-ahead log, PostgreSQL's pg_database_size.
	DatabaseBytes int64
	// CommitBatch (transactions per commit) and CommitSeconds (time of a
	// commit, its transactions included) describe SQLite's group commit;
	// nil on PostgreSQL.
	CommitBatch, CommitSeconds *HistogramSnapshot
	// Pool describes PostgreSQL's connection pool; nil on SQLite.
	Pool *PoolStats
	// Index describes the store's index of documents in memory
	// (SearchIndexer); nil when it keeps none.
	Index *IndexStats
}

// IndexStats are the figures of a store's index of documents in memory.
type IndexStats struct {
	Ready                      bool  // built (lists may be answered from it)
	Rows, DeadStates           int64 // documents it holds (trash included); replaced states not yet dropped
	Terms, Postings            int64
	ListsByIndex, ListsByStore int64 // searches and tag-filtered lists answered by each, since start
}

// PoolStats are the cumulative figures of a connection pool.
type PoolStats struct {
	Acquires         int64         // connections taken from the pool
	AcquireWait      time.Duration // total time spent taking them
	EmptyAcquires    int64         // takes that found no idle connection and waited
	EmptyAcquireWait time.Duration // total time of those waits
	InUse, Idle, Max int32
}

// Histogram counts observations in buckets, safe for concurrent use: what
// a package that measures (auth's hashing queue, SQLite's committer) keeps,
// and /metrics reads as a snapshot. Counting here keeps the metrics library
// out of every package but httpapi.
type Histogram struct {
	bounds  []float64       // upper bounds, ascending
	counts  []atomic.Uint64 // per bucket (not cumulative); the last is +Inf
	sumBits atomic.Uint64   // float64 bits of the sum
}

// NewHistogram returns a histogram with the given upper bounds, ascending.
func NewHistogram(bounds ...float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts v.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// HistogramSnapshot is a histogram read at one moment: Buckets maps each
// upper bound to the number of observations at or below it (cumulative),
// and Count includes those above the last bound.
type HistogramSnapshot struct {
	Count   uint64
	Sum     float64
	Buckets map[float64]uint64
}

// Snapshot reads h. Count is the sum of the buckets read, so the
// snapshot is consistent with itself even while observations go on.
func (h *Histogram) Snapshot() *HistogramSnapshot {
	s := &HistogramSnapshot{Buckets: make(map[float64]uint64, len(h.bounds))}
	var n uint64
	for i, b := range h.bounds {
		n += h.counts[i].Load()
		s.Buckets[b] = n
	}
	s.Count = n + h.counts[len(h.bounds)].Load()
	s.Sum = math.Float64frombits(h.sumBits.Load())
	return s
}
