package postgres

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/docindex"
	"quire/sqlstore"
)

// Each node keeps the index of documents in memory (package docindex) as
// the SQLite store does, followed by sqlstore.DocIndex through
// document_changes (migration 0033), whose rows are written in commit
// order: a NOTIFY on indexChannel at each document write's commit wakes
// every node's follower, and a poll every indexPoll catches up after a
// notification missed (a listener reconnecting) or a restart. A list is
// answered from the index only when it holds exactly the snapshot of the
// list's REPEATABLE READ transaction, in which the page is read too;
// otherwise by the store's own queries.
//
// Words: the index holds each document's lexemes as its vector does
// (vectorLexemes: textsearch's words, within PostgreSQL's limits), so that
// it matches the documents `search @@ query` matches. Relevance: the index
// orders by bm25 (as on SQLite), the store's queries by ts_rank; ties by
// id either way.

const (
	indexPoll    = time.Second
	indexChannel = "quire_document_changes"
	// indexKeep is how many changes a node leaves in the log below its own
	// last one, for the nodes behind it; a node further behind builds its
	// index again.
	indexKeep = 10000
)

// pgIndex is the node's index and its lifetime.
type pgIndex struct {
	*sqlstore.DocIndex
	closing   chan struct{}
	closeOnce sync.Once
	// noListen keeps the follower from listening (a test of the poll).
	noListen bool
}

func newPGIndex() *pgIndex {
	return &pgIndex{DocIndex: sqlstore.NewDocIndex(indexPoll, indexKeep), closing: make(chan struct{})}
}

// close stops the follower and waits for it.
func (ix *pgIndex) close() {
	ix.closeOnce.Do(func() { close(ix.closing) })
	ix.Wait()
}

var _ quire.SearchIndexer = (*DB)(nil)

// StartSearchIndex builds the index in the background and keeps it caught
// up until Close (quire.SearchIndexer).
func (db *DB) StartSearchIndex() {
	db.index.Start(indexSource{db}, db.index.closing, db.listenChanges)
}

// SearchIndexReady waits until the index is built and holds every change
// committed before the call (quire.SearchIndexer).
func (db *DB) SearchIndexReady(ctx context.Context) error {
	return db.fail(ctx, "search index", db.index.Ready(ctx, indexSource{db}, db.StartSearchIndex))
}

// UseSearchIndex turns the index on or off (quire.SearchIndexer).
func (db *DB) UseSearchIndex(on bool) { db.index.Use(on) }

// SearchIndexRanksApart reports that relevance order differs between the
// index (bm25) and the store's queries (ts_rank): the matches and totals
// are the same.
func (db *DB) SearchIndexRanksApart() bool { return true }

// listenChanges wakes the follower at each notification, listening again
// after a failure until ctx ends; the poll covers the gaps.
func (db *DB) listenChanges(ctx context.Context) {
	if db.index.noListen {
		return
	}
	for {
		err := db.Listen(ctx, indexChannel, db.index.Wake, func(string) { db.index.Wake() })
		if ctx.Err() != nil {
			return
		}
		slog.Warn("document index: listen", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(indexPoll):
		}
	}
}

// indexSource gives sqlstore.DocIndex its reads (sqlstore.IndexSource).
type indexSource struct{ db *DB }

// indexTx is a read of one snapshot; the build's may take longer than a
// statement may.
var (
	indexTx      = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	indexBuildTx = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly,
		BeginQuery: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = 0`}
)

func (s indexSource) IndexRead(ctx context.Context, build bool) (sqlstore.IndexRead, func(), error) {
	opts := indexTx
	if build {
		opts = indexBuildTx
	}
	tx, err := s.db.pool.BeginTx(ctx, opts)
	if err != nil {
		return nil, nil, s.db.fail(ctx, "search index", err)
	}
	return indexRead{tx}, func() { tx.Rollback(context.Background()) }, nil
}

// TrimChanges deletes the changes below below, and records that point for
// the nodes behind it.
func (s indexSource) TrimChanges(ctx context.Context, below int64) error {
	return s.db.fail(ctx, "search index: trim", pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM document_changes WHERE id < $1`, below); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE document_changes_trimmed SET below = greatest(below, $1)`, below)
		return err
	}))
}

// indexRead is one REPEATABLE READ transaction (sqlstore.IndexRead).
type indexRead struct{ tx pgx.Tx }

func (r indexRead) LastChange(ctx context.Context) (int64, error) {
	var last int64
	err := r.tx.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM document_changes`).Scan(&last)
	return last, err
}

