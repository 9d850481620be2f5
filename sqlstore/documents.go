package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"quire"
	"quire/wire"
)

// keepAnswer writes in q, the transaction of a change whose result is
// result (nil for a delete), the answer the engine's quire.Keep names,
// rendered by package wire as the client gets it; nothing without one.
func (s *Store) keepAnswer(ctx context.Context, q Q, result any) error {
	k := s.e.Keep()
	if k == nil {
		return nil
	}
	a, err := wire.Answer(k.Reply, result)
	if err != nil {
		return err
	}
	return s.e.KeepAnswer(ctx, q, k, a)
}

// DocumentEngine is what an engine adds to the document writes written
// here: how it keeps its full-text search up to date, how it maps the
// violation of a named constraint. Both engines implement it.
type DocumentEngine interface {
	// DocumentSearch returns the column of documents the engine derives
	// from a document's text (title, summary, content, tags), the SQL of
	// its bound value and that value for d: PostgreSQL's tsvector. column
	// is "" when the engine keeps none in the row.
	DocumentSearch(d *quire.Document) (column, expr string, value any)
	// DocumentTextWritten tells the engine, inside the write transaction
	// q, that document id was inserted (old nil) or that its text was old
	// and changed: SQLite's full-text journal.
	DocumentTextWritten(ctx context.Context, q Q, id string, old *quire.Document) error
	// DocumentWriteError returns the VALIDATION_ERROR naming the field of
	// a constraint of documents that err violates, and err otherwise: the
	// references are checked before the write, but on PostgreSQL another
	// node may delete a folder in between.
	DocumentWriteError(err error) error
}

func (s *Store) docs() DocumentEngine { return s.e.(DocumentEngine) }

// DocsTagsColumn is the expression of the tags of a document (alias d) in
// their order: a JSON array in SQLite, a text[] in PostgreSQL; scan it
// with DocsTags.
func (d *Dialect) DocsTagsColumn() string {
	if d.Name == "postgres" {
		return `ARRAY(SELECT t.tag FROM document_tags t WHERE t.document_id = d.id ORDER BY t.position)`
	}
	return `(SELECT json_group_array(t.tag ORDER BY t.position) FROM document_tags t WHERE t.document_id = d.id)`
}

// DocsTags is a scan destination for DocsTagsColumn and for the tags of a
// version: JSON text in SQLite, text[] in PostgreSQL (which pgx scans into
// the slice itself, and hands a sql.Scanner only as its wire bytes). The
// caller turns a nil slice into an empty one.
func (d *Dialect) DocsTags(tags *[]string) any {
	if d.Name == "postgres" {
		return tags
	}
	return jsonTags{tags}
}

type jsonTags struct{ tags *[]string }

func (t jsonTags) Scan(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("scan tags: unexpected %T", v)
	}
	return json.Unmarshal([]byte(s), t.tags)
}

// docsTagsArg binds tags as the tags column of document_versions holds
// them: JSON text in SQLite, text[] in PostgreSQL.
func (d *Dialect) docsTagsArg(tags []string) any {
	if d.Name == "postgres" {
		return tags
	}
	b, _ := json.Marshal(tags) // []string always marshals
	return string(b)
}

// DocsVisible returns the condition that keeps the documents vis may see
// (alias d), binding its values in p. Only the shape of the SQL depends on
// vis. With inOrder, for queries that return rows in an index order,
// SQLite's unary + keeps a column from choosing an index: without it the
// planner would collect every visible row through the visibility indexes
// and sort them all, where walking the order index (which carries the
// visibility columns) stops after one page.
func (d *Dialect) DocsVisible(vis quire.Visibility, p *Params, inOrder bool) string {
	if vis.All {
		return "1 = 1"
	}
	op := ""
	if inOrder && d.Name == "sqlite" {
		op = "+"
	}
	cond := `(` + op + `d.owner_id = ` + p.Add(vis.UserID) + ` OR ` + op + `d.visibility = 'public'`
	if vis.DepartmentID != "" {
		cond += ` OR (` + op + `d.visibility = 'department' AND ` + op + `d.department_id = ` + p.Add(vis.DepartmentID) + `)`
	}
	return cond + ` OR (` + op + `d.visibility = 'project' AND ` + op +
		`d.project_id IN (SELECT pm.project_id FROM project_members pm WHERE pm.user_id = ` + p.Add(vis.UserID) + `)))`
}

