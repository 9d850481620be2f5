package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"quire"
	"quire/docindex"
)

// The index of documents in memory (package docindex) answers searches and
// lists filtered by tags: it matches, counts and orders them, and the page
// it names is then read here, with the visibility condition in that query
// as in every other.
//
// It follows the database through document_changes (migration 0021), which
// triggers on documents fill with the seq of every row changed. A list
// reads, in its own read transaction, the last change id; when the index
// is behind it applies the changes after its own last one, reading their
// rows in that same transaction, and it answers only when it then holds
// exactly that id, so that its total and its page come from the one
// snapshot the list reads. Otherwise (still building, too far behind, a
// change applied by a newer snapshot meanwhile, a search it cannot answer
// exactly) the list is answered by the store's own queries, as it was
// before the index existed. A goroutine (StartSearchIndex) builds the
// index, keeps it caught up every poll interval, deletes the changes
// applied, and builds it again when replaced states outnumber the live
// ones.

// indexPoll is how often the index catches up by itself; indexCatchUp the
// changes a list applies before answering, beyond which it lets the
// store's queries answer and the goroutine catch up.
const (
	indexPoll    = 500 * time.Millisecond
	indexCatchUp = 2000
	pageChunk    = 50
)

// docIndex is the store's index and its state.
type docIndex struct {
	x     atomic.Pointer[docindex.Index] // nil until built
	off   atomic.Bool                    // UseSearchIndex(false)
	build sync.Mutex                     // one build or catch-up at a time
	start sync.Once                      // StartSearchIndex
	// started is set once the goroutine runs, for Close to wait for it.
	started atomic.Bool
	// trimmed is the change id below which document_changes was emptied.
	trimmed int64
	// tok tokenizes foreign texts (tokenizer.go).
	tok ftsTokenizer
	// byIndex and byStore count the searches and tag-filtered lists
	// answered from the index and by the store's queries.
	byIndex, byStore atomic.Int64
	// rebuildMin is the fewest dead states that make a build (more than
	// the live documents are needed too), trimEvery the changes applied
	// between two deletions of the applied ones; tests lower them.
	rebuildMin, trimEvery atomic.Int64
}