// Changed: the changes below document_changes_trimmed may have been
// deleted by any node.
func (r indexRead) Changed(ctx context.Context, from, to int64) ([]int64, bool, error) {
	var below int64
	var seqs []int64
	err := r.tx.QueryRow(ctx, `SELECT (SELECT below FROM document_changes_trimmed),
		ARRAY(SELECT DISTINCT seq FROM document_changes WHERE id > $1 AND id <= $2)`, from, to).Scan(&below, &seqs)
	return seqs, below > from+1, err
}

func (r indexRead) LoadDocs(ctx context.Context, seqs []int64, put func(d *docindex.Doc)) error {
	where := ``
	var args []any
	if seqs != nil {
		where = ` WHERE d.seq = ANY($1)`
		args = []any{seqs}
	}
	// Each row brings its tags and their normal forms in their order: a
	// build holds one document's at a time, not every document's at once
	// (a map of them was a third of the build's heap).
	rows, err := r.tx.Query(ctx, `SELECT d.seq, d.id, d.title, d.summary, d.content, d.status, d.visibility,
		d.owner_id, COALESCE(d.department_id, ''), COALESCE(d.project_id, ''), COALESCE(d.folder_id, ''),
		d.deleted_at IS NOT NULL, d.created_at, d.updated_at, `+dialect.DocsTagsColumn()+`,
		ARRAY(SELECT t.tag_norm FROM document_tags t WHERE t.document_id = d.id ORDER BY t.position)
		FROM documents d`+where, args...)
	if err != nil {
		return err
	}
	var (
		d                docindex.Doc
		created, updated time.Time
		names, norms     []string
	)
	_, err = pgx.ForEachRow(rows, []any{&d.Seq, &d.ID, &d.Title, &d.Summary, &d.Content, &d.Status, &d.Visibility,
		&d.OwnerID, &d.DepartmentID, &d.ProjectID, &d.FolderID, &d.Trashed, &created, &updated, &names, &norms}, func() error {
		doc := d
		doc.CreatedAt, doc.UpdatedAt = created.UnixMicro(), updated.UnixMicro()
		if len(norms) > 0 {
			doc.TagNorms = slices.Clone(norms)
		}
		doc.Tags = strings.Join(names, " ")
		if !plainText(&doc) {
			// The lexemes of its vector, which the index cannot find
			// itself (a word of another script, one too long for a
			// lexeme, a text past the vector's budget).
			_, lex, words := vectorLexemes(doc.Title, doc.Summary, doc.Content, names)
			doc.Terms, doc.Tokens = make(map[string]uint32, len(lex)), uint32(words)
			for w, l := range lex {
				doc.Terms[w] = l.count
			}
		}
		put(&doc)
		return nil
	})
	return err
}

// plainText reports whether the index's own tokenizer finds in d exactly
// the lexemes of its vector: every text is ASCII (whose words it splits
// and folds as textsearch does), no word is longer than a lexeme, and the
// texts are too short for their lexemes to pass the vector's budget (a
// lexeme of n bytes costs at most 3(n+1), and takes n+1 bytes of text).
func plainText(d *docindex.Doc) bool {
	size, run := 0, 0
	for _, text := range [4]string{d.Title, d.Summary, d.Content, d.Tags} {
		size += len(text) + 1
		for i := 0; i < len(text); i++ {
			c := text[i]
			switch {
			case c >= 0x80:
				return false
			case c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				if run++; run > maxLexemeBytes {
					return false
				}
			default:
				run = 0
			}
		}
		run = 0
	}
	return size <= maxVectorBytes/3
}

// queryTerms are the words of a search folded as lexemes, each once.
func queryTerms(search string) []string {
	var terms []string
	for _, w := range searchWords(search) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	return terms
}

