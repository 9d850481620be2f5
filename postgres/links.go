package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.LinkStore = (*DB)(nil)

// settingLinksBackfill marks a database whose documents were saved before
// document_links existed (migration 0014): Open reads their links once.
const settingLinksBackfill = "document_links_backfill"

// publicURL reads the public URL of the last quire serve ("" when none),
// the base of the absolute links quire.LinkedDocuments accepts.
func publicURL(ctx context.Context, q querier) (string, error) {
	var v string
	err := q.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, quire.SettingPublicURL).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// queueLinks queues the statements that record the documents the content
// of document id links to, replacing what it linked to before when replace
// is set. A document's links to itself are left out.
func queueLinks(b *pgx.Batch, id, contentType, content, public string, replace bool) {
	if replace {
		b.Queue(`DELETE FROM document_links WHERE source_id = $1`, id)
	}
	var targets []string
	for _, t := range quire.LinkedDocuments(contentType, content, public) {
		if t != id {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return
	}
	b.Queue(`INSERT INTO document_links (target_id, source_id) SELECT t, $2 FROM unnest($1::text[]) AS t
		ON CONFLICT DO NOTHING`, targets, id)
}

// backfillBatch is how many documents one transaction of backfillLinks
// reads.
const backfillBatch = 200

// backfillLinks records the links of every document (the trash's too)
// when migration 0014 asked for it, in batches, and then clears the mark.
// Each batch locks its rows as an update does, so a save on another node
// meanwhile is either seen or waits; nodes that start together each write
// the same rows.
func (db *DB) backfillLinks(ctx context.Context) error {
	var pending string
	err := db.pool.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, settingLinksBackfill).Scan(&pending)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("backfill links: %w", err)
	}
	after := ""
	for {
		done := false
		err := db.tx(ctx, func(tx pgx.Tx) error {
			public, err := publicURL(ctx, tx)
			if err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `SELECT id, content_type, content FROM documents
				WHERE id > $1 ORDER BY id LIMIT `+strconv.Itoa(backfillBatch)+` FOR NO KEY UPDATE`, after)
			if err != nil {
				return err
			}
			type doc struct{ id, typ, content string }
			batch, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (doc, error) {
				var d doc
				err := row.Scan(&d.id, &d.typ, &d.content)
				return d, err
			})
			if err != nil {
				return err
			}
			b := &pgx.Batch{}
			for _, d := range batch {
				queueLinks(b, d.id, d.typ, d.content, public, true)
				after = d.id
			}
			if len(batch) < backfillBatch {
				done = true
				b.Queue(`DELETE FROM settings WHERE key = $1`, settingLinksBackfill)
			}
			return tx.SendBatch(ctx, b).Close()
		})
		if err != nil {
			return fmt.Errorf("backfill links: %w", err)
		}
		if done {
			return nil
		}
	}
}

// Backlinks reads the page and the total in one statement; the
// visibility and the trash are conditions of the query on the linking
// documents.
func (db *DB) Backlinks(ctx context.Context, f quire.BacklinkFilter) ([]quire.Document, int, error) {
	if hasNUL(f.TargetID, f.Visibility.UserID, f.Visibility.DepartmentID) {
		return []quire.Document{}, 0, nil
	}
	p := params{f.TargetID}
	where := `l.target_id = $1 AND ` + live + ` AND ` + visible(f.Visibility, &p)
	from := ` FROM document_links l JOIN documents d ON d.id = l.source_id WHERE ` + where
	var limit any // NULL: LIMIT ALL
	if f.Limit > 0 {
		limit = f.Limit
	}
	offset := max(f.Offset, 0)
	count := `SELECT count(*)` + from
	var total int
	var docs []quire.Document
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, count, p...).Scan(&total); err != nil {
			return err
		}
		if total == 0 || offset >= total {
			return nil
		}
		args := append(append(params{}, p...), limit, offset)
		rows, err := tx.Query(ctx, `SELECT `+docColumns+`, ''`+from+` ORDER BY d.updated_at DESC, d.id DESC
			LIMIT $`+strconv.Itoa(len(p)+1)+` OFFSET $`+strconv.Itoa(len(p)+2), args...)
		if err != nil {
			return err
		}
		docs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Document, error) {
			d, err := scanDocument(row.Scan)
			if err != nil {
				return quire.Document{}, err
			}
			return *d, nil
		})
		return err
	})
	if err != nil {
		return nil, 0, db.fail(ctx, "list backlinks", err)
	}
	if docs == nil {
		docs = []quire.Document{}
	}
	return docs, total, nil
}
