package sqlite

import (
	"context"
	"fmt"

	"quire"
	"quire/sqlstore"
)

var _ quire.TrashStore = (*DB)(nil)

// Trash reads the page and the total inside one read transaction, so that
// both come from the same snapshot. Both walk documents_trash, which holds
// only documents of the trash with the columns of the visibility rule.
func (db *DB) Trash(ctx context.Context, f quire.TrashFilter) ([]quire.Document, int, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	// A total counted row by row is heavy: see DB.heavy.
	q, done, err := db.readTx(ctx, true)
	if err != nil {
		return nil, 0, fmt.Errorf("list trash: %w", err)
	}
	defer done()
	cond, args := visible(f.Visibility)
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM documents d WHERE `+trashed+` AND `+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list trash: count: %w", err)
	}
	docs := []quire.Document{}
	if total == 0 || (limit > 0 && f.Offset >= total) {
		return docs, total, nil
	}
	cond, args = visibleInOrder(f.Visibility)
	rows, err := q.QueryContext(ctx, `SELECT `+docColumns+`, '', `+trashColumns+` FROM documents d
		WHERE `+trashed+` AND `+cond+` ORDER BY d.deleted_at DESC, d.id DESC LIMIT ? OFFSET ?`,
		append(args, limit, max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("list trash: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanTrashed(rows.Scan)
		if err != nil {
			return nil, 0, fmt.Errorf("list trash: %w", err)
		}
		docs = append(docs, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list trash: %w", err)
	}
	return docs, total, nil
}

// Purging takes the text of the documents a purge (sqlstore) is
// about to delete out of the full-text index (fts.go), which holds
// documents of the trash too: the journal needs the text as indexed, the
// tags' included, read before the delete takes the tags with it.
func (e engine) Purging(ctx context.Context, q sqlstore.Q, cond string, args []any) error {
	return sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
		var (
			seq int64
			old ftsText
		)
		if err := scan(&seq, &old.title, &old.summary, &old.content, &old.tags); err != nil {
			return err
		}
		e.db.fts.changed(seq, old)
		return nil
	}, `SELECT d.seq, d.title, d.summary, d.content, `+ftsTags+` FROM documents AS d WHERE `+cond, args...)
}
