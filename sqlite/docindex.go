package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"quire"
	"quire/docindex"
	"quire/sqlstore"
)

// The index of documents in memory (package docindex) answers searches and
// lists filtered by tags: it matches, counts and orders them, and the page
// it names is then read here, with the visibility condition in that query
// as in every other. sqlstore.DocIndex follows the database through
// document_changes (migration 0021), which triggers on documents fill with
// the seq of every row changed; this file gives it its reads.

// indexPoll is how often the index catches up by itself; pageChunk the
// rows of a page read by one statement.
const (
	indexPoll = 500 * time.Millisecond
	pageChunk = 50
)

// docIndex is the store's index and the tokenizer of its foreign texts
// (tokenizer.go).
type docIndex struct {
	*sqlstore.DocIndex
	tok ftsTokenizer
}

// SearchIndexReady waits until the index is built and holds every change
// committed before the call (quire.SearchIndexer).
func (db *DB) SearchIndexReady(ctx context.Context) error {
	err := db.index.Ready(ctx, indexSource{db}, db.StartSearchIndex)
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("search index: %w", err)
	}
	return err
}

// StartSearchIndex builds the index in the background and keeps it caught
// up until Close (quire.SearchIndexer); a second call does nothing. quire
// serve starts it; an admin command, which lists nothing, does not pay for
// a build.
func (db *DB) StartSearchIndex() { db.index.Start(indexSource{db}, db.closing, nil) }

// UseSearchIndex turns the index on or off (quire.SearchIndexer).
func (db *DB) UseSearchIndex(on bool) { db.index.Use(on) }

// indexTick is one round of the index's goroutine (for tests).
func (db *DB) indexTick(ctx context.Context) error { return db.index.Tick(ctx, indexSource{db}) }

// indexSource gives sqlstore.DocIndex its reads (sqlstore.IndexSource).
type indexSource struct{ db *DB }

func (s indexSource) IndexRead(ctx context.Context, _ bool) (sqlstore.IndexRead, func(), error) {
	tx, err := s.db.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	return indexRead{tx: tx, q: tx, tok: &s.db.index.tok}, func() { tx.Rollback() }, nil
}

func (s indexSource) TrimChanges(ctx context.Context, below int64) error {
	return s.db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM document_changes WHERE id < ?`, below)
		return err
	})
}

// indexRead is one read transaction (sqlstore.IndexRead); q is tx, or tx
// on the read pool's prepared statements.
type indexRead struct {
	tx  *sql.Tx
	q   docQuerier
	tok *ftsTokenizer
}

func (r indexRead) LastChange(ctx context.Context) (int64, error) {
	var last int64
	err := r.q.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM document_changes`).Scan(&last)
	return last, err
}

// Changed: this process alone deletes changes, those it applied.
func (r indexRead) Changed(ctx context.Context, from, to int64) ([]int64, bool, error) {
	rows, err := r.tx.QueryContext(ctx, `SELECT DISTINCT seq FROM document_changes WHERE id > ? AND id <= ?`, from, to)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, false, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, false, rows.Err()
}

func (r indexRead) LoadDocs(ctx context.Context, seqs []int64, put func(d *docindex.Doc)) error {
	if seqs == nil {
		return loadDocs(ctx, r.tx, r.tok, "", nil, put)
	}
	for rest := seqs; len(rest) > 0; {
		chunk := rest[:min(len(rest), 500)]
		rest = rest[len(chunk):]
		args := make([]any, len(chunk))
		for i, s := range chunk {
			args[i] = s
		}
		if err := loadDocs(ctx, r.tx, r.tok, ` WHERE d.seq IN (?`+strings.Repeat(`, ?`, len(chunk)-1)+`)`, args, put); err != nil {
			return err
		}
	}
	return nil
}

// loadDocs reads the documents matching where (with args), trash included,
// and calls put with each.
// A foreign document's words are found by tok; when that fails, the index
// keeps it as foreign (no search is answered from the index while it is
// live).
func loadDocs(ctx context.Context, tx *sql.Tx, tok *ftsTokenizer, where string, args []any, put func(d *docindex.Doc)) error {
	// Each row brings its tags, as a JSON array of [tag, tag_norm] in
	// their order: a build holds one document's at a time, not every
	// document's at once (a map of them was a third of the build's heap).
	rows, err := tx.QueryContext(ctx, `SELECT d.seq, d.id, d.title, d.summary, d.content, d.status, d.visibility,
		d.owner_id, COALESCE(d.department_id, ''), COALESCE(d.project_id, ''), COALESCE(d.folder_id, ''),
		d.deleted_at, d.created_at, d.updated_at,
		(SELECT json_group_array(json_array(t.tag, t.tag_norm) ORDER BY t.position) FROM document_tags t WHERE t.document_id = d.id)
		FROM documents d`+where, args...)
	if err != nil {
		return fmt.Errorf("load documents: %w", err)
	}
	defer rows.Close()
	var (
		tagsJSON sql.RawBytes
		tags     [][2]string
		names    []string
	)
	for rows.Next() {
		d := &docindex.Doc{}
		var deleted int64
		if err := rows.Scan(&d.Seq, &d.ID, &d.Title, &d.Summary, &d.Content, &d.Status, &d.Visibility,
			&d.OwnerID, &d.DepartmentID, &d.ProjectID, &d.FolderID, &deleted, &d.CreatedAt, &d.UpdatedAt, &tagsJSON); err != nil {
			return fmt.Errorf("load documents: %w", err)
		}
		tags, names = tags[:0], names[:0]
		if string(tagsJSON) != "[]" {
			if err := json.Unmarshal(tagsJSON, &tags); err != nil {
				return fmt.Errorf("load documents: tags of %s: %w", d.ID, err)
			}
		}
		for _, t := range tags {
			names = append(names, t[0])
			d.TagNorms = append(d.TagNorms, t[1])
		}
		d.Tags = tagsText(names)
		d.Trashed = deleted != 0
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
	var terms []string
	if f.Search != "" {
		for _, w := range queryWords(f.Search) {
			term, ok := docindex.QueryWord(w)
			if !ok {
				var err error
				if term, ok, err = db.index.tok.queryTerm(ctx, w); err != nil || !ok {
					return nil, 0, false, err
				}
			}
			terms = append(terms, term)
		}
	}
	x, q, ok := db.index.Query(f, terms)
	if !ok {
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
	seqs, total, ok, err := db.index.Search(ctx, indexRead{tx: tx, q: cq, tok: &db.index.tok}, x, q)
	if err != nil || !ok {
		return nil, 0, false, err
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
	docs, ok = sqlstore.InOrder(seqs, bySeq)
	return docs, total, ok, nil
}
