package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"quire"
)

// settingLinksBackfill marks a database whose documents were saved before
// document_links existed (migration 0014): Open reads their links once.
const settingLinksBackfill = "document_links_backfill"

// publicURL reads the public URL of the last quire serve ("" when none),
// the base of the absolute links quire.LinkedDocuments accepts.
func publicURL(ctx context.Context, q Q) (string, error) {
	var v string
	err := q.QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`, quire.SettingPublicURL).Scan(&v)
	if errors.Is(err, ErrNoRows) {
		return "", nil
	}
	return v, err
}

// writeLinks records, in q, the documents that the content of document id
// links to (quire.LinkedDocuments under public), replacing what it linked
// to before when replace is set, in one statement of at most
// quire.MaxLinks rows. A document's links to itself are left out.
func writeLinks(ctx context.Context, q Q, id, contentType, content, public string, replace bool) error {
	if replace {
		if _, err := q.Exec(ctx, `DELETE FROM document_links WHERE source_id = ?`, id); err != nil {
			return err
		}
	}
	var (
		p    Params
		rows []string
	)
	for _, t := range quire.LinkedDocuments(contentType, content, public) {
		if t != id {
			rows = append(rows, "("+p.Add(t)+", "+p.Add(id)+")")
		}
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := q.Exec(ctx, `INSERT INTO document_links (target_id, source_id) VALUES `+strings.Join(rows, ", ")+`
		ON CONFLICT DO NOTHING`, p...)
	return err
}

// backfillBatch is how many documents one transaction of BackfillLinks
// reads, so that the writer is never held long.
const backfillBatch = 200

// BackfillLinks records the links of every document (the trash's too)
// when migration 0014 asked for it, in batches, and then clears the mark;
// the engines' Open calls it. In PostgreSQL each batch locks its rows as
// an update does, so a save on another node meanwhile is either seen or
// waits; nodes that start together each write the same rows. A start
// interrupted halfway does it again: writing a document's links twice
// gives the same rows.
func (s *Store) BackfillLinks(ctx context.Context) error {
	var pending string
	err := s.e.Read().QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`, settingLinksBackfill).Scan(&pending)
	if errors.Is(err, ErrNoRows) {
		return nil
	}
	type doc struct{ id, typ, content string }
	scan := func(scan func(dest ...any) error) (d doc, err error) {
		err = scan(&d.id, &d.typ, &d.content)
		return
	}
	for after, done := "", false; err == nil && !done; {
		var last string
		err = s.e.Write(ctx, func(ctx context.Context, q Q) error {
			public, err := publicURL(ctx, q)
			if err != nil {
				return err
			}
			batch, err := Collect(ctx, q, scan, `SELECT id, content_type, content FROM documents
				WHERE id > ? ORDER BY id LIMIT ?`+s.d.Locked(` FOR NO KEY UPDATE`), after, backfillBatch)
			if err != nil {
				return err
			}
			last, done = after, len(batch) < backfillBatch
			for _, d := range batch {
				if err := writeLinks(ctx, q, d.id, d.typ, d.content, public, true); err != nil {
					return err
				}
				last = d.id
			}
			if done {
				_, err = q.Exec(ctx, `DELETE FROM settings WHERE key = ?`, settingLinksBackfill)
			}
			return err
		})
		after = last
	}
	if err != nil {
		return fmt.Errorf("backfill links: %w", err)
	}
	return nil
}
