package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"quire"
)

var _ quire.DocumentStore = (*DB)(nil)

// docQuerier is what both the read pool, a read transaction and a write
// transaction offer, so that one query serves them all.
type docQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// docColumns reads a document (alias d) without its content, which is
// appended separately so that list pages without content never copy it.
// The owner's name and the tags come from correlated subqueries rather than
// joins, so that the planner always drives a page from the documents index
// that gives its order.
const docColumns = `d.seq, d.id, d.title, d.summary, d.content_type, d.status, d.visibility,
	COALESCE(d.folder_id, ''), COALESCE(d.department_id, ''), COALESCE(d.project_id, ''),
	d.owner_id, COALESCE((SELECT u.name FROM users u WHERE u.id = d.owner_id), ''),
	d.version, d.created_at, d.updated_at,
	(SELECT json_group_array(t.tag ORDER BY t.position) FROM document_tags t WHERE t.document_id = d.id)`

// statusRank orders statuses along their lifecycle. documents_status_order
// indexes the same expression.
const statusRank = `(CASE d.status WHEN 'draft' THEN 0 WHEN 'review' THEN 1 WHEN 'published' THEN 2 ELSE 3 END)`

// scanDocument reads docColumns followed by the content column and then
// into extra, if the query has more columns.
func scanDocument(scan func(dest ...any) error, extra ...any) (*quire.Document, int64, error) {
	var (
		d                    quire.Document
		seq                  int64
		createdAt, updatedAt int64
		tags                 string
	)
	err := scan(append([]any{&seq, &d.ID, &d.Title, &d.Summary, &d.ContentType, &d.Status, &d.Visibility,
		&d.FolderID, &d.DepartmentID, &d.ProjectID, &d.OwnerID, &d.OwnerName,
		&d.Version, &createdAt, &updatedAt, &tags, &d.Content}, extra...)...)
	if err != nil {
		return nil, 0, err
	}
	if err := json.Unmarshal([]byte(tags), &d.Tags); err != nil {
		return nil, 0, fmt.Errorf("document %s tags: %w", d.ID, err)
	}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	d.CreatedAt, d.UpdatedAt = fromMicros(createdAt), fromMicros(updatedAt)
	return &d, seq, nil
}

// visible returns the condition that keeps the documents vis may see (alias
// d), and its arguments. Only the shape of the SQL depends on vis; every
// value is bound.
func visible(vis quire.Visibility) (string, []any) {
	return visibleSQL(vis, "")
}

// visibleInOrder is visible for queries that return rows in an index
// order. SQLite's unary + keeps a column from choosing an index: without
// it the planner would collect every visible row through the visibility
// indexes and sort them all, where walking the order index (which carries
// the visibility columns) stops after one page.
func visibleInOrder(vis quire.Visibility) (string, []any) {
	return visibleSQL(vis, "+")
}

func visibleSQL(vis quire.Visibility, op string) (string, []any) {
	if vis.All {
		return "1", nil
	}
	cond := `(` + op + `d.owner_id = ? OR ` + op + `d.visibility = 'public'`
	args := []any{vis.UserID}
	if vis.DepartmentID != "" {
		cond += ` OR (` + op + `d.visibility = 'department' AND ` + op + `d.department_id = ?)`
		args = append(args, vis.DepartmentID)
	}
	cond += ` OR (` + op + `d.visibility = 'project' AND ` + op +
		`d.project_id IN (SELECT pm.project_id FROM project_members pm WHERE pm.user_id = ?)))`
	args = append(args, vis.UserID)
	return cond, args
}

// live keeps the documents outside the trash (alias d), trashed those in
// it. Both are written out with the literal 0 so that the planner can use
// the partial indexes of migration 0008, which hold one side each.
const (
	live    = `d.deleted_at = 0`
	trashed = `d.deleted_at <> 0`
)

// trashColumns read who deleted a document and when, after docColumns and
// the content.
const trashColumns = `d.deleted_at, COALESCE(d.deleted_by, ''),
	COALESCE((SELECT u.name FROM users u WHERE u.id = d.deleted_by), '')`