// SearchIndexReady waits until the index is built and holds every change
// committed before the call (quire.SearchIndexer).
func (db *DB) SearchIndexReady(ctx context.Context) error {
	db.StartSearchIndex()
	for {
		if x := db.index.x.Load(); x != nil {
			caught, err := db.catchUpNow(ctx, x)
			if err != nil || caught {
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
func (db *DB) catchUpNow(ctx context.Context, x *docindex.Index) (bool, error) {
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("search index: %w", err)
	}
	defer tx.Rollback()
	last, err := lastChange(ctx, tx)
	if err != nil {
		return false, fmt.Errorf("search index: %w", err)
	}
	if err := catchUp(ctx, tx, &db.index.tok, x, last); err != nil {
		return false, fmt.Errorf("search index: %w", err)
	}
	return x.Cursor() >= last, nil
}

// StartSearchIndex builds the index in the background and keeps it caught
// up until Close (quire.SearchIndexer); a second call does nothing. quire
// serve starts it; an admin command, which lists nothing, does not pay for
// a build.
func (db *DB) StartSearchIndex() {
	db.index.start.Do(func() {
		db.index.started.Store(true)
		go func() {
			defer close(db.indexDone)
			db.runIndex()
		}()
	})
}

// UseSearchIndex turns the index on or off (quire.SearchIndexer).
func (db *DB) UseSearchIndex(on bool) { db.index.off.Store(!on) }

// runIndex builds the index, then keeps it caught up until the DB closes.
func (db *DB) runIndex() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-db.closing
		cancel()
	}()
	t := time.NewTicker(indexPoll)
	defer t.Stop()
	for {
		if err := db.indexTick(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("document index", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// indexTick builds the index when there is none or when it holds more dead
// states than live ones, and otherwise catches it up.
func (db *DB) indexTick(ctx context.Context) error {
	db.index.build.Lock()
	defer db.index.build.Unlock()
	x := db.index.x.Load()
	if x != nil {
		if st := x.Stats(); int64(st.Dead) > max(int64(st.Rows), db.index.rebuildMin.Load()) {
			x = nil // more replaced states than documents: build afresh
		}
	}
	if x == nil {
		nx, err := db.buildIndex(ctx)
		if err != nil {
			return err
		}
		db.index.x.Store(nx)
		x = nx
	}
	if _, err := db.catchUpNow(ctx, x); err != nil {
		return err
	}
	// Delete the changes applied, but the last (its id is the highest,
	// which keeps the next ones above it).
	if cur := x.Cursor(); cur-db.index.trimmed >= db.index.trimEvery.Load() {
		err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM document_changes WHERE id < ?`, cur)
			return err
		})
		if err != nil {
			return err
		}
		db.index.trimmed = cur
	}
	return nil
}

// buildIndex reads every document into a new index, in one snapshot.
func (db *DB) buildIndex(ctx context.Context) (*docindex.Index, error) {
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	last, err := lastChange(ctx, tx)
	if err != nil {
		return nil, err
	}
	x := docindex.New()
	x.Lock()
	defer x.Unlock()
	if err := loadDocs(ctx, tx, &db.index.tok, "", nil, func(d *docindex.Doc) { x.Put(d) }); err != nil {
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

func lastChange(ctx context.Context, tx docQuerier) (int64, error) {
	var last int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM document_changes`).Scan(&last)
	return last, err
}

// catchUp applies to x the changes up to last, reading the rows in tx,
// unless x holds them already.
func catchUp(ctx context.Context, tx *sql.Tx, tok *ftsTokenizer, x *docindex.Index, last int64) error {
	from := x.Cursor()
	if from >= last {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT seq FROM document_changes WHERE id > ? AND id <= ?`, from, last)
	if err != nil {
		return err
	}
	var seqs []any
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return err
		}
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var docs []*docindex.Doc
	for rest := seqs; len(rest) > 0; {
		chunk := rest[:min(len(rest), 500)]
		rest = rest[len(chunk):]
		err := loadDocs(ctx, tx, tok, ` WHERE d.seq IN (?`+strings.Repeat(`, ?`, len(chunk)-1)+`)`, chunk,
			func(d *docindex.Doc) { docs = append(docs, d) })
		if err != nil {
			return err
		}
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
	for _, s := range seqs {
		if seq := s.(int64); !found[seq] {
			x.Remove(seq) // purged
		}
	}
	x.SetCursor(last)
	return nil
}

// loadDocs reads the documents matching where (with args), trash included,
// and calls put with each.
// A foreign document's words are found by tok; when that fails, the index
// keeps it as foreign (no search is answered from the index while it is
// live).
func loadDocs(ctx context.Context, tx *sql.Tx, tok *ftsTokenizer, where string, args []any, put func(d *docindex.Doc)) error {
	tags := map[string][][2]string{} // id -> (tag, tag_norm) in order
	tagsWhere := ``
	if where != "" {
		tagsWhere = ` WHERE t.document_id IN (SELECT d.id FROM documents d` + where + `)`
	}
	// In the order of the primary key: no sort (whose memory SQLite's
	// allocator would keep after a build).
	rows, err := tx.QueryContext(ctx, `SELECT t.document_id, t.tag, t.tag_norm FROM document_tags t`+tagsWhere+
		` ORDER BY t.document_id, t.position`, args...)
	if err != nil {
		return fmt.Errorf("load tags: %w", err)
	}
	for rows.Next() {
		var id, tag, norm string
		if err := rows.Scan(&id, &tag, &norm); err != nil {
			rows.Close()
			return fmt.Errorf("load tags: %w", err)
		}
		tags[id] = append(tags[id], [2]string{tag, norm})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load tags: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `SELECT d.seq, d.id, d.title, d.summary, d.content, d.status, d.visibility,
		d.owner_id, COALESCE(d.department_id, ''), COALESCE(d.project_id, ''), COALESCE(d.folder_id, ''),
		d.deleted_at, d.created_at, d.updated_at FROM documents d`+where, args...)
	if err != nil {
		return fmt.Errorf("load documents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d := &docindex.Doc{}
		var deleted int64
		if err := rows.Scan(&d.Seq, &d.ID, &d.Title, &d.Summary, &d.Content, &d.Status, &d.Visibility,
			&d.OwnerID, &d.DepartmentID, &d.ProjectID, &d.FolderID, &deleted, &d.CreatedAt, &d.UpdatedAt); err != nil {
			return fmt.Errorf("load documents: %w", err)
		}
		d.Trashed = deleted != 0
		names := make([]string, 0, len(tags[d.ID]))
		for _, t := range tags[d.ID] {
			names = append(names, t[0])
			d.TagNorms = append(d.TagNorms, t[1])
		}
		d.Tags = tagsText(names)
		if docindex.Foreign(d) {
			terms, n, _, err := tok.words(ctx, [4]string{d.Title, d.Summary, d.Content, d.Tags})
			if err != nil {
				slog.Warn("document index: tokenize", "seq", d.Seq, "err", err)
			} else {
				d.Terms, d.Tokens = terms, n
			}
		}
		put(d)
	}
	return rows.Err()
}

// listFromIndex answers f from the index in a read transaction of its
// own, or reports ok false when the store's own queries must answer.
func (db *DB) listFromIndex(ctx context.Context, f quire.DocumentFilter, content string) (_ []quire.Document, _ int, ok bool, _ error) {
	x := db.index.x.Load()
	if x == nil || db.index.off.Load() || f.Subfolders || f.NoFolder {
		return nil, 0, false, nil
	}
	q := docindex.Query{Tags: f.Tags, Status: f.Status, VisibilityIs: f.VisibilityIs, DepartmentID: f.DepartmentID,
		ProjectID: f.ProjectID, FolderID: f.FolderID, All: f.Visibility.All, UserID: f.Visibility.UserID,
		DepartmentOfUser: f.Visibility.DepartmentID, Desc: f.Desc, Offset: max(f.Offset, 0), Limit: f.Limit}
	if f.Search != "" {
		for _, w := range queryWords(f.Search) {
			term, ok := docindex.QueryWord(w)
			if !ok {
				var err error
				if term, ok, err = db.index.tok.queryTerm(ctx, w); err != nil || !ok {
					return nil, 0, false, err
				}
			}
			q.Terms = append(q.Terms, term)
		}
		if len(q.Terms) == 0 {
			return nil, 0, false, nil
		}
	}
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
		return nil, 0, false, nil
	}
	if len(q.Terms) > 0 {
		// A search's cost grows with the postings of its words (a word of
		// one letter is the prefix of thousands of terms): see DB.heavy.
		select {
		case db.heavy <- struct{}{}:
			defer func() { <-db.heavy }()
		case <-ctx.Done():
			return nil, 0, false, ctx.Err()
		}
	}
	db.reads.preparePending(ctx)
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, false, fmt.Errorf("list documents: %w", err)
	}
	defer tx.Rollback()
	cq := cachedQuerier{c: db.reads, tx: tx}
	last, err := lastChange(ctx, cq)
	if err != nil {
		return nil, 0, false, err
	}
	if cur := x.Cursor(); cur < last {
		if last-cur > indexCatchUp {
			return nil, 0, false, nil
		}
		if err := catchUp(ctx, tx, &db.index.tok, x, last); err != nil {
			return nil, 0, false, err
		}
	}
	if !f.Visibility.All {
		rows, err := cq.QueryContext(ctx, `SELECT project_id FROM project_members WHERE user_id = ?`, f.Visibility.UserID)
		if err != nil {
			return nil, 0, false, err
		}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return nil, 0, false, err
			}
			q.Projects = append(q.Projects, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, false, err
		}
	}
	q.At = last
	seqs, total, ok := x.Search(&q)
	if !ok {
		return nil, 0, false, nil
	}
	docs := make([]quire.Document, 0, len(seqs))
	if len(seqs) == 0 {
		return docs, total, true, nil
	}
	// The page, read with the visibility condition: the index chose the
	// rows, the query still decides whether the caller may see each. In
	// chunks of at most pageChunk rows, so that the statements are few and
	// prepared once.
	vis, visArgs := visible(f.Visibility)
	bySeq := make(map[int64]*quire.Document, len(seqs))
	for rest := seqs; len(rest) > 0; {
		chunk := rest[:min(len(rest), pageChunk)]
		rest = rest[len(chunk):]
		args := make([]any, 0, len(chunk)+len(visArgs))
		for _, s := range chunk {
			args = append(args, s)
		}
		args = append(args, visArgs...)
		rows, err := cq.QueryContext(ctx, `SELECT `+docColumns+`, `+content+` FROM documents d WHERE d.seq IN (?`+
			strings.Repeat(`, ?`, len(chunk)-1)+`) AND `+live+` AND `+vis, args...)
		if err != nil {
			return nil, 0, false, err
		}
		for rows.Next() {
			d, seq, err := scanDocument(rows.Scan)
			if err != nil {
				rows.Close()
				return nil, 0, false, err
			}
			bySeq[seq] = d
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, false, err
		}
	}
	for _, s := range seqs {
		d := bySeq[s]
		if d == nil {
			// The index and the database disagree: a defect, which the
			// store's queries answer around.
			slog.Error("document index disagrees with the database", "seq", s)
			return nil, 0, false, nil
		}
		docs = append(docs, *d)
	}
	return docs, total, true, nil
}
