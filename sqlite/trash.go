package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
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

func (db *DB) PurgeDocument(ctx context.Context, vis quire.Visibility, id string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		q := cachedQuerier{c: db.writes, tx: tx}
		if err := db.purgeDocument(ctx, q, vis, id); err != nil {
			return err
		}
		return db.keepAnswer(ctx, q, nil)
	})
}

// purgeDocument is PurgeDocument's transaction.
func (db *DB) purgeDocument(ctx context.Context, tx cachedQuerier, vis quire.Visibility, id string) error {
	cond, args := visible(vis)
	args = append([]any{id}, args...)
	gone, err := db.purge(ctx, tx, `d.id = ? AND `+trashed+` AND `+cond, args...)
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return notFound("document")
	}
	return nil
}

// PurgeTrash runs on the one writing connection, so a single database
// never has two purges at once; the committer runs it between other
// writes. limit bounds the texts it holds for the full-text index.
func (db *DB) PurgeTrash(ctx context.Context, before time.Time, limit int, record func(id, title string) *quire.Event) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		gone, err := db.purge(ctx, cachedQuerier{c: db.writes, tx: tx},
			`d.seq IN (SELECT d.seq FROM documents d WHERE `+trashed+` AND d.deleted_at < ? ORDER BY d.deleted_at LIMIT ?)`,
			max(toMicros(before), 1), limit)
		if err != nil {
			return err
		}
		n = len(gone)
		if record == nil {
			return nil
		}
		evs := make([]*quire.Event, 0, len(gone))
		for _, d := range gone {
			evs = append(evs, record(d.id, d.title))
		}
		return insertEvents(ctx, tx, evs)
	})
	return n, err
}

// purge deletes the documents (alias d) that match cond, with their tags
// and versions (ON DELETE CASCADE), and takes their text out of the
// full-text index (fts.go), which holds documents of the trash too.
func (db *DB) purge(ctx context.Context, tx cachedQuerier, cond string, args ...any) ([]purged, error) {
	// The tags' text as indexed, read before the delete takes the tags
	// with it.
	tags := map[int64]string{}
	trows, err := tx.QueryContext(ctx, `SELECT d.seq, `+ftsTags+` FROM documents AS d WHERE `+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("purge documents: %w", err)
	}
	for trows.Next() {
		var (
			seq  int64
			text string
		)
		if err := trows.Scan(&seq, &text); err != nil {
			trows.Close()
			return nil, fmt.Errorf("purge documents: %w", err)
		}
		tags[seq] = text
	}
	if err := errors.Join(trows.Err(), trows.Close()); err != nil {
		return nil, fmt.Errorf("purge documents: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `DELETE FROM documents AS d WHERE `+cond+`
		RETURNING seq, id, title, summary, content`, args...)
	if err != nil {
		return nil, fmt.Errorf("purge documents: %w", err)
	}
	defer rows.Close()
	var gone []purged
	for rows.Next() {
		var (
			seq int64
			id  string
			old ftsText
		)
		if err := rows.Scan(&seq, &id, &old.title, &old.summary, &old.content); err != nil {
			return nil, fmt.Errorf("purge documents: %w", err)
		}
		old.tags = tags[seq]
		db.fts.changed(seq, old)
		gone = append(gone, purged{id: id, title: old.title})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("purge documents: %w", err)
	}
	return gone, nil
}

// purged is a document purge deleted, as its event names it.
type purged struct{ id, title string }