// getDocument reads one document outside the trash that the visibility
// allows, content included, and its rowid. ENOTFOUND when there is none.
func getDocument(ctx context.Context, q docQuerier, vis quire.Visibility, id string) (*quire.Document, int64, error) {
	cond, args := visible(vis)
	args = append([]any{id}, args...)
	d, seq, err := scanDocument(q.QueryRowContext(ctx,
		`SELECT `+docColumns+`, d.content FROM documents d WHERE d.id = ? AND `+live+` AND `+cond, args...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, notFound("document")
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read document %s: %w", id, err)
	}
	return d, seq, nil
}

// scanTrashed reads docColumns, the content and trashColumns.
func scanTrashed(scan func(dest ...any) error) (*quire.Document, error) {
	var (
		deletedAt int64
		by, name  string
	)
	d, _, err := scanDocument(scan, &deletedAt, &by, &name)
	if err != nil {
		return nil, err
	}
	d.DeletedAt, d.DeletedByID, d.DeletedByName = fromMicros(deletedAt), by, name
	return d, nil
}

func (db *DB) Document(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error) {
	d, _, err := getDocument(ctx, cachedQuerier{c: db.reads}, vis, id)
	return d, err
}

// DocumentsAfter walks the primary key from after.
func (db *DB) DocumentsAfter(ctx context.Context, vis quire.Visibility, after string, limit int) ([]quire.Document, error) {
	cond, args := visibleInOrder(vis)
	args = append([]any{after}, append(args, limit)...)
	rows, err := db.read.QueryContext(ctx, `SELECT `+docColumns+`, d.content FROM documents d
		WHERE d.id > ? AND `+live+` AND `+cond+` ORDER BY d.id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("documents after: %w", err)
	}
	defer rows.Close()
	out := []quire.Document{}
	for rows.Next() {
		d, _, err := scanDocument(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("documents after: %w", err)
		}
		out = append(out, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("documents after: %w", err)
	}
	return out, nil
}

// CreateDocument inserts d. d.Tags are stored in their order and spelling;
// an unknown folder, department or project is EVALIDATION naming
// folder_id, department_id or project_id.
func (db *DB) CreateDocument(ctx context.Context, d *quire.Document, now time.Time) error {
	id, at := d.ID, toMicros(now)
	if id == "" {
		id = newID()
	}
	created, updated := datesOf(d, at)
	tags := d.Tags
	if tags == nil {
		tags = []string{}
	}
	var out quire.Document
	err := db.tx(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		q := cachedQuerier{c: db.writes, tx: sqlTx}
		ownerName, err := db.insertDocument(ctx, q, d, id, tags, created, updated)
		if err != nil {
			return err
		}
		out = *d
		out.ID, out.Tags, out.Version, out.OwnerName = id, tags, 1, ownerName
		out.CreatedAt, out.UpdatedAt = fromMicros(created), fromMicros(updated)
		return db.keepAnswer(ctx, q, &out)
	})
	if err != nil {
		return err
	}
	*d = out
	return nil
}

// datesOf returns the creation and update times of a document created at
// at: d's own when an import keeps them.
func datesOf(d *quire.Document, at int64) (created, updated int64) {
	if d.CreatedAt.IsZero() {
		return at, at
	}
	created, updated = toMicros(d.CreatedAt), toMicros(d.UpdatedAt)
	if updated < created {
		updated = created
	}
	return created, updated
}

// insertDocument is CreateDocument's transaction: it inserts d as the
// document id with tags, created and last updated at the given times, and
// returns its owner's name.
func (db *DB) insertDocument(ctx context.Context, tx cachedQuerier, d *quire.Document, id string, tags []string,
	created, at int64) (ownerName string, err error) {
	if err := checkDocumentRefs(ctx, tx, d); err != nil {
		return "", err
	}
	err = tx.QueryRowContext(ctx, `SELECT name FROM users WHERE id = ?`, d.OwnerID).Scan(&ownerName)
	if errors.Is(err, sql.ErrNoRows) {
		return "", quire.Invalid(map[string]string{"owner_id": "does not exist"})
	}
	if err != nil {
		return "", fmt.Errorf("create document: read owner: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO documents
		(id, title, summary, content_type, status, visibility, folder_id, department_id, project_id,
		 owner_id, version, created_at, updated_at, content)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
		id, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, nullString(d.FolderID),
		nullString(d.DepartmentID), nullString(d.ProjectID), d.OwnerID, created, at, d.Content)
	if err != nil {
		return "", fmt.Errorf("create document: %w", err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return "", fmt.Errorf("create document: %w", err)
	}
	db.fts.created(seq)
	if err := writeTags(ctx, tx, id, tags, false); err != nil {
		return "", err
	}
	if err := writeLinks(ctx, tx, id, d.ContentType, d.Content, false); err != nil {
		return "", err
	}
	v := *d
	v.ID, v.Tags, v.Version = id, tags, 1
	return ownerName, insertVersion(ctx, tx, &v, at, d.OwnerID)
}

// checkDocumentRefs turns a folder, department or project that does not
// exist into EVALIDATION naming the field, before the foreign key would
// fail without saying which one.
func checkDocumentRefs(ctx context.Context, tx cachedQuerier, d *quire.Document) error {
	refs := []struct{ field, table, id string }{
		{"folder_id", "folders", d.FolderID},
		{"department_id", "departments", d.DepartmentID},
		{"project_id", "projects", d.ProjectID},
	}
	for _, r := range refs {
		if r.id == "" {
			continue
		}
		var n int
		// r.table is one of the constants above, never client input.
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+r.table+` WHERE id = ?`, r.id).Scan(&n); err != nil {
			return fmt.Errorf("check %s: %w", r.field, err)
		}
		if n == 0 {
			return quire.Invalid(map[string]string{r.field: "does not exist"})
		}
	}
	return nil
}

// writeTags stores tags for the document id in their order, replacing any
// it had when replace is set.
func writeTags(ctx context.Context, tx cachedQuerier, id string, tags []string, replace bool) error {
	if replace {
		if _, err := tx.ExecContext(ctx, `DELETE FROM document_tags WHERE document_id = ?`, id); err != nil {
			return fmt.Errorf("write tags: %w", err)
		}
	}
	for i, tag := range tags {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO document_tags (document_id, position, tag, tag_norm) VALUES (?, ?, ?, ?)`,
			id, i, tag, normalizeTag(tag)); err != nil {
			return fmt.Errorf("write tags: %w", err)
		}
	}
	return nil
}

