package postgres

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
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

// statusRank orders statuses along their lifecycle; documents_status_order
// indexes the same expression.
const statusRank = `(CASE d.status WHEN 'draft' THEN 0 WHEN 'review' THEN 1 WHEN 'published' THEN 2 ELSE 3 END)`

// titleKey orders titles case-insensitively in ASCII, then by code point,
// like SQLite's NOCASE; documents_title indexes the same expression.
const titleKey = `lower(d.title COLLATE "C")`

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

// getDocument reads one document outside the trash that vis allows,
// content included. ENOTFOUND when there is none.
func getDocument(ctx context.Context, q querier, vis quire.Visibility, id string) (*quire.Document, error) {
	if hasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, notFound("document")
	}
	p := params{id}
	cond := visible(vis, &p)
	d, err := scanDocument(q.QueryRow(ctx, `SELECT `+docColumns+`, d.content FROM documents d
		WHERE d.id = $1 AND `+live+` AND `+cond, p...).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("document")
	}
	return d, err
}

func (db *DB) Document(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error) {
	d, err := getDocument(ctx, db.pool, vis, id)
	return d, db.fail(ctx, "read document", err)
}

// DocumentsAfter walks the primary key from after.
func (db *DB) DocumentsAfter(ctx context.Context, vis quire.Visibility, after string, limit int) ([]quire.Document, error) {
	if hasNUL(after, vis.UserID, vis.DepartmentID) {
		return []quire.Document{}, nil
	}
	p := params{after}
	cond := visible(vis, &p)
	rows, err := db.pool.Query(ctx, `SELECT `+docColumns+`, d.content FROM documents d
		WHERE d.id > $1 AND `+live+` AND `+cond+` ORDER BY d.id LIMIT `+p.add(limit), p...)
	if err != nil {
		return nil, db.fail(ctx, "documents after", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Document, error) {
		d, err := scanDocument(row.Scan)
		if err != nil {
			return quire.Document{}, err
		}
		return *d, nil
	})
	if err != nil {
		return nil, db.fail(ctx, "documents after", err)
	}
	if out == nil {
		out = []quire.Document{}
	}
	return out, nil
}

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

// docWriteError turns the violation of a named constraint of documents
// into the VALIDATION_ERROR naming its field: the references are checked
// before the write, but a folder, say, may be deleted by another node in
// between.
func docWriteError(err error) error {
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

// checkDocument refuses, as VALIDATION_ERROR naming the field, text that a
// text column cannot hold and references to a folder, department or
// project that does not exist.
func checkDocument(ctx context.Context, q querier, d *quire.Document) error {
	bad := map[string]string{}
	for field, v := range map[string]string{"title": d.Title, "content": d.Content, "summary": d.Summary,
		"content_type": d.ContentType, "status": d.Status, "visibility": d.Visibility} {
		if hasNUL(v) {
			bad[field] = msgNUL
		}
	}
	if slices.ContainsFunc(d.Tags, func(tag string) bool { return hasNUL(tag) }) {
		bad["tags"] = msgNUL
	}
	if len(bad) > 0 {
		return quire.Invalid(bad)
	}
	for _, r := range []struct{ field, table, id string }{
		{"folder_id", "folders", d.FolderID},
		{"department_id", "departments", d.DepartmentID},
		{"project_id", "projects", d.ProjectID},
	} {
		if r.id == "" {
			continue
		}
		exists := false
		if !hasNUL(r.id) {
			// r.table is one of the constants above, never client input.
			if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+r.table+` WHERE id = $1)`, r.id).Scan(&exists); err != nil {
				return err
			}
		}
		if !exists {
			return quire.Invalid(map[string]string{r.field: "does not exist"})
		}
	}
	return nil
}

