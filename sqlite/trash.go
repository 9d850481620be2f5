package sqlite

import (
	"context"
	"database/sql"
	"errors"
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
	// A total counted row by row: see DB.heavy.
	select {
	case db.heavy <- struct{}{}:
		defer func() { <-db.heavy }()
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	db.reads.preparePending(ctx)
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("list trash: %w", err)
	}
	defer tx.Rollback()
	q := cachedQuerier{c: db.reads, tx: tx}
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

func (db *DB) TrashedDocument(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error) {
	return getTrashed(ctx, cachedQuerier{c: db.reads}, vis, id)
}

// getTrashed reads one document of the trash that vis allows, content
// included. ENOTFOUND when there is none.
func getTrashed(ctx context.Context, q docQuerier, vis quire.Visibility, id string) (*quire.Document, error) {
	cond, args := visible(vis)
	args = append([]any{id}, args...)
	d, err := scanTrashed(q.QueryRowContext(ctx, `SELECT `+docColumns+`, d.content, `+trashColumns+`
		FROM documents d WHERE d.id = ? AND `+trashed+` AND `+cond, args...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("document")
	}
	if err != nil {
		return nil, fmt.Errorf("read trashed document %s: %w", id, err)
	}
	return d, nil
}

// RestoreDocument clears the document's mark. Its folder needs no check:
// deleting a folder takes the documents of the trash out of it (folders.go).
func (db *DB) RestoreDocument(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error) {
	var d *quire.Document
	err := db.tx(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := cachedQuerier{c: db.writes, tx: sqlTx}
		cond, args := visible(vis)
		args = append([]any{id}, args...)
		if err := updateOne(ctx, tx, "document", `UPDATE documents AS d SET deleted_at = 0, deleted_by = NULL
			WHERE d.id = ? AND `+trashed+` AND `+cond, args...); err != nil {
			return err
		}
		var err error
		if d, _, err = getDocument(ctx, tx, quire.Visibility{All: true}, id); err != nil {
			return err
		}
		return db.keepAnswer(ctx, tx, d)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
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
