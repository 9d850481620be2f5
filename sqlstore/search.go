package sqlstore

import "quire"

// The lists and searches of documents stay in the engines (SQLite's index
// of documents and FTS5, PostgreSQL's tsvector and its one-statement
// pages); what their SQL shares is here.

// DocsOrder returns the key of f's order (before the tie on id, in the
// same direction) and its direction. Titles order case-insensitively in
// ASCII, then by code point: SQLite's NOCASE, and in PostgreSQL the
// expression documents_title indexes. statusRank orders statuses along
// their lifecycle; documents_status_order indexes it.
func (d *Dialect) DocsOrder(f quire.DocumentFilter) (key, dir string, err error) {
	dir = "ASC"
	if f.Desc {
		dir = "DESC"
	}
	switch f.SortBy {
	case "", "updated_at", "relevance":
		return "d.updated_at", dir, nil
	case "created_at":
		return "d.created_at", dir, nil
	case "title":
		return d.noCase("d.title"), dir, nil
	case "status":
		return `(CASE d.status WHEN 'draft' THEN 0 WHEN 'review' THEN 1 WHEN 'published' THEN 2 ELSE 3 END)`, dir, nil
	}
	return "", "", quire.Invalid(map[string]string{"sortBy": "must be one of updated_at, created_at, title, status, relevance"})
}

// DocsFilters returns the conditions of f's filters on documents (alias
// d), visibility, the trash and the search aside, binding each value with
// add, which returns its placeholder; and the placeholders of f's tags,
// each tag once. A document must carry every tag: each is one lookup in
// document_tags_norm.
func DocsFilters(f quire.DocumentFilter, add func(v any) string) (conds, tags []string) {
	if f.NoFolder {
		conds = append(conds, `d.folder_id IS NULL`)
	}
	folderID := f.FolderID
	if f.Subfolders {
		// The folder and every folder below it: a walk down folders_parent,
		// linear in the folders it finds (UNION drops a folder seen twice,
		// so even a cycle ends).
		conds = append(conds, `d.folder_id IN (WITH RECURSIVE sub(id) AS (SELECT CAST(`+add(f.FolderID)+` AS TEXT)
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
			conds = append(conds, eq.column+" = "+add(eq.value))
		}
	}
	seen := map[string]bool{}
	for _, tag := range f.Tags {
		if !seen[tag] {
			seen[tag] = true
			tags = append(tags, add(tag))
			conds = append(conds, `d.id IN (SELECT t.document_id FROM document_tags t WHERE t.tag_norm = `+tags[len(tags)-1]+`)`)
		}
	}
	return conds, tags
}