// CreateDocument inserts d. d.Tags are stored in their order and spelling;
// an unknown folder, department or project is EVALIDATION naming
// folder_id, department_id or project_id.
func (db *DB) CreateDocument(ctx context.Context, d *quire.Document, now time.Time) error {
	id, at := d.ID, micro(now)
	if id == "" {
		id = newID()
	}
	// An import keeps a document's dates.
	created := at
	if !d.CreatedAt.IsZero() {
		created, at = micro(d.CreatedAt), micro(d.UpdatedAt)
		if at.Before(created) {
			at = created
		}
	}
	tags := d.Tags
	if tags == nil {
		tags = []string{}
	}
	var ownerName string
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := checkDocument(ctx, tx, d); err != nil {
			return err
		}
		if hasNUL(d.OwnerID) {
			return quire.Invalid(map[string]string{"owner_id": "does not exist"})
		}
		err := tx.QueryRow(ctx, `SELECT name FROM users WHERE id = $1`, d.OwnerID).Scan(&ownerName)
		if errors.Is(err, pgx.ErrNoRows) {
			return quire.Invalid(map[string]string{"owner_id": "does not exist"})
		}
		if err != nil {
			return err
		}
		public, err := publicURL(ctx, tx)
		if err != nil {
			return err
		}
		// The row, its tags, its links and its first version: one batch,
		// one round trip. An error is the first failing statement's.
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO documents
			(id, title, summary, content_type, status, visibility, folder_id, department_id, project_id,
			 owner_id, version, created_at, updated_at, content, search)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $14, $11, $12, $13::tsvector)`,
			id, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, nullString(d.FolderID),
			nullString(d.DepartmentID), nullString(d.ProjectID), d.OwnerID, at, d.Content,
			searchVector(d.Title, d.Summary, d.Content, tags), created)
		queueTags(b, id, tags, false)
		queueLinks(b, id, d.ContentType, d.Content, public, false)
		v := *d
		v.ID, v.Tags, v.Version = id, tags, 1
		queueVersion(b, &v, at, d.OwnerID)
		if err := docWriteError(tx.SendBatch(ctx, b).Close()); err != nil {
			return err
		}
		out := *d
		out.ID, out.Tags, out.Version, out.OwnerName = id, tags, 1, ownerName
		out.CreatedAt, out.UpdatedAt = created, at
		return keepAnswer(ctx, tx, &out)
	})
	if err != nil {
		return db.fail(ctx, "create document", err)
	}
	d.ID, d.Tags, d.Version, d.OwnerName = id, tags, 1, ownerName
	d.CreatedAt, d.UpdatedAt = created, at
	return nil
}

// queueTags queues the statements that store tags for the document id in
// their order, replacing any it had when replace is set. tag_norm is
// computed here, as package documents normalises filter tags: trimmed and
// lower-cased by Go, not by the database's locale.
func queueTags(b *pgx.Batch, id string, tags []string, replace bool) {
	if replace {
		b.Queue(`DELETE FROM document_tags WHERE document_id = $1`, id)
	}
	if len(tags) == 0 {
		return
	}
	norms := make([]string, len(tags))
	for i, tag := range tags {
		norms[i] = normalizeTag(tag)
	}
	b.Queue(`INSERT INTO document_tags (document_id, position, tag, tag_norm)
		SELECT $1, t.ord - 1, t.tag, t.norm FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(tag, norm, ord)`,
		id, tags, norms)
}

// normalizeTag is the form in which tags are matched.
func normalizeTag(tag string) string { return strings.ToLower(strings.TrimSpace(tag)) }

// queueVersion queues the statement that records d (ID and Version set) as
// its version d.Version.
func queueVersion(b *pgx.Batch, d *quire.Document, at time.Time, byUserID string) {
	b.Queue(`INSERT INTO document_versions
		(document_id, number, title, summary, content_type, status, visibility, tags,
		 folder_id, department_id, project_id, created_at, created_by, content)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		d.ID, d.Version, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, d.Tags,
		nullString(d.FolderID), nullString(d.DepartmentID), nullString(d.ProjectID), at, byUserID, d.Content)
}

