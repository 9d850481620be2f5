package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/sqlstore"
)

var _ quire.DocumentStore = (*DB)(nil)

// docColumns reads a document (alias d) without its content, which is
// appended separately so that list pages without content never copy it.
// The owner's name and the tags come from correlated subqueries rather than
// joins, so that a page is driven by the index that gives its order.
const docColumns = `d.id, d.title, d.summary, d.content_type, d.status, d.visibility,
	COALESCE(d.folder_id, ''), COALESCE(d.department_id, ''), COALESCE(d.project_id, ''),
	d.owner_id, COALESCE((SELECT u.name FROM users u WHERE u.id = d.owner_id), ''),
	d.version, d.created_at, d.updated_at,
	ARRAY(SELECT t.tag FROM document_tags t WHERE t.document_id = d.id ORDER BY t.position)`

// scanDocument reads docColumns followed by the content column.
func scanDocument(scan func(dest ...any) error) (*quire.Document, error) {
	var d quire.Document
	err := scan(&d.ID, &d.Title, &d.Summary, &d.ContentType, &d.Status, &d.Visibility,
		&d.FolderID, &d.DepartmentID, &d.ProjectID, &d.OwnerID, &d.OwnerName,
		&d.Version, &d.CreatedAt, &d.UpdatedAt, &d.Tags, &d.Content)
	if err != nil {
		return nil, err
	}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return &d, nil
}

// visible returns the condition that keeps the documents vis may see (alias
// d), binding its values in p. Only the shape of the SQL depends on vis.
func visible(vis quire.Visibility, p *params) string {
	if vis.All {
		return "TRUE"
	}
	user := p.add(vis.UserID)
	cond := `(d.owner_id = ` + user + ` OR d.visibility = 'public'`
	if vis.DepartmentID != "" {
		cond += ` OR (d.visibility = 'department' AND d.department_id = ` + p.add(vis.DepartmentID) + `)`
	}
	return cond + ` OR (d.visibility = 'project' AND d.project_id IN
		(SELECT pm.project_id FROM project_members pm WHERE pm.user_id = ` + user + `)))`
}

// live keeps the documents outside the trash (alias d), trashed those in
// it.
const (
	live    = `d.deleted_at IS NULL`
	trashed = `d.deleted_at IS NOT NULL`
)

// docRefFields names, for each foreign key of documents, the field a
// client sent it in; the check constraints likewise.
var docRefFields = map[string]string{
	"documents_folder_fkey":        "folder_id",
	"documents_department_fkey":    "department_id",
	"documents_project_fkey":       "project_id",
	"documents_owner_fkey":         "owner_id",
	"documents_content_type_check": "content_type",
	"documents_status_check":       "status",
	"documents_visibility_check":   "visibility",
}

var _ sqlstore.DocumentEngine = engine{}

// DocumentSearch is the search vector, written with the row's text.
func (engine) DocumentSearch(d *quire.Document) (string, string, any) {
	return "search", "?::tsvector", searchVector(d.Title, d.Summary, d.Content, d.Tags)
}

// DocumentTextWritten has nothing to do: the search vector is in the row.
func (engine) DocumentTextWritten(context.Context, sqlstore.Q, string, *quire.Document) error {
	return nil
}

// Keep is the DB's (Keeping).
func (e engine) Keep() *quire.Keep { return e.db.keep }

// KeepAnswer runs in the transaction of Write.
func (engine) KeepAnswer(ctx context.Context, q sqlstore.Q, k *quire.Keep, a quire.IdempotentAnswer) error {
	return keepAnswer(ctx, q.(pgQ).q.(pgx.Tx), k, a)
}

// DocumentWriteError turns the violation of a named constraint of
// documents into the VALIDATION_ERROR naming its field: the references are
// checked before the write, but a folder, say, may be deleted by another
// node in between.
func (engine) DocumentWriteError(err error) error {
	code, constraint := pgCode(err)
	field, ok := docRefFields[constraint]
	switch {
	case ok && code == codeForeignKey:
		return quire.Invalid(map[string]string{field: "does not exist"})
	case ok && code == codeCheck:
		return quire.Invalid(map[string]string{field: "is not an allowed value"})
	}
	return err
}