// docsColumns reads a document (alias d) without its content, which is
// appended separately so that list pages without content never copy it.
// The owner's name and the tags come from correlated subqueries rather than
// joins, so that a page is driven by the index that gives its order.
func (s *Store) docsColumns() string {
	return `d.id, d.title, d.summary, d.content_type, d.status, d.visibility,
	COALESCE(d.folder_id, ''), COALESCE(d.department_id, ''), COALESCE(d.project_id, ''),
	d.owner_id, COALESCE((SELECT u.name FROM users u WHERE u.id = d.owner_id), ''),
	d.version, d.created_at, d.updated_at, ` + s.d.DocsTagsColumn()
}

// docsScan reads docsColumns followed by the content column.
func (s *Store) docsScan(scan func(dest ...any) error) (quire.Document, error) {
	var d quire.Document
	err := scan(&d.ID, &d.Title, &d.Summary, &d.ContentType, &d.Status, &d.Visibility,
		&d.FolderID, &d.DepartmentID, &d.ProjectID, &d.OwnerID, &d.OwnerName,
		&d.Version, T(&d.CreatedAt), T(&d.UpdatedAt), s.d.DocsTags(&d.Tags), &d.Content)
	if d.Tags == nil {
		d.Tags = []string{}
	}
	return d, err
}

// docsGet reads one document outside the trash that vis allows, content
// included. ENOTFOUND when there is none.
func (s *Store) docsGet(ctx context.Context, q Q, vis quire.Visibility, id string) (*quire.Document, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("document")
	}
	p := Params{id}
	cond := s.d.DocsVisible(vis, &p, false)
	d, err := s.docsScan(q.QueryRow(ctx, `SELECT `+s.docsColumns()+`, d.content FROM documents d
		WHERE d.id = ? AND `+s.d.None("d.deleted_at")+` AND `+cond, p...).Scan)
	if err != nil {
		return nil, Found(err, "document")
	}
	return &d, nil
}

func (s *Store) Document(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error) {
	d, err := s.docsGet(ctx, s.e.Read(), vis, id)
	return d, s.e.Fail(ctx, "read document", err)
}

// DocumentsAfter walks the primary key from after.
func (s *Store) DocumentsAfter(ctx context.Context, vis quire.Visibility, after string, limit int) ([]quire.Document, error) {
	if HasNUL(after, vis.UserID, vis.DepartmentID) {
		return []quire.Document{}, nil // no stored value holds U+0000
	}
	p := Params{after}
	cond := s.d.DocsVisible(vis, &p, true)
	out, err := Collect(ctx, s.e.Read(), s.docsScan, `SELECT `+s.docsColumns()+`, d.content FROM documents d
		WHERE d.id > ? AND `+s.d.None("d.deleted_at")+` AND `+cond+` ORDER BY d.id LIMIT `+p.Add(limit), p...)
	if err != nil {
		return nil, s.e.Fail(ctx, "documents after", err)
	}
	if out == nil {
		out = []quire.Document{}
	}
	return out, nil
}

// docsCheck refuses, as VALIDATION_ERROR naming the field, text that a
// text column cannot hold (both engines alike) and references (of d that
// differ from was's) to a folder, department or project that does not
// exist, before the foreign key would fail without saying which one. A
// reference the document already has exists: the foreign key holds it.
func (s *Store) docsCheck(ctx context.Context, q Q, d, was *quire.Document) error {
	fields := map[string]string{"title": d.Title, "content": d.Content, "summary": d.Summary,
		"content_type": d.ContentType, "status": d.Status, "visibility": d.Visibility, "tags": strings.Join(d.Tags, " ")}
	if err := NoNUL(fields); err != nil {
		return err
	}
	if was == nil {
		was = &quire.Document{}
	}
	for _, r := range []struct{ field, table, id, was string }{
		{"folder_id", "folders", d.FolderID, was.FolderID},
		{"department_id", "departments", d.DepartmentID, was.DepartmentID},
		{"project_id", "projects", d.ProjectID, was.ProjectID},
	} {
		if r.id == "" || r.id == r.was {
			continue
		}
		n := 0
		if !HasNUL(r.id) {
			// r.table is one of the constants above, never client input.
			if err := q.QueryRow(ctx, `SELECT count(*) FROM `+r.table+` WHERE id = ?`, r.id).Scan(&n); err != nil {
				return fmt.Errorf("check %s: %w", r.field, err)
			}
		}
		if n == 0 {
			return quire.Invalid(map[string]string{r.field: "does not exist"})
		}
	}
	return nil
}