// UpdateDocument implements the conflict guard with the row lock of the
// document: the first statement locks the row (or finds it invisible) and
// waits for any other node's update of it to commit; the document is then
// read afresh, compared with guard and written before the lock is
// released. Of concurrent updates with the same guard exactly one wins.
// apply may change the content fields, status, visibility, folder, tags,
// department and project; the identity, owner, version and times are the
// store's and changes to them are ignored.
func (db *DB) UpdateDocument(ctx context.Context, vis quire.Visibility, id string, guard time.Time, byUserID string,
	now time.Time, apply func(d *quire.Document) (bool, error)) (*quire.Document, error) {
	if hasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, notFound("document")
	}
	var result *quire.Document
	var applyErr error
	err := db.tx(ctx, func(tx pgx.Tx) error {
		p := params{id}
		cond := visible(vis, &p)
		var locked string
		err := tx.QueryRow(ctx, `SELECT d.id FROM documents d WHERE d.id = $1 AND `+live+` AND `+cond+` FOR NO KEY UPDATE OF d`, p...).Scan(&locked)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("document")
		}
		if err != nil {
			return err
		}
		// A statement of its own, after the lock: in READ COMMITTED it sees
		// what an update that held the lock before committed, tags included.
		cur, err := getDocument(ctx, tx, quire.Visibility{All: true}, id)
		if err != nil {
			return err
		}
		if !guard.IsZero() && !micro(guard).Equal(cur.UpdatedAt) {
			return &quire.Error{Code: quire.EDOCUMENTCONFLICT, Message: "The document was changed by someone else",
				UpdatedAt: cur.UpdatedAt, Document: cur}
		}
		next := *cur
		next.Tags = slices.Clone(cur.Tags)
		changed, err := apply(&next)
		if err != nil {
			applyErr = err
			return err
		}
		if !changed {
			result = cur
			return keepAnswer(ctx, tx, cur)
		}
		if next.Tags == nil {
			next.Tags = []string{}
		}
		if err := checkDocument(ctx, tx, &next); err != nil {
			return err
		}
		at := micro(now)
		if !at.After(cur.UpdatedAt) {
			at = cur.UpdatedAt.Add(time.Microsecond)
		}
		next.ID, next.OwnerID, next.OwnerName, next.CreatedAt = cur.ID, cur.OwnerID, cur.OwnerName, cur.CreatedAt
		next.Version, next.UpdatedAt = cur.Version+1, at
		// The row, its tags and the new version: one batch, one round trip.
		b := &pgx.Batch{}
		b.Queue(`UPDATE documents SET title = $1, summary = $2, content_type = $3, status = $4,
			visibility = $5, folder_id = $6, department_id = $7, project_id = $8, version = $9, updated_at = $10,
			content = $11, search = $12::tsvector
			WHERE id = $13`,
			next.Title, next.Summary, next.ContentType, next.Status, next.Visibility, nullString(next.FolderID),
			nullString(next.DepartmentID), nullString(next.ProjectID), next.Version, at, next.Content,
			searchVector(next.Title, next.Summary, next.Content, next.Tags), id)
		if !slices.Equal(cur.Tags, next.Tags) {
			queueTags(b, id, next.Tags, true)
		}
		if next.Content != cur.Content || next.ContentType != cur.ContentType {
			public, err := publicURL(ctx, tx)
			if err != nil {
				return err
			}
			queueLinks(b, id, next.ContentType, next.Content, public, true)
		}
		queueVersion(b, &next, at, byUserID)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return docWriteError(err)
		}
		result = &next
		return keepAnswer(ctx, tx, result)
	})
	if applyErr != nil {
		return nil, applyErr // as is, wrapped or not
	}
	if err != nil {
		return nil, db.fail(ctx, "update document", err)
	}
	return result, nil
}

// DeleteDocument moves the document to the trash; its row keeps
// everything, its search vector included.
func (db *DB) DeleteDocument(ctx context.Context, vis quire.Visibility, id, byUserID string, now time.Time) error {
	if hasNUL(id, vis.UserID, vis.DepartmentID) {
		return notFound("document")
	}
	p := params{id, micro(now), byUserID}
	cond := visible(vis, &p)
	err := db.withAnswer(ctx, func(q querier) (any, error) {
		tag, err := q.Exec(ctx, `UPDATE documents d SET deleted_at = $2, deleted_by = $3
			WHERE d.id = $1 AND `+live+` AND `+cond, p...)
		if err == nil && tag.RowsAffected() == 0 {
			err = notFound("document")
		}
		return nil, err
	})
	return db.fail(ctx, "delete document", err)
}

// versionColumns reads a version (alias v) with the name of its author.
const versionColumns = `v.document_id, v.number, v.title, v.summary, v.content_type, v.status, v.visibility,
	v.tags, COALESCE(v.folder_id, ''), COALESCE(v.department_id, ''), COALESCE(v.project_id, ''),
	v.created_at, v.created_by, COALESCE((SELECT u.name FROM users u WHERE u.id = v.created_by), '')`

func scanVersion(scan func(dest ...any) error) (quire.Version, error) {
	var v quire.Version
	err := scan(&v.DocumentID, &v.Number, &v.Title, &v.Summary, &v.ContentType, &v.Status, &v.Visibility,
		&v.Tags, &v.FolderID, &v.DepartmentID, &v.ProjectID, &v.CreatedAt, &v.CreatedByID, &v.CreatedByName, &v.Content)
	if v.Tags == nil {
		v.Tags = []string{}
	}
	v.CreatedAt = v.CreatedAt.UTC()
	return v, err
}