// ListDocuments reads the page and the total in one statement, so that
// both come from the same snapshot. A Limit of 0 or less means no limit. A
// Search with no word in it matches nothing.
//
// Orders: updated_at (also relevance without a search), created_at, title
// (case-insensitive in ASCII), status (draft, review, published, archived)
// and relevance; Desc reverses the order, relevance Desc putting the best
// match first. Ties are broken by id in the same direction, so the
// ascending order is exactly the descending one reversed and pages neither
// repeat nor skip.
func (db *DB) ListDocuments(ctx context.Context, f quire.DocumentFilter) ([]quire.Document, int, error) {
	key, dir, err := dialect.DocsOrder(f)
	if err != nil {
		return nil, 0, err
	}
	if hasNUL(f.Visibility.UserID, f.Visibility.DepartmentID, f.Status, f.VisibilityIs, f.DepartmentID,
		f.FolderID, f.ProjectID) || slices.ContainsFunc(f.Tags, func(t string) bool { return hasNUL(t) }) {
		return []quire.Document{}, 0, nil // no stored value holds U+0000
	}
	if f.Search != "" || len(f.Tags) > 0 {
		if _, ok := searchQuery(f.Search); f.Search != "" && !ok {
			return []quire.Document{}, 0, nil
		}
		// The index of documents in memory (docindex.go), when it can.
		docs, total, ok, err := db.listFromIndex(ctx, f)
		if err != nil || ok {
			if ok {
				db.index.ByIndex.Add(1)
			}
			return docs, total, err
		}
		if db.index != nil {
			db.index.ByStore.Add(1)
		}
	}
	// A total without a status, folder, tag or search filter is summed from
	// document_counts, which holds every other column the conditions read.
	counted := f.Status == "" && f.FolderID == "" && len(f.Tags) == 0 && f.Search == "" && !f.NoFolder
	var p params
	conds := []string{visible(f.Visibility, &p)}
	filters, tags := sqlstore.DocsFilters(f, p.add)
	conds = append(conds, filters...)
	// On document_tags itself (alias d, tagConds) the rows of the first
	// tag are read and the others looked up.
	var tagConds []string
	for i, v := range tags {
		if i == 0 {
			tagConds = append(tagConds, `d.live AND d.counted AND d.tag_norm = `+v)
		} else {
			tagConds = append(tagConds, `d.document_id IN (SELECT t.document_id FROM document_tags t WHERE t.tag_norm = `+v+`)`)
		}
	}
	// A tag filter without a folder or search reads document_tags alone:
	// each tag row holds its document's status, visibility columns,
	// updated_at and whether it is live, one row of each tag counted per
	// document (0020), so the total is an index-only scan of the first
	// tag's entries in document_tags_list. The conditions other than the
	// tags name columns that document_tags has too, with the same values
	// ('' for a NULL department or project, which no bound value equals).
	byTags := len(tagConds) > 0 && f.Search == "" && f.FolderID == "" && !f.NoFolder
	var tagWhere string
	if byTags {
		for _, c := range conds {
			if !strings.HasPrefix(c, "d.id IN ") {
				tagConds = append(tagConds, c)
			}
		}
		tagWhere = strings.Join(tagConds, " AND ")
	}

	var query string
	var conn querier = db.pool
	if f.Search != "" {
		q, ok := searchQuery(f.Search)
		if !ok {
			return []quire.Document{}, 0, nil
		}
		release, err := db.searchTurn(ctx)
		if err != nil {
			return nil, 0, db.fail(ctx, "list documents: wait to search", err)
		}
		defer release()
		tx, err := db.pool.BeginTx(ctx, searchTx)
		if err != nil {
			return nil, 0, db.fail(ctx, "list documents", err)
		}
		defer tx.Rollback(context.Background()) // read only: nothing to keep
		conn = tx
		query = p.add(q) + "::tsquery"
		conds = append(conds, "d.search @@ "+query)
	}

	if f.SortBy == "relevance" && query != "" {
		key = "ts_rank(" + rankWeights + ", d.search, " + query + ")"
	}
	order := key + " " + dir + ", d.id " + dir

	content := "''"
	if f.IncludeContent {
		content = "d.content"
	}
	where := strings.Join(conds, " AND ")
	var limit any // NULL: LIMIT ALL
	if f.Limit > 0 {
		limit = f.Limit
	}
	offset := max(f.Offset, 0)

	count := `SELECT count(*) FROM documents d WHERE ` + live + ` AND ` + where
	if byTags {
		count = `SELECT count(*) FROM document_tags d WHERE ` + tagWhere
	}
	if counted {
		// The same conditions hold on document_counts (alias d), whose
		// columns have the names and values of the documents' own, except
		// '' for NULL, which no bound value equals. It counts live
		// documents only, and has no deleted_at.
		count = `SELECT COALESCE(sum(d.n), 0) FROM document_counts d WHERE ` + where
	}
	where = live + ` AND ` + where
	// One statement, one snapshot, one round trip: the total rides on
	// every row of the page as an uncorrelated subquery, which PostgreSQL
	// evaluates once. (A transaction around a count and a page cost four
	// round trips, BEGIN and COMMIT included.)
	args := append(slices.Clone(p), limit, offset)
	// The page's rows are chosen in a subquery (alias d again, with every
	// column of documents), so that the owner's name and the tags are read
	// for the page alone: in the select list of the scan itself they were
	// read for every row the offset skips too (100 rows for page 5 of 20).
	page := `SELECT (` + count + `), ` + docColumns + `, ` + content + ` FROM (SELECT d.* FROM documents d WHERE ` + where +
		` ORDER BY ` + order + ` LIMIT $` + strconv.Itoa(len(p)+1) + ` OFFSET $` + strconv.Itoa(len(p)+2) + `) d
		ORDER BY ` + order
	switch {
	case query != "" && f.SortBy == "relevance":
		// Every match must be ranked anyway: one scan of the matches ranks
		// them and counts them (a window over all of them, before the
		// limit), where a separate count would find and read every match a
		// second time. Only the page's rows are then read again, by id.
		page = `SELECT top.total, ` + docColumns + `, ` + content + ` FROM (SELECT d.id, ` + key + ` AS rank,
			count(*) OVER () AS total FROM documents d WHERE ` + where + ` ORDER BY rank ` + dir + `, d.id ` + dir +
			` LIMIT $` + strconv.Itoa(len(p)+1) + ` OFFSET $` + strconv.Itoa(len(p)+2) + `) top
			JOIN documents d ON d.id = top.id ORDER BY top.rank ` + dir + `, top.id ` + dir
	case byTags && key == "d.updated_at":
		// The page in the default order, read backwards (or forwards) from
		// document_tags_list too; only its rows are read from documents.
		page = `SELECT (` + count + `), ` + docColumns + `, ` + content + ` FROM (SELECT d.document_id, d.updated_at
			FROM document_tags d WHERE ` + tagWhere + ` ORDER BY d.updated_at ` + dir + `, d.document_id ` + dir +
			` LIMIT $` + strconv.Itoa(len(p)+1) + ` OFFSET $` + strconv.Itoa(len(p)+2) + `) top
			JOIN documents d ON d.id = top.document_id ORDER BY top.updated_at ` + dir + `, top.document_id ` + dir
	}
	rows, err := conn.Query(ctx, page, args...)
	if err != nil {
		return nil, 0, db.fail(ctx, "list documents", err)
	}
	var total int
	docs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Document, error) {
		d, err := scanDocument(func(dest ...any) error { return row.Scan(append([]any{&total}, dest...)...) })
		if err != nil {
			return quire.Document{}, err
		}
		return *d, nil
	})
	if err != nil {
		return nil, 0, db.fail(ctx, "list documents", err)
	}
	if len(docs) == 0 && offset > 0 {
		// A page past the end carries no row to read the total from.
		if err := conn.QueryRow(ctx, count, p...).Scan(&total); err != nil {
			return nil, 0, db.fail(ctx, "list documents: count", err)
		}
	}
	if docs == nil {
		docs = []quire.Document{}
	}
	if f.ContentPrefix > 0 && !f.IncludeContent && len(docs) > 0 {
		if err := db.contentPrefixes(ctx, conn, docs, f.ContentPrefix); err != nil {
			return nil, 0, err
		}
	}
	return docs, total, nil
}

// contentPrefixes fills the Content of docs with the first n characters of
// each one's content, read by id in a second statement: in the list's own
// statement the expression would be computed, and carried through the
// sort, for every match rather than for the page. A document changed
// between the two reads shows its newer text; one purged meanwhile, none.
func (db *DB) contentPrefixes(ctx context.Context, q querier, docs []quire.Document, n int) error {
	ids := make([]string, len(docs))
	for i := range docs {
		ids[i] = docs[i].ID
	}
	rows, err := q.Query(ctx, `SELECT id, substr(content, 1, $2) FROM documents WHERE id = ANY($1)`, ids, n)
	if err != nil {
		return db.fail(ctx, "list documents: content", err)
	}
	byID := make(map[string]string, len(docs))
	var id, prefix string
	_, err = pgx.ForEachRow(rows, []any{&id, &prefix}, func() error {
		byID[id] = prefix
		return nil
	})
	if err != nil {
		return db.fail(ctx, "list documents: content", err)
	}
	for i := range docs {
		docs[i].Content = byID[docs[i].ID]
	}
	return nil
}
