package sqlstore

import (
	"context"

	"quire"
)

var _ quire.LinkStore = (*Store)(nil)

// LinksJoin joins documents to document_links. SQLite's CROSS JOIN keeps
// document_links the outer loop: the planner could otherwise walk documents
// in updated_at order to spare the sort, probing links for every document
// in the database. PostgreSQL takes no ON after CROSS JOIN, and plans the
// join by its statistics.
func (d *Dialect) LinksJoin() string {
	if d.Name == "sqlite" {
		return "CROSS JOIN"
	}
	return "JOIN"
}

// Backlinks reads the page and the total in one snapshot; the visibility
// and the trash are conditions of the query on the linking documents.
//
// On SQLite it is not one of DB.heavy's reads, although its total is
// counted row by row: the rows are one target's range of the
// document_links key, each checked by one lookup of documents' id, so the
// cost grows with the links to this document, not with the database; and
// every document page asks for it, which must not wait behind slow
// searches.
func (s *Store) Backlinks(ctx context.Context, f quire.BacklinkFilter) ([]quire.Document, int, error) {
	docs := []quire.Document{}
	if HasNUL(f.TargetID, f.Visibility.UserID, f.Visibility.DepartmentID) {
		return docs, 0, nil // no stored value holds U+0000
	}
	p := Params{f.TargetID}
	from := ` FROM document_links l ` + s.d.LinksJoin() + ` documents d ON d.id = l.source_id
		WHERE l.target_id = ? AND ` + s.d.None("d.deleted_at") + ` AND ` + s.d.DocsVisible(f.Visibility, &p, false)
	var total int
	err := s.e.Snapshot(ctx, func(q Q) error {
		if err := q.QueryRow(ctx, `SELECT count(*)`+from, p...).Scan(&total); err != nil {
			return err
		}
		offset := max(f.Offset, 0)
		if total == 0 || offset >= total {
			return nil
		}
		limit := f.Limit
		if limit <= 0 {
			limit = total // all: the snapshot has no more
		}
		var err error
		docs, err = Collect(ctx, q, s.docsScan, `SELECT `+s.docsColumns()+`, ''`+from+`
			ORDER BY d.updated_at DESC, d.id DESC LIMIT ? OFFSET ?`, append(p, limit, offset)...)
		return err
	})
	if err != nil {
		return nil, 0, s.e.Fail(ctx, "list backlinks", err)
	}
	if docs == nil {
		docs = []quire.Document{}
	}
	return docs, total, nil
}
