package sqlstore

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"quire"
	"quire/docindex"
)

// DocIndex follows the database with an index of documents in memory
// (package docindex), the same way on both engines; the engine gives it
// reads of one snapshot (IndexSource).
//
// It follows document_changes (SQLite's migration 0021, PostgreSQL's
// 0033), which records the seq of every row of documents changed, in the
// order of the commits. A list reads, in its own read transaction, the
// last change id; when the index is behind it applies the changes after
// its own last one, reading their rows in that same transaction, and it
// answers only when it then holds exactly that id, so that its total and
// its page come from the one snapshot the list reads. Otherwise (still
// building, too far behind, a change applied by a newer snapshot
// meanwhile, a search it cannot answer exactly) the list is answered by
// the store's own queries, as it was before the index existed. A goroutine
// (Start) builds the index, keeps it caught up every poll interval or
// when woken (Wake: PostgreSQL's NOTIFY at each document write's commit),
// deletes the changes applied but the last Keep, and builds it again when
// replaced states outnumber the live ones, or when it finds that changes
// it had not applied were deleted (another node trimmed the log while it
// was behind).
type DocIndex struct {
	x     atomic.Pointer[docindex.Index] // nil until built
	off   atomic.Bool                    // Use(false)
	build sync.Mutex                     // one build or catch-up at a time
	start sync.Once
	// started is set once the goroutine runs, for Wait; done is closed
	// when it has stopped.
	started atomic.Bool
	done    chan struct{}
	wake    chan struct{}
	// trimmed is the change id below which this node deleted the changes.
	trimmed int64
	poll    time.Duration
	keep    int64
	// ByIndex and ByStore count the searches and tag-filtered lists
	// answered from the index and by the store's queries.
	ByIndex, ByStore atomic.Int64
	// RebuildMin is the fewest dead states that make a build (more than
	// the live documents are needed too), TrimEvery the changes applied
	// between two deletions of the applied ones; tests lower them.
	RebuildMin, TrimEvery atomic.Int64
}

// IndexCatchUp is the most changes a list applies before answering; beyond
// it the store's queries answer and the goroutine catches up.
const IndexCatchUp = 2000

// NewDocIndex returns a follower that catches up every poll, and keeps the
// last keep changes it applied in the log (for the other nodes reading it;
// SQLite's single process keeps only the last, whose id the next ones
// follow).
func NewDocIndex(poll time.Duration, keep int64) *DocIndex {
	ix := &DocIndex{done: make(chan struct{}), wake: make(chan struct{}, 1), poll: poll, keep: keep}
	ix.RebuildMin.Store(10000)
	ix.TrimEvery.Store(4096)
	return ix
}

// SetFollow changes the poll interval and the changes kept, before Start
// (for tests).
func (ix *DocIndex) SetFollow(poll time.Duration, keep int64) { ix.poll, ix.keep = poll, keep }

// IndexSource is what an engine gives DocIndex.
type IndexSource interface {
	// IndexRead begins a read of one snapshot; done ends it. build is set
	// for the read that loads every document (no statement time limit).
	IndexRead(ctx context.Context, build bool) (r IndexRead, done func(), err error)
	// TrimChanges deletes the changes whose id is below below.
	TrimChanges(ctx context.Context, below int64) error
}

// IndexRead reads, in one snapshot, what the index follows.
type IndexRead interface {
	// LastChange is the id of the last change (0 for none).
	LastChange(ctx context.Context) (int64, error)
	// Changed returns the seqs of the rows changed after from up to to,
	// each once; gone is set when some of those changes may have been
	// deleted already (the index must then be built again).
	Changed(ctx context.Context, from, to int64) (seqs []int64, gone bool, err error)
	// LoadDocs reads the rows of seqs (every row when seqs is nil), those
	// in the trash too, and calls put with each; a seq without a row
	// (purged) is left out.
	LoadDocs(ctx context.Context, seqs []int64, put func(d *docindex.Doc)) error
}

// errIndexBehind: changes the index had not applied were deleted.
var errIndexBehind = errors.New("document index: changes it had not applied were deleted")

// Index is the index, nil until built.
func (ix *DocIndex) Index() *docindex.Index { return ix.x.Load() }

// Use turns the index on or off (quire.SearchIndexer).
func (ix *DocIndex) Use(on bool) { ix.off.Store(!on) }

