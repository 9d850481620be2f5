package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"quire"
	"quire/sqlstore"
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

var _ sqlstore.DocumentEngine = engine{}

// DocumentSearch keeps no search column: SQLite indexes a document's text
// at commit (fts.go).
func (engine) DocumentSearch(*quire.Document) (string, string, any) { return "", "", nil }

// DocumentTextWritten records the row in the full-text journal (fts.go),
// which the commit of its transaction flushes.
func (e engine) DocumentTextWritten(ctx context.Context, q sqlstore.Q, id string, old *quire.Document) error {
	var seq int64
	if err := q.QueryRow(ctx, `SELECT seq FROM documents WHERE id = ?`, id).Scan(&seq); err != nil {
		return fmt.Errorf("full-text journal: %w", err)
	}
	if old == nil {
		e.db.fts.created(seq)
	} else {
		e.db.fts.changed(seq, ftsText{old.Title, old.Summary, old.Content, tagsText(old.Tags)})
	}
	return nil
}

// DocumentWriteError has nothing to map: the references are checked by
// the only writer, so nothing deletes them before the write.
func (engine) DocumentWriteError(err error) error { return err }

// Keep is the DB's (Keeping).
func (e engine) Keep() *quire.Keep { return e.db.keep }

// KeepAnswer runs in the transaction of Write, whose q is the committer's.
func (e engine) KeepAnswer(ctx context.Context, q sqlstore.Q, k *quire.Keep, a quire.IdempotentAnswer) error {
	return e.db.keepAnswer(ctx, q.(liteQ).q.(cachedQuerier), k, a)
}
