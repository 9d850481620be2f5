package sqlite

import (
	"context"
	"fmt"

	"quire"
)

var _ quire.LinkStore = (*DB)(nil)

// Backlinks reads the page and the total inside one read transaction, so
// that both come from the same snapshot; the visibility and the trash are
// conditions of the query on the linking documents.
func (db *DB) Backlinks(ctx context.Context, f quire.BacklinkFilter) ([]quire.Document, int, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	// Not one of DB.heavy's reads, although its total is counted row by
	// row: the rows are one target's range of the document_links key, each
	// checked by one lookup of documents' id, so the cost grows with the
	// links to this document, not with the database; and every document
	// page asks for it, which must not wait behind slow searches.
	db.reads.preparePending(ctx)
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("list backlinks: %w", err)
	}
	defer tx.Rollback()
	q := cachedQuerier{c: db.reads, tx: tx}
	cond, args := visible(f.Visibility)
	args = append([]any{f.TargetID}, args...)
	// CROSS JOIN keeps document_links the outer loop in SQLite: the
	// planner could otherwise walk documents in updated_at order to spare
	// the sort, probing links for every document in the database.
	from := `FROM document_links l CROSS JOIN documents d ON d.id = l.source_id WHERE l.target_id = ? AND ` + live + ` AND ` + cond
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) `+from, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list backlinks: count: %w", err)
	}
	docs := []quire.Document{}
	if total == 0 || (limit > 0 && f.Offset >= total) {
		return docs, total, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+docColumns+`, '' `+from+` ORDER BY d.updated_at DESC, d.id DESC LIMIT ? OFFSET ?`,
		append(args, limit, max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("list backlinks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, _, err := scanDocument(rows.Scan)
		if err != nil {
			return nil, 0, fmt.Errorf("list backlinks: %w", err)
		}
		docs = append(docs, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list backlinks: %w", err)
	}
	return docs, total, nil
}