// listFromIndex answers f from the index, or reports ok false when the
// store's own queries must answer. It tries two statements outside a
// transaction first (listAtLast); when they cannot answer, a REPEATABLE
// READ transaction of its own, which catches the index up to its snapshot.
func (db *DB) listFromIndex(ctx context.Context, f quire.DocumentFilter) (_ []quire.Document, _ int, ok bool, _ error) {
	if db.index == nil {
		return nil, 0, false, nil
	}
	x, q, ok := db.index.Query(f, queryTerms(f.Search))
	if !ok {
		return nil, 0, false, nil
	}
	if len(q.Terms) > 0 {
		release, err := db.searchTurn(ctx)
		if err != nil {
			return nil, 0, false, db.fail(ctx, "list documents: wait to search", err)
		}
		defer release()
	}
	docs, total, ok, err := db.listAtLast(ctx, f, x, q)
	if err != nil || ok {
		return docs, total, ok, err
	}
	tx, err := db.pool.BeginTx(ctx, indexTx)
	if err != nil {
		return nil, 0, false, db.fail(ctx, "list documents", err)
	}
	defer tx.Rollback(context.Background()) // read only: nothing to keep
	if !f.Visibility.All {
		rows, err := tx.Query(ctx, `SELECT project_id FROM project_members WHERE user_id = $1`, f.Visibility.UserID)
		if err != nil {
			return nil, 0, false, db.fail(ctx, "list documents", err)
		}
		if q.Projects, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return nil, 0, false, db.fail(ctx, "list documents", err)
		}
	}
	seqs, total, ok, err := db.index.Search(ctx, indexRead{tx}, x, q)
	if err != nil || !ok {
		return nil, 0, false, db.fail(ctx, "list documents", err)
	}
	if len(seqs) == 0 {
		return []quire.Document{}, total, true, nil
	}
	bySeq, _, err := db.indexPage(ctx, tx, f, seqs)
	if err != nil {
		return nil, 0, false, err
	}
	docs, ok = sqlstore.InOrder(seqs, bySeq)
	return docs, total, ok, nil
}

// listAtLast answers f from the index with two statements and no
// transaction, when the index holds exactly the last change: the first
// reads the last change id and the caller's projects (one snapshot), the
// index chooses the page at that id, and the second reads the page's rows
// with the last change id of its own snapshot. Changes are numbered in
// commit order (migration 0033), so the same id in both means no document
// write committed between them: the rows are those the index chose from.
// Otherwise (the index behind or ahead, a write between the two, a row no
// longer visible) ok is false and the transaction's path answers.
func (db *DB) listAtLast(ctx context.Context, f quire.DocumentFilter, x *docindex.Index, q *docindex.Query) (_ []quire.Document, _ int, ok bool, _ error) {
	var last int64
	var err error
	if f.Visibility.All {
		err = db.pool.QueryRow(ctx, lastChangeSQL).Scan(&last)
	} else {
		err = db.pool.QueryRow(ctx, `SELECT (`+lastChangeSQL+`),
			ARRAY(SELECT project_id FROM project_members WHERE user_id = $1)`, f.Visibility.UserID).Scan(&last, &q.Projects)
	}
	if err != nil {
		return nil, 0, false, db.fail(ctx, "list documents", err)
	}
	if x.Cursor() != last {
		return nil, 0, false, nil
	}
	q.At = last
	seqs, total, ok := x.Search(q)
	if !ok {
		return nil, 0, false, nil
	}
	if len(seqs) == 0 {
		return []quire.Document{}, total, true, nil
	}
	bySeq, at, err := db.indexPage(ctx, db.pool, f, seqs)
	if err != nil || at != last || len(bySeq) != len(seqs) {
		return nil, 0, false, err
	}
	docs, ok := sqlstore.InOrder(seqs, bySeq)
	return docs, total, ok, nil
}

// lastChangeSQL reads the id of the last change of documents.
const lastChangeSQL = `SELECT COALESCE(max(id), 0) FROM document_changes`

// indexPage reads in q the rows of seqs that f's visibility allows, by
// seq, with the content f asks for (all, its first characters, or none),
// and the last change id of the statement's snapshot (0 when no row is
// read).
func (db *DB) indexPage(ctx context.Context, q querier, f quire.DocumentFilter, seqs []int64) (map[int64]*quire.Document, int64, error) {
	// The page, read with the visibility condition: the index chose the
	// rows, the query still decides whether the caller may see each.
	p := params{seqs}
	vis := visible(f.Visibility, &p)
	content := "''"
	switch {
	case f.IncludeContent:
		content = "d.content"
	case f.ContentPrefix > 0:
		// Only the page's rows are read: the prefix is cut in the same
		// statement.
		content = "substr(d.content, 1, " + p.add(f.ContentPrefix) + ")"
	}
	rows, err := q.Query(ctx, `SELECT (`+lastChangeSQL+`), d.seq, `+docColumns+`, `+content+` FROM documents d
		WHERE d.seq = ANY($1) AND `+live+` AND `+vis, p...)
	if err != nil {
		return nil, 0, db.fail(ctx, "list documents", err)
	}
	defer rows.Close()
	bySeq := make(map[int64]*quire.Document, len(seqs))
	var at int64
	for rows.Next() {
		var seq int64
		d, err := scanDocument(func(dest ...any) error { return rows.Scan(append([]any{&at, &seq}, dest...)...) })
		if err != nil {
			return nil, 0, db.fail(ctx, "list documents", err)
		}
		bySeq[seq] = d
	}
	if err := rows.Err(); err != nil {
		return nil, 0, db.fail(ctx, "list documents", err)
	}
	return bySeq, at, nil
}