// normalizeTag is the form in which tags are matched; package documents
// normalises filter tags the same way.
func normalizeTag(tag string) string { return strings.ToLower(strings.TrimSpace(tag)) }

// insertVersion records d (ID and Version set) as its version d.Version.
func insertVersion(ctx context.Context, tx cachedQuerier, d *quire.Document, at int64, byUserID string) error {
	tags, err := json.Marshal(d.Tags)
	if err != nil {
		return fmt.Errorf("record version: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO document_versions
		(document_id, number, title, summary, content_type, status, visibility, tags,
		 folder_id, department_id, project_id, created_at, created_by, content)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.Version, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, string(tags),
		nullString(d.FolderID), nullString(d.DepartmentID), nullString(d.ProjectID), at, byUserID, d.Content)
	if err != nil {
		return fmt.Errorf("record version %d of %s: %w", d.Version, d.ID, err)
	}
	return nil
}

// UpdateDocument implements the conflict guard inside one BEGIN IMMEDIATE
// transaction: the read, the comparison and the write happen under the one
// write lock, so of concurrent updates with the same guard exactly one wins.
// apply may change the content fields, status, visibility, folder, tags,
// department and project; the identity, owner, version and times are the
// store's and changes to them are ignored.
func (db *DB) UpdateDocument(ctx context.Context, vis quire.Visibility, id string, guard time.Time, byUserID string,
	now time.Time, apply func(d *quire.Document) (bool, error)) (*quire.Document, error) {
	var result *quire.Document
	err := db.tx(ctx, func(ctx context.Context, sqlTx *sql.Tx) (err error) {
		q := cachedQuerier{c: db.writes, tx: sqlTx}
		result, err = db.updateDocument(ctx, q, vis, id, guard, byUserID, now, apply)
		if err != nil {
			return err
		}
		return db.keepAnswer(ctx, q, result)
	})
	if err != nil {
		return nil, err
	}
	return result, nil
}

// updateDocument is UpdateDocument's transaction.
func (db *DB) updateDocument(ctx context.Context, tx cachedQuerier, vis quire.Visibility, id string, guard time.Time,
	byUserID string, now time.Time, apply func(d *quire.Document) (bool, error)) (*quire.Document, error) {
	cur, seq, err := getDocument(ctx, tx, vis, id)
	if err != nil {
		return nil, err
	}
	if !guard.IsZero() && toMicros(guard) != toMicros(cur.UpdatedAt) {
		return nil, &quire.Error{Code: quire.EDOCUMENTCONFLICT, Message: "The document was changed by someone else",
			UpdatedAt: cur.UpdatedAt, Document: cur}
	}
	next := *cur
	next.Tags = append([]string{}, cur.Tags...)
	changed, err := apply(&next)
	if err != nil {
		return nil, err
	}
	if !changed {
		return cur, nil
	}
	if next.Tags == nil {
		next.Tags = []string{}
	}
	// A folder, department or project the document already has exists:
	// the foreign keys hold it.
	moved := quire.Document{}
	if next.FolderID != cur.FolderID {
		moved.FolderID = next.FolderID
	}
	if next.DepartmentID != cur.DepartmentID {
		moved.DepartmentID = next.DepartmentID
	}
	if next.ProjectID != cur.ProjectID {
		moved.ProjectID = next.ProjectID
	}
	if err := checkDocumentRefs(ctx, tx, &moved); err != nil {
		return nil, err
	}
	prev := toMicros(cur.UpdatedAt)
	at := max(toMicros(now), prev+1)
	next.ID, next.OwnerID, next.OwnerName, next.CreatedAt = cur.ID, cur.OwnerID, cur.OwnerName, cur.CreatedAt
	next.Version, next.UpdatedAt = cur.Version+1, fromMicros(at)
	// The UPDATE names only the indexed columns that change: SQLite
	// rewrites the entry of every index with a column in the SET list,
	// changed or not, and runs the count trigger (with a statement
	// journal) when a placement column is in it. Of the documents' twelve
	// indexes, a save of the text alone rewrites the seven that hold
	// updated_at. Three optional groups keep the statements few (eight).
	set := `summary = ?, content_type = ?, content = ?, version = ?, updated_at = ?`
	args := []any{next.Summary, next.ContentType, next.Content, next.Version, at}
	if next.Title != cur.Title {
		set += `, title = ?`
		args = append(args, next.Title)
	}
	if next.Status != cur.Status {
		set += `, status = ?`
		args = append(args, next.Status)
	}
	if next.Visibility != cur.Visibility || next.FolderID != cur.FolderID || next.DepartmentID != cur.DepartmentID ||
		next.ProjectID != cur.ProjectID {
		set += `, visibility = ?, folder_id = ?, department_id = ?, project_id = ?`
		args = append(args, next.Visibility, nullString(next.FolderID), nullString(next.DepartmentID),
			nullString(next.ProjectID))
	}
	// updated_at = prev repeats the guard in the write itself: it can
	// only fail if something wrote outside the write lock.
	res, err := tx.ExecContext(ctx, `UPDATE documents SET `+set+` WHERE seq = ? AND updated_at = ?`,
		append(args, seq, prev)...)
	if err != nil {
		return nil, fmt.Errorf("update document %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nil, fmt.Errorf("update document %s: %d rows changed (%v)", id, n, err)
	}
	if next.Title != cur.Title || next.Summary != cur.Summary || next.Content != cur.Content ||
		!slices.Equal(cur.Tags, next.Tags) {
		db.fts.changed(seq, ftsText{cur.Title, cur.Summary, cur.Content, tagsText(cur.Tags)})
	}
	if !slices.Equal(cur.Tags, next.Tags) {
		if err := writeTags(ctx, tx, id, next.Tags, true); err != nil {
			return nil, err
		}
	}
	if next.Content != cur.Content || next.ContentType != cur.ContentType {
		if err := writeLinks(ctx, tx, id, next.ContentType, next.Content, true); err != nil {
			return nil, err
		}
	}
	if err := insertVersion(ctx, tx, &next, at, byUserID); err != nil {
		return nil, err
	}
	return &next, nil
}

// DeleteDocument moves the document to the trash. Its row keeps
// everything, its full-text entry included (FTS5's integrity check holds
// the index to every row of documents); the partial indexes of migration
// 0008 and the live condition of every query leave it out.
func (db *DB) DeleteDocument(ctx context.Context, vis quire.Visibility, id, byUserID string, now time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		q := cachedQuerier{c: db.writes, tx: tx}
		if err := db.trashDocument(ctx, q, vis, id, byUserID, now); err != nil {
			return err
		}
		return db.keepAnswer(ctx, q, nil)
	})
}