// Start builds the index in a goroutine and keeps it caught up until
// closing is closed; with also set, also runs beside it on its own
// goroutine (PostgreSQL's listener) with the same context. A second call
// does nothing.
func (ix *DocIndex) Start(src IndexSource, closing <-chan struct{}, also func(ctx context.Context)) {
	ix.start.Do(func() {
		ix.started.Store(true)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-closing
			cancel()
		}()
		var wg sync.WaitGroup
		if also != nil {
			wg.Go(func() { also(ctx) })
		}
		wg.Go(func() { ix.run(ctx, src) })
		go func() {
			wg.Wait()
			close(ix.done)
		}()
	})
}

// Wait waits, once closing is closed, for the goroutines of Start, if
// started.
func (ix *DocIndex) Wait() {
	if ix.started.Load() {
		<-ix.done
	}
}

// Wake makes the goroutine catch up now rather than at the next poll.
func (ix *DocIndex) Wake() {
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

// Ready waits until the index is built and holds every change committed
// before the call (quire.SearchIndexer); start starts the goroutine.
func (ix *DocIndex) Ready(ctx context.Context, src IndexSource, start func()) error {
	start()
	for {
		if x := ix.x.Load(); x != nil {
			caught, err := ix.catchUpNow(ctx, src, x)
			if errors.Is(err, errIndexBehind) {
				ix.Wake() // the goroutine builds it again
			} else if err != nil || caught {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// catchUpNow applies to x every change committed so far, and reports
// whether x then holds them all (false when it was replaced meanwhile).
func (ix *DocIndex) catchUpNow(ctx context.Context, src IndexSource, x *docindex.Index) (bool, error) {
	r, done, err := src.IndexRead(ctx, false)
	if err != nil {
		return false, err
	}
	defer done()
	last, err := r.LastChange(ctx)
	if err != nil {
		return false, err
	}
	if err := CatchUp(ctx, r, x, last); err != nil {
		return false, err
	}
	return x.Cursor() >= last, nil
}

// run builds the index, then keeps it caught up until ctx ends.
func (ix *DocIndex) run(ctx context.Context, src IndexSource) {
	t := time.NewTicker(ix.poll)
	defer t.Stop()
	for {
		if err := ix.Tick(ctx, src); err != nil && ctx.Err() == nil {
			slog.Warn("document index", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-ix.wake:
		}
	}
}

// Tick builds the index when there is none, when it holds more dead
// states than live ones, or when it is behind the changes deleted, and
// otherwise catches it up.
func (ix *DocIndex) Tick(ctx context.Context, src IndexSource) error {
	ix.build.Lock()
	defer ix.build.Unlock()
	x := ix.x.Load()
	if x != nil {
		if st := x.Stats(); int64(st.Dead) > max(int64(st.Rows), ix.RebuildMin.Load()) {
			x = nil // more replaced states than documents: build afresh
		}
	}
	for range 2 {
		if x == nil {
			nx, err := ix.buildIndex(ctx, src)
			if err != nil {
				return err
			}
			ix.x.Store(nx)
			x = nx
		}
		_, err := ix.catchUpNow(ctx, src, x)
		if errors.Is(err, errIndexBehind) {
			slog.Warn("document index: behind the changes deleted, building it again")
			x = nil
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	// Delete the changes applied, but the last keep (and the last: its id
	// is the highest, which keeps the next ones above it).
	if cur := x.Cursor(); cur-ix.trimmed >= ix.TrimEvery.Load() && cur-ix.keep > 0 {
		if err := src.TrimChanges(ctx, cur-ix.keep); err != nil {
			return err
		}
		ix.trimmed = cur
	}
	return nil
}

// buildIndex reads every document into a new index, in one snapshot.
func (ix *DocIndex) buildIndex(ctx context.Context, src IndexSource) (*docindex.Index, error) {
	r, done, err := src.IndexRead(ctx, true)
	if err != nil {
		return nil, err
	}
	defer done()
	last, err := r.LastChange(ctx)
	if err != nil {
		return nil, err
	}
	x := docindex.New()
	x.Lock()
	defer x.Unlock()
	if err := r.LoadDocs(ctx, nil, func(d *docindex.Doc) { x.Put(d) }); err != nil {
		return nil, err
	}
	x.Trim()
	// The build's garbage (postings outgrown, the rows read) is about as
	// large as the index: give it back now rather than let the heap
	// settle at twice the index.
	debug.FreeOSMemory()
	x.SetCursor(last)
	return x, nil
}

// CatchUp applies to x the changes up to last, reading the rows in r,
// unless x holds them already.
func CatchUp(ctx context.Context, r IndexRead, x *docindex.Index, last int64) error {
	from := x.Cursor()
	if from >= last {
		return nil
	}
	seqs, gone, err := r.Changed(ctx, from, last)
	if err != nil {
		return err
	}
	if gone {
		return errIndexBehind
	}
	var docs []*docindex.Doc
	if err := r.LoadDocs(ctx, seqs, func(d *docindex.Doc) { docs = append(docs, d) }); err != nil {
		return err
	}
	x.Lock()
	defer x.Unlock()
	if x.Cursor() != from {
		return nil // caught up by another meanwhile
	}
	found := make(map[int64]bool, len(docs))
	for _, d := range docs {
		found[d.Seq] = true
		x.Put(d)
	}
	for _, seq := range seqs {
		if !found[seq] {
			x.Remove(seq) // purged
		}
	}
	x.SetCursor(last)
	return nil
}

// Query is the index's query for f with the search's terms (folded as the
// index holds them), or false when the index cannot answer f: it is not
// built or is off, or f filters or orders on what it does not keep.
func (ix *DocIndex) Query(f quire.DocumentFilter, terms []string) (*docindex.Index, *docindex.Query, bool) {
	x := ix.x.Load()
	if x == nil || ix.off.Load() || f.Subfolders || f.NoFolder || f.Search != "" && len(terms) == 0 {
		return nil, nil, false
	}
	q := &docindex.Query{Terms: terms, Tags: f.Tags, Status: f.Status, VisibilityIs: f.VisibilityIs,
		DepartmentID: f.DepartmentID, ProjectID: f.ProjectID, FolderID: f.FolderID, All: f.Visibility.All,
		UserID: f.Visibility.UserID, DepartmentOfUser: f.Visibility.DepartmentID, Desc: f.Desc,
		Offset: max(f.Offset, 0), Limit: f.Limit}
	switch f.SortBy {
	case "", "updated_at":
		q.Order = docindex.ByUpdated
	case "relevance":
		q.Order = docindex.ByUpdated
		if f.Search != "" {
			q.Order = docindex.ByRelevance
		}
	case "created_at":
		q.Order = docindex.ByCreated
	case "status":
		q.Order = docindex.ByStatus
	default:
		return nil, nil, false
	}
	return x, q, true
}

// Search answers q from x in the snapshot of r, catching x up first when
// it is at most IndexCatchUp changes behind: the rows (seq) of the page in
// order and the total, or ok false when the store's queries must answer.
// q.Projects must be set already (read in r).
func (ix *DocIndex) Search(ctx context.Context, r IndexRead, x *docindex.Index, q *docindex.Query) (seqs []int64, total int, ok bool, err error) {
	last, err := r.LastChange(ctx)
	if err != nil {
		return nil, 0, false, err
	}
	if cur := x.Cursor(); cur < last {
		if last-cur > IndexCatchUp {
			return nil, 0, false, nil
		}
		if err := CatchUp(ctx, r, x, last); errors.Is(err, errIndexBehind) {
			ix.Wake() // the goroutine builds it again
			return nil, 0, false, nil
		} else if err != nil {
			return nil, 0, false, err
		}
	}
	q.At = last
	seqs, total, ok = x.Search(q)
	return seqs, total, ok, nil
}

// InOrder returns the documents of seqs in their order, read with the
// visibility condition into bySeq, and false when one is missing: the
// index and the database disagree, a defect which the store's queries
// answer around.
func InOrder(seqs []int64, bySeq map[int64]*quire.Document) ([]quire.Document, bool) {
	docs := make([]quire.Document, 0, len(seqs))
	for _, s := range seqs {
		d := bySeq[s]
		if d == nil {
			slog.Error("document index disagrees with the database", "seq", s)
			return nil, false
		}
		docs = append(docs, *d)
	}
	return docs, true
}

// Stats are the index's figures (quire.IndexStats).
func (ix *DocIndex) Stats() *quire.IndexStats {
	st := &quire.IndexStats{ListsByIndex: ix.ByIndex.Load(), ListsByStore: ix.ByStore.Load()}
	if x := ix.x.Load(); x != nil {
		xs := x.Stats()
		st.Ready = true
		st.Rows, st.DeadStates = int64(xs.Rows), int64(xs.Dead)
		st.Terms, st.Postings = int64(xs.Terms), int64(xs.Postings)
	}
	return st
}