// CreateDocument inserts d. d.Tags are stored in their order and spelling;
// an unknown folder, department or project is EVALIDATION naming
// folder_id, department_id or project_id.
func (s *Store) CreateDocument(ctx context.Context, d *quire.Document, now time.Time) error {
	var out quire.Document
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		out = *d
		if err := s.InsertDocument(ctx, q, &out, now); err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, &out)
	})
	if err != nil {
		return s.e.Fail(ctx, "create document", s.docs().DocumentWriteError(err))
	}
	*d = out
	return nil
}

// InsertDocument is CreateDocument's transaction, run in q; on success d
// is the document inserted. Engines' tests run it with others in one
// transaction.
func (s *Store) InsertDocument(ctx context.Context, q Q, d *quire.Document, now time.Time) error {
	out := *d
	if out.ID == "" {
		out.ID = NewID()
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	out.Version, out.CreatedAt, out.UpdatedAt = 1, Micro(now), Micro(now)
	if !d.CreatedAt.IsZero() { // an import keeps a document's dates
		out.CreatedAt, out.UpdatedAt = Micro(d.CreatedAt), Micro(d.UpdatedAt)
		if out.UpdatedAt.Before(out.CreatedAt) {
			out.UpdatedAt = out.CreatedAt
		}
	}
	if err := s.docsCheck(ctx, q, &out, nil); err != nil {
		return err
	}
	if HasNUL(out.OwnerID) {
		return quire.Invalid(map[string]string{"owner_id": "does not exist"})
	}
	err := q.QueryRow(ctx, `SELECT name FROM users WHERE id = ?`, out.OwnerID).Scan(&out.OwnerName)
	if errors.Is(err, ErrNoRows) {
		return quire.Invalid(map[string]string{"owner_id": "does not exist"})
	}
	if err != nil {
		return fmt.Errorf("read owner: %w", err)
	}
	de := s.docs()
	cols, vals := "", ""
	args := []any{out.ID, out.Title, out.Summary, out.ContentType, out.Status, out.Visibility, NullString(out.FolderID),
		NullString(out.DepartmentID), NullString(out.ProjectID), out.OwnerID, s.d.Time(out.CreatedAt),
		s.d.Time(out.UpdatedAt), out.Content}
	if col, expr, v := de.DocumentSearch(&out); col != "" {
		cols, vals, args = ", "+col, ", "+expr, append(args, v)
	}
	if _, err := q.Exec(ctx, `INSERT INTO documents
		(id, title, summary, content_type, status, visibility, folder_id, department_id, project_id,
		 owner_id, version, created_at, updated_at, content`+cols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?`+vals+`)`, args...); err != nil {
		return err
	}
	if err := de.DocumentTextWritten(ctx, q, out.ID, nil); err != nil {
		return err
	}
	if err := s.docsWrite(ctx, q, &out, nil, out.OwnerID); err != nil {
		return err
	}
	*d = out
	return nil
}

// docsWrite writes what goes with a document's row: its tags and its links
// (all of them for a new document, was nil; those that changed otherwise)
// and its version d.Version, created by byUserID at d.UpdatedAt.
func (s *Store) docsWrite(ctx context.Context, q Q, d, was *quire.Document, byUserID string) error {
	if was == nil || !slices.Equal(was.Tags, d.Tags) {
		rows := make([][]any, len(d.Tags))
		for i, tag := range d.Tags {
			// tag_norm is computed here, as package documents normalises
			// filter tags: by Go, not by the database's locale.
			rows[i] = []any{d.ID, i, tag, strings.ToLower(strings.TrimSpace(tag))}
		}
		if err := s.docsReplace(ctx, q, was != nil, `DELETE FROM document_tags WHERE document_id = ?`, d.ID,
			`INSERT INTO document_tags (document_id, position, tag, tag_norm) VALUES `, "", rows); err != nil {
			return fmt.Errorf("write tags: %w", err)
		}
	}
	if was == nil || was.Content != d.Content || was.ContentType != d.ContentType {
		var rows [][]any
		if d.ContentType != "plain" { // quire.LinkedDocuments: plain text links to nothing
			var public string
			err := q.QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`, quire.SettingPublicURL).Scan(&public)
			if err != nil && !errors.Is(err, ErrNoRows) {
				return fmt.Errorf("write links: %w", err)
			}
			for _, t := range quire.LinkedDocuments(d.ContentType, d.Content, public) {
				if t != d.ID { // a document's links to itself are left out
					rows = append(rows, []any{t, d.ID})
				}
			}
		}
		if err := s.docsReplace(ctx, q, was != nil, `DELETE FROM document_links WHERE source_id = ?`, d.ID,
			`INSERT INTO document_links (target_id, source_id) VALUES `, ` ON CONFLICT DO NOTHING`, rows); err != nil {
			return fmt.Errorf("write links: %w", err)
		}
	}
	_, err := q.Exec(ctx, `INSERT INTO document_versions
		(document_id, number, title, summary, content_type, status, visibility, tags,
		 folder_id, department_id, project_id, created_at, created_by, content)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.Version, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, s.d.docsTagsArg(d.Tags),
		NullString(d.FolderID), NullString(d.DepartmentID), NullString(d.ProjectID), s.d.Time(d.UpdatedAt), byUserID, d.Content)
	if err != nil {
		return fmt.Errorf("record version %d: %w", d.Version, err)
	}
	return nil
}

// docsReplace runs del with key when replace is set, then inserts rows in
// one statement, each row's values bound: at most 50 tags (4 values each)
// or quire.MaxLinks links (2 each), well within either engine's bound on
// the parameters of a statement.
func (s *Store) docsReplace(ctx context.Context, q Q, replace bool, del, key, insert, tail string, rows [][]any) error {
	if replace {
		if _, err := q.Exec(ctx, del, key); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var p Params
	for _, row := range rows {
		p = append(p, row...)
	}
	row := "(" + strings.Repeat("?, ", len(rows[0])-1) + "?)" // every row has as many values
	_, err := q.Exec(ctx, insert+strings.TrimPrefix(strings.Repeat(", "+row, len(rows)), ", ")+tail, p...)
	return err
}

// UpdateDocument implements the conflict guard under the write lock: the
// read, the comparison and the write happen in one transaction that holds
// the document, so of concurrent updates with the same guard exactly one
// wins. In SQLite the transaction is the only writer. In PostgreSQL the
// first statement takes the row lock of the document (or finds it
// invisible) and waits for any other node's update of it to commit; the
// document is then read afresh by a statement of its own, which in READ
// COMMITTED sees what an update that held the lock before committed, tags
// included. apply may change the content fields, status, visibility,
// folder, tags, department and project; the identity, owner, version and
// times are the store's and changes to them are ignored.
func (s *Store) UpdateDocument(ctx context.Context, vis quire.Visibility, id string, guard time.Time, byUserID string,
	now time.Time, apply func(d *quire.Document) (bool, error)) (*quire.Document, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("document")
	}
	var (
		result   *quire.Document
		applyErr error
	)
	err := s.e.Write(ctx, func(ctx context.Context, q Q) (err error) {
		applyErr = nil
		result, err = s.ChangeDocument(ctx, q, vis, id, guard, byUserID, now, func(d *quire.Document) (bool, error) {
			changed, err := apply(d)
			applyErr = err
			return changed, err
		})
		if err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, result)
	})
	if applyErr != nil {
		return nil, applyErr // as is, wrapped or not
	}
	if err != nil {
		return nil, s.e.Fail(ctx, "update document "+id, s.docs().DocumentWriteError(err))
	}
	return result, nil
}

// ChangeDocument is UpdateDocument's transaction, run in q: it returns the
// document as written (as it was, when apply changed nothing). Engines'
// tests run it with others in one transaction.
func (s *Store) ChangeDocument(ctx context.Context, q Q, vis quire.Visibility, id string, guard time.Time, byUserID string,
	now time.Time, apply func(d *quire.Document) (bool, error)) (*quire.Document, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("document")
	}
	// FOR NO KEY UPDATE, unlike FOR UPDATE, lets other transactions insert
	// rows that reference the document (tags, versions, links).
	if lock := s.d.Locked(" FOR NO KEY UPDATE OF d"); lock != "" {
		p := Params{id}
		cond := s.d.DocsVisible(vis, &p, false)
		var locked string
		err := q.QueryRow(ctx, `SELECT d.id FROM documents d WHERE d.id = ? AND `+s.d.None("d.deleted_at")+
			` AND `+cond+lock, p...).Scan(&locked)
		if err != nil {
			return nil, Found(err, "document")
		}
		vis = quire.Visibility{All: true}
	}
	cur, err := s.docsGet(ctx, q, vis, id)
	if err != nil {
		return nil, err
	}
	if !guard.IsZero() && !Micro(guard).Equal(cur.UpdatedAt) {
		return nil, &quire.Error{Code: quire.EDOCUMENTCONFLICT, Message: "The document was changed by someone else",
			UpdatedAt: cur.UpdatedAt, Document: cur}
	}
	next := *cur
	next.Tags = slices.Clone(cur.Tags)
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
	if err := s.docsCheck(ctx, q, &next, cur); err != nil {
		return nil, err
	}
	at := Micro(now)
	if !at.After(cur.UpdatedAt) {
		at = cur.UpdatedAt.Add(time.Microsecond)
	}
	next.ID, next.OwnerID, next.OwnerName, next.CreatedAt = cur.ID, cur.OwnerID, cur.OwnerName, cur.CreatedAt
	next.Version, next.UpdatedAt = cur.Version+1, at
	// The UPDATE names only the indexed columns that change: SQLite
	// rewrites the entry of every index with a column in the SET list,
	// changed or not, and runs the count trigger (with a statement journal)
	// when a placement column is in it. Of the documents' twelve indexes, a
	// save of the text alone rewrites the seven that hold updated_at. Three
	// optional groups keep the statements few. (PostgreSQL can then update
	// in place more often.)
	set := `summary = ?, content_type = ?, content = ?, version = ?, updated_at = ?`
	args := []any{next.Summary, next.ContentType, next.Content, next.Version, s.d.Time(at)}
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
		args = append(args, next.Visibility, NullString(next.FolderID), NullString(next.DepartmentID),
			NullString(next.ProjectID))
	}
	de := s.docs()
	text := next.Title != cur.Title || next.Summary != cur.Summary || next.Content != cur.Content ||
		!slices.Equal(cur.Tags, next.Tags)
	if col, expr, v := de.DocumentSearch(&next); col != "" && text {
		set += `, ` + col + ` = ` + expr
		args = append(args, v)
	}
	// updated_at = the one read repeats the guard in the write itself: it
	// can only fail if something wrote outside the write lock.
	n, err := q.Exec(ctx, `UPDATE documents SET `+set+` WHERE id = ? AND updated_at = ?`,
		append(args, id, s.d.Time(cur.UpdatedAt))...)
	if err == nil && n != 1 {
		err = fmt.Errorf("%d rows changed", n)
	}
	if err != nil {
		return nil, err
	}
	if text {
		if err := de.DocumentTextWritten(ctx, q, id, cur); err != nil {
			return nil, err
		}
	}
	if err := s.docsWrite(ctx, q, &next, cur, byUserID); err != nil {
		return nil, err
	}
	// A save, a version restore, an import over a document: anchors follow.
	if err := s.contentChanged(ctx, q, &next, cur, byUserID); err != nil {
		return nil, err
	}
	return &next, nil
}

// DeleteDocument moves the document to the trash. Its row keeps
// everything, its search entry included (SQLite's FTS5 integrity check
// holds the index to every row of documents); the partial indexes of the
// live rows and the live condition of every query leave it out.
//
// It runs in a write transaction even without an answer to keep: on
// SQLite that is the group commit's, whose batch shares one fsync, where a
// lone statement would pay its own.
func (s *Store) DeleteDocument(ctx context.Context, vis quire.Visibility, id, byUserID string, now time.Time) error {
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		if err := s.TrashDocument(ctx, q, vis, id, byUserID, now); err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, nil)
	})
	return s.e.Fail(ctx, "delete document", err)
}

// TrashDocument is DeleteDocument's transaction, run in q. Engines' tests
// run it with others in one transaction.
func (s *Store) TrashDocument(ctx context.Context, q Q, vis quire.Visibility, id, byUserID string, now time.Time) error {
	if HasNUL(id, vis.UserID, vis.DepartmentID, byUserID) {
		return NotFound("document")
	}
	at := Micro(now)
	if at.IsZero() {
		at = time.UnixMicro(1).UTC() // the zero time is "none": not in the trash
	}
	p := Params{s.d.Time(at), byUserID, id}
	return One(ctx, q, "document", `UPDATE documents AS d SET deleted_at = ?, deleted_by = ? WHERE d.id = ? AND `+
		s.d.None("d.deleted_at")+` AND `+s.d.DocsVisible(vis, &p, false), p...)
}

// docsVersionColumns reads a version (alias v) of a document (alias d)
// with the name of its author.
const docsVersionColumns = `v.document_id, v.number, v.title, v.summary, v.content_type, v.status, v.visibility,
	v.tags, COALESCE(v.folder_id, ''), COALESCE(v.department_id, ''), COALESCE(v.project_id, ''),
	v.created_at, v.created_by, COALESCE((SELECT u.name FROM users u WHERE u.id = v.created_by), '')`

func (s *Store) docsScanVersion(scan func(dest ...any) error) (quire.Version, error) {
	var v quire.Version
	err := scan(&v.DocumentID, &v.Number, &v.Title, &v.Summary, &v.ContentType, &v.Status, &v.Visibility,
		s.d.DocsTags(&v.Tags), &v.FolderID, &v.DepartmentID, &v.ProjectID, T(&v.CreatedAt), &v.CreatedByID,
		&v.CreatedByName, &v.Content)
	if v.Tags == nil {
		v.Tags = []string{}
	}
	return v, err
}

// docsVersions is the query of the versions of a visible document outside
// the trash (alias d) with content, binding its values in p.
func (s *Store) docsVersions(vis quire.Visibility, p *Params, content, where string) string {
	return `SELECT ` + docsVersionColumns + `, ` + content + `
		FROM documents d JOIN document_versions v ON v.document_id = d.id
		WHERE ` + where + ` AND ` + s.d.None("d.deleted_at") + ` AND ` + s.d.DocsVisible(vis, p, false)
}

// Versions returns the versions newest first, with Content empty. A
// document has at least its version 1, so no row means no visible document.
func (s *Store) Versions(ctx context.Context, vis quire.Visibility, id string) ([]quire.Version, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("document")
	}
	p := Params{id}
	vs, err := Collect(ctx, s.e.Read(), s.docsScanVersion, s.docsVersions(vis, &p, "''", "d.id = ?")+
		` ORDER BY v.number DESC`, p...)
	if err == nil && len(vs) == 0 {
		err = NotFound("document")
	}
	if err != nil {
		return nil, s.e.Fail(ctx, "list versions", err)
	}
	return vs, nil
}

// Version returns version number of the document, content included.
// ENOTFOUND when the document is not visible or has no such version.
func (s *Store) Version(ctx context.Context, vis quire.Visibility, id string, number int) (*quire.Version, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("version")
	}
	p := Params{id, number}
	v, err := s.docsScanVersion(s.e.Read().QueryRow(ctx, s.docsVersions(vis, &p, "v.content", "d.id = ? AND v.number = ?"), p...).Scan)
	if err != nil {
		return nil, s.e.Fail(ctx, "read version", Found(err, "version"))
	}
	return &v, nil
}