// trashDocument is DeleteDocument's transaction.
func (db *DB) trashDocument(ctx context.Context, tx cachedQuerier, vis quire.Visibility, id, byUserID string, now time.Time) error {
	cond, args := visible(vis)
	args = append([]any{max(toMicros(now), 1), byUserID, id}, args...)
	return updateOne(ctx, tx, "document",
		`UPDATE documents AS d SET deleted_at = ?, deleted_by = ? WHERE d.id = ? AND `+live+` AND `+cond, args...)
}

// versionColumns reads a version (alias v) of a document (alias d) with the
// name of its author.
const versionColumns = `v.document_id, v.number, v.title, v.summary, v.content_type, v.status, v.visibility,
	v.tags, COALESCE(v.folder_id, ''), COALESCE(v.department_id, ''), COALESCE(v.project_id, ''),
	v.created_at, v.created_by, COALESCE((SELECT u.name FROM users u WHERE u.id = v.created_by), '')`

func scanVersion(scan func(dest ...any) error) (*quire.Version, error) {
	var (
		v         quire.Version
		tags      string
		createdAt int64
	)
	err := scan(&v.DocumentID, &v.Number, &v.Title, &v.Summary, &v.ContentType, &v.Status, &v.Visibility,
		&tags, &v.FolderID, &v.DepartmentID, &v.ProjectID, &createdAt, &v.CreatedByID, &v.CreatedByName, &v.Content)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(tags), &v.Tags); err != nil {
		return nil, fmt.Errorf("version %d of %s tags: %w", v.Number, v.DocumentID, err)
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	v.CreatedAt = fromMicros(createdAt)
	return &v, nil
}

