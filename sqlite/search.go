package sqlite

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"quire"
	"quire/sqlstore"
)

// ftsRank is the relevance of a match: BM25 over the columns of
// documents_fts (title, summary, content, tags), a title hit weighing ten
// times a body hit, a summary or tag hit twice. SQLite's bm25 is lower for
// better matches.
const ftsRank = `bm25(documents_fts, 10.0, 2.0, 1.0, 2.0)`

// searchWords splits free text into the words the full-text index holds:
// runs of letters and digits (with their combining marks), everything else
// being a separator. A word made of marks alone is dropped, since the index
// would find nothing for it.
func searchWords(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	})
	words := fields[:0]
	for _, w := range fields {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			words = append(words, w)
		}
	}
	return words
}

// queryWords are the words of a search as the store asks for them: each
// once, a word repeated (ignoring case) being dropped, since it cannot
// narrow the match and each costs a pass over the index; in their order,
// which is the order of bm25's sum.
func queryWords(search string) []string {
	var words []string
	seen := map[string]bool{}
	for _, w := range searchWords(search) {
		if key := strings.ToLower(w); !seen[key] {
			seen[key] = true
			words = append(words, w)
		}
	}
	return words
}

// ftsQuery turns free text into an FTS5 query in which every word must
// occur as a word or the start of one: each of queryWords becomes a quoted
// string followed by the prefix operator, and the strings are joined by
// spaces (FTS5's implicit AND). Inside a quoted string FTS5 gives no
// character a meaning but the quote, which is doubled, so no operator,
// column filter or syntax error can come from the text. It returns "" when
// the text holds no word.
func ftsQuery(search string) string {
	var terms []string
	for _, w := range queryWords(search) {
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"*`)
	}
	return strings.Join(terms, " ")
}

// ListDocuments reads the page and the total inside one read transaction,
// so that both come from the same snapshot. A Limit of 0 or less means no
// limit. A Search with no word in it matches nothing.
//
// Orders: updated_at (also relevance without a search), created_at, title
// (case-insensitive), status (draft, review, published, archived) and
// relevance; Desc reverses the order, relevance Desc putting the best match
// first. Ties are broken by id in the same direction, so the ascending order
// is exactly the descending one reversed and pages neither repeat nor skip.
func (db *DB) ListDocuments(ctx context.Context, f quire.DocumentFilter) ([]quire.Document, int, error) {
	key, dir, err := dialect.DocsOrder(f)
	if err != nil {
		return nil, 0, err
	}
	q := listQuery{f: f, key: key, dir: dir, content: "''", limit: f.Limit, offset: max(f.Offset, 0)}
	if f.IncludeContent {
		q.content = "d.content"
	} else if f.ContentPrefix > 0 {
		q.content = fmt.Sprintf("substr(d.content, 1, %d)", f.ContentPrefix)
	}
	if q.limit <= 0 {
		q.limit = -1
	}
	q.counted = f.Status == "" && f.FolderID == "" && len(f.Tags) == 0 && !f.NoFolder
	q.filters, _ = sqlstore.DocsFilters(f, func(v any) string {
		q.args = append(q.args, v)
		return "?"
	})

	match := ftsQuery(f.Search)
	if f.Search != "" && match == "" {
		return []quire.Document{}, 0, nil // no word in it
	}
	if f.Search != "" || len(f.Tags) > 0 {
		// The index of documents in memory (docindex.go), when it can.
		docs, total, ok, err := db.listFromIndex(ctx, f, q.content)
		if err != nil || ok {
			if ok {
				db.index.ByIndex.Add(1)
			}
			return docs, total, err
		}
		db.index.ByStore.Add(1)
	}
	// A search or a total counted row by row is heavy: see DB.heavy.
	tx, done, err := db.readTx(ctx, f.Search != "" || !q.counted)
	if err != nil {
		return nil, 0, fmt.Errorf("list documents: %w", err)
	}
	defer done()
	var (
		docs  []quire.Document
		total int
	)
	if f.Search == "" {
		docs, total, err = q.list(ctx, tx)
	} else {
		docs, total, err = q.search(ctx, tx, match)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("list documents: %w", err)
	}
	return docs, total, nil
}

// readTx begins a transaction of the read pool on its prepared statements,
// so that a page and its total come from one snapshot. With heavy set it
// first takes one of DB.heavy's slots, or returns ctx's error when ctx ends
// first. done ends the transaction and gives the slot back.
func (db *DB) readTx(ctx context.Context, heavy bool) (tx cachedQuerier, done func(), err error) {
	release := func() {}
	if heavy {
		select {
		case db.heavy <- struct{}{}:
			release = func() { <-db.heavy }
		case <-ctx.Done():
			return cachedQuerier{}, nil, ctx.Err()
		}
	}
	db.reads.preparePending(ctx)
	sqlTx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		release()
		return cachedQuerier{}, nil, err
	}
	return cachedQuerier{c: db.reads, tx: sqlTx}, func() { sqlTx.Rollback(); release() }, nil
}