// Versions returns the versions newest first, with Content empty. A
// document has at least its version 1, so no row means no visible document.
func (db *DB) Versions(ctx context.Context, vis quire.Visibility, id string) ([]quire.Version, error) {
	if hasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, notFound("document")
	}
	p := params{id}
	cond := visible(vis, &p)
	rows, err := db.pool.Query(ctx, `SELECT `+versionColumns+`, ''
		FROM documents d JOIN document_versions v ON v.document_id = d.id
		WHERE d.id = $1 AND `+live+` AND `+cond+` ORDER BY v.number DESC`, p...)
	if err != nil {
		return nil, db.fail(ctx, "list versions", err)
	}
	vs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Version, error) { return scanVersion(row.Scan) })
	if err != nil {
		return nil, db.fail(ctx, "list versions", err)
	}
	if len(vs) == 0 {
		return nil, notFound("document")
	}
	return vs, nil
}

// Version returns version number of the document, content included.
// ENOTFOUND when the document is not visible or has no such version.
func (db *DB) Version(ctx context.Context, vis quire.Visibility, id string, number int) (*quire.Version, error) {
	if hasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, notFound("version")
	}
	p := params{id, number}
	cond := visible(vis, &p)
	v, err := scanVersion(db.pool.QueryRow(ctx, `SELECT `+versionColumns+`, v.content
		FROM documents d JOIN document_versions v ON v.document_id = d.id
		WHERE d.id = $1 AND v.number = $2 AND `+live+` AND `+cond, p...).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("version")
	}
	if err != nil {
		return nil, db.fail(ctx, "read version", err)
	}
	return &v, nil
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
	dir := "ASC"
	if f.Desc {
		dir = "DESC"
	}
	var key string
	switch f.SortBy {
	case "", "updated_at", "relevance":
		key = "d.updated_at"
	case "created_at":
		key = "d.created_at"
	case "title":
		key = titleKey
	case "status":
		key = statusRank
	default:
		return nil, 0, quire.Invalid(map[string]string{"sortBy": "must be one of updated_at, created_at, title, status, relevance"})
	}
	if hasNUL(f.Visibility.UserID, f.Visibility.DepartmentID, f.Status, f.VisibilityIs, f.DepartmentID,
		f.FolderID, f.ProjectID) || slices.ContainsFunc(f.Tags, func(t string) bool { return hasNUL(t) }) {
		return []quire.Document{}, 0, nil // no stored value holds U+0000
	}
	// A total without a status, folder, tag or search filter is summed from
	// document_counts, which holds every other column the conditions read.
	counted := f.Status == "" && f.FolderID == "" && len(f.Tags) == 0 && f.Search == "" && !f.NoFolder
	var p params
	conds := []string{visible(f.Visibility, &p)}
	if f.NoFolder {
		conds = append(conds, `d.folder_id IS NULL`)
	}
	folderID := f.FolderID
	if f.Subfolders {
		// The folder and every folder below it: a walk down folders_parent,
		// linear in the folders it finds (UNION drops a folder seen twice,
		// so even a cycle ends).
		conds = append(conds, `d.folder_id IN (WITH RECURSIVE sub(id) AS (SELECT `+p.add(f.FolderID)+`::text
			UNION SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id) SELECT id FROM sub)`)
		folderID = ""
	}
	for _, eq := range []struct{ column, value string }{
		{"d.status", f.Status},
		{"d.visibility", f.VisibilityIs},
		{"d.department_id", f.DepartmentID},
		{"d.folder_id", folderID},
		{"d.project_id", f.ProjectID},
	} {
		if eq.value != "" {
			conds = append(conds, eq.column+" = "+p.add(eq.value))
		}
	}
	// Tag filters: a document must carry every tag. On documents each is
	// one lookup in document_tags_norm; on document_tags itself (alias d,
	// tagConds) the rows of the first tag are read and the others looked up.
	var tagConds []string
	seen := map[string]bool{}
	for _, tag := range f.Tags {
		if seen[tag] {
			continue
		}
		seen[tag] = true
		v := p.add(tag)
		conds = append(conds, `d.id IN (SELECT t.document_id FROM document_tags t WHERE t.tag_norm = `+v+`)`)
		if len(tagConds) == 0 {
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
	page := `SELECT (` + count + `), ` + docColumns + `, ` + content + ` FROM documents d WHERE ` + where +
		` ORDER BY ` + order + ` LIMIT $` + strconv.Itoa(len(p)+1) + ` OFFSET $` + strconv.Itoa(len(p)+2)
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