// Versions returns the versions newest first, with Content empty. A
// document has at least its version 1, so no row means no visible document.
func (db *DB) Versions(ctx context.Context, vis quire.Visibility, id string) ([]quire.Version, error) {
	cond, args := visible(vis)
	args = append([]any{id}, args...)
	rows, err := db.read.QueryContext(ctx, `SELECT `+versionColumns+`, ''
		FROM documents d JOIN document_versions v ON v.document_id = d.id
		WHERE d.id = ? AND `+live+` AND `+cond+` ORDER BY v.number DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("list versions of %s: %w", id, err)
	}
	defer rows.Close()
	var vs []quire.Version
	for rows.Next() {
		v, err := scanVersion(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list versions of %s: %w", id, err)
		}
		vs = append(vs, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list versions of %s: %w", id, err)
	}
	if len(vs) == 0 {
		return nil, notFound("document")
	}
	return vs, nil
}

// Version returns version number of the document, content included.
// ENOTFOUND when the document is not visible or has no such version.
func (db *DB) Version(ctx context.Context, vis quire.Visibility, id string, number int) (*quire.Version, error) {
	cond, args := visible(vis)
	args = append([]any{id, number}, args...)
	v, err := scanVersion(db.read.QueryRowContext(ctx, `SELECT `+versionColumns+`, v.content
		FROM documents d JOIN document_versions v ON v.document_id = d.id
		WHERE d.id = ? AND v.number = ? AND `+live+` AND `+cond, args...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("version")
	}
	if err != nil {
		return nil, fmt.Errorf("read version %d of %s: %w", number, id, err)
	}
	return v, nil
}