// listQuery is one ListDocuments call on its way to SQL. Every value is
// bound; only the shape of the SQL depends on the filter.
type listQuery struct {
	f             quire.DocumentFilter
	key, dir      string // the order, before the tie on id
	content       string // the content column, or ''
	filters       []string
	args          []any // of filters
	limit, offset int
	// counted is set when every filter reads only columns of
	// document_counts, so that the total can be summed from it.
	counted bool
}

// where joins the filters, the live condition (documents outside the
// trash) and the visibility condition vis with its args.
func (q *listQuery) where(vis string, visArgs []any) (string, []any) {
	conds := append(append([]string{}, q.filters...), live, vis)
	return ` WHERE ` + strings.Join(conds, " AND "), append(append([]any{}, q.args...), visArgs...)
}

// whereCounts is where for document_counts, which counts live documents
// only and has no deleted_at.
func (q *listQuery) whereCounts(vis string, visArgs []any) (string, []any) {
	conds := append(append([]string{}, q.filters...), vis)
	return ` WHERE ` + strings.Join(conds, " AND "), append(append([]any{}, q.args...), visArgs...)
}

// list sums the total from document_counts when the filters allow it, and
// otherwise counts through the visibility indexes, which give every visible
// document without reading a row; then it reads the page by walking the
// index of the order, which stops after one page.
func (q *listQuery) list(ctx context.Context, tx docQuerier) ([]quire.Document, int, error) {
	var total int
	where, args := q.where(visible(q.f.Visibility))
	count := `SELECT count(*) FROM documents d` + where
	if q.counted {
		// The same conditions hold on document_counts (alias d), whose
		// columns have the names and values of the documents' own, except
		// '' for NULL, which no bound value equals.
		where, args = q.whereCounts(visible(q.f.Visibility))
		count = `SELECT COALESCE(sum(d.n), 0) FROM document_counts d` + where
	}
	if err := tx.QueryRowContext(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count: %w", err)
	}
	docs := []quire.Document{}
	if total == 0 || (q.limit > 0 && q.offset >= total) {
		return docs, total, nil
	}
	where, args = q.where(visibleInOrder(q.f.Visibility))
	rows, err := tx.QueryContext(ctx, `SELECT `+docColumns+`, `+q.content+` FROM documents d`+where+
		` ORDER BY `+q.key+` `+q.dir+`, d.id `+q.dir+` LIMIT ? OFFSET ?`, append(args, q.limit, q.offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		d, _, err := scanDocument(rows.Scan)
		if err != nil {
			return nil, 0, err
		}
		docs = append(docs, *d)
	}
	return docs, total, rows.Err()
}

// search runs the full-text match once: the visible matches, each with its
// id and sort key only, are set aside (m), counted and ordered, and only
// the rows of the page are then read whole. Each match is checked against
// visibility and the filters in documents_by_seq, which is keyed by the
// rowid the match yields and carries those columns, rather than in the
// row with its body.
func (q *listQuery) search(ctx context.Context, tx docQuerier, match string) ([]quire.Document, int, error) {
	key, keyDir, collate := q.key, q.dir, ""
	switch q.f.SortBy {
	case "relevance":
		// bm25 is lower for better matches: best first is ascending.
		key, keyDir = ftsRank, "DESC"
		if q.f.Desc {
			keyDir = "ASC"
		}
	case "title":
		collate = " COLLATE NOCASE"
	}
	order := func(alias string) string {
		return alias + "k" + collate + " " + keyDir + ", " + alias + "id " + q.dir
	}
	where, args := q.where(visible(q.f.Visibility))
	matches := `m AS MATERIALIZED (SELECT d.seq AS seq, d.id AS id, ` + key + ` AS k
		FROM documents_fts CROSS JOIN documents d INDEXED BY documents_by_seq ON d.seq = documents_fts.rowid` +
		where + ` AND documents_fts MATCH ?)`
	args = append(args, match)

	rows, err := tx.QueryContext(ctx, `WITH `+matches+`
		SELECT `+docColumns+`, `+q.content+`, (SELECT count(*) FROM m)
		FROM (SELECT seq, id, k FROM m ORDER BY `+order("")+` LIMIT ? OFFSET ?) p
		CROSS JOIN documents d ON d.seq = p.seq
		ORDER BY `+order("p."), append(args, q.limit, q.offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	docs, total := []quire.Document{}, 0
	for rows.Next() {
		d, _, err := scanDocument(rows.Scan, &total)
		if err != nil {
			return nil, 0, err
		}
		docs = append(docs, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(docs) == 0 && q.offset > 0 {
		// A page past the end carries no row to read the total from.
		err := tx.QueryRowContext(ctx, `WITH `+matches+` SELECT count(*) FROM m`, args...).Scan(&total)
		if err != nil {
			return nil, 0, fmt.Errorf("count: %w", err)
		}
	}
	return docs, total, nil
}
