package sqlstore

import (
	"context"
	"time"

	"quire"
)

// trashColumns read who deleted a document and when, after docsColumns
// and the content.
const trashColumns = `d.deleted_at, COALESCE(d.deleted_by, ''),
	COALESCE((SELECT u.name FROM users u WHERE u.id = d.deleted_by), '')`

func (s *Store) TrashedDocument(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("document")
	}
	var by, name string
	var at time.Time
	p := Params{id}
	row := s.e.Read().QueryRow(ctx, `SELECT `+s.docsColumns()+`, d.content, `+trashColumns+` FROM documents d
		WHERE d.id = ? AND `+s.d.Some("d.deleted_at")+` AND `+s.d.DocsVisible(vis, &p, false), p...)
	d, err := s.docsScan(func(dest ...any) error { return row.Scan(append(dest, T(&at), &by, &name)...) })
	if err != nil {
		return nil, s.e.Fail(ctx, "read trashed document", Found(err, "document"))
	}
	d.DeletedAt, d.DeletedByID, d.DeletedByName = at, by, name
	return &d, nil
}

// RestoreDocument clears the document's mark. Its folder needs no check:
// deleting a folder takes the documents of the trash out of it first,
// under their row locks (folders.go).
func (s *Store) RestoreDocument(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("document")
	}
	var d *quire.Document
	err := s.e.Write(ctx, func(ctx context.Context, q Q) (err error) {
		p := Params{id}
		if err = One(ctx, q, "document", `UPDATE documents AS d SET deleted_at = `+s.d.NoTime+`, deleted_by = NULL
			WHERE d.id = ? AND `+s.d.Some("d.deleted_at")+` AND `+s.d.DocsVisible(vis, &p, false), p...); err != nil {
			return err
		}
		if d, err = s.docsGet(ctx, q, quire.Visibility{All: true}, id); err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, d)
	})
	if err != nil {
		return nil, s.e.Fail(ctx, "restore document", err)
	}
	return d, nil
}

// PurgeDocument deletes the document; its tags, versions, links and
// attachments go with it (ON DELETE CASCADE).
func (s *Store) PurgeDocument(ctx context.Context, vis quire.Visibility, id string) error {
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		if err := s.PurgeTrashed(ctx, q, vis, id); err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, nil)
	})
	return s.e.Fail(ctx, "purge document", err)
}

// PurgeTrashed is PurgeDocument's change in the transaction q.
func (s *Store) PurgeTrashed(ctx context.Context, q Q, vis quire.Visibility, id string) error {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return NotFound("document")
	}
	p := Params{id}
	gone, err := s.purge(ctx, q, `d.id = ? AND `+s.d.Some("d.deleted_at")+` AND `+s.d.DocsVisible(vis, &p, false), p...)
	if err == nil && len(gone) == 0 {
		err = NotFound("document")
	}
	return err
}

// PurgeTrash holds the purge's lock for its transaction, taken without
// waiting: of several nodes whose purges fall due together, one deletes
// the batch and the others return 0 at once; in SQLite the one writer
// runs it between other writes. SKIP LOCKED (PostgreSQL) passes over a
// document that a restore holds at that moment. limit bounds the texts
// the full-text journal of SQLite holds.
func (s *Store) PurgeTrash(ctx context.Context, before time.Time, limit int, record func(id, title string) *quire.Event) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		n = 0 // the transaction may be run again
		if mine, err := s.d.lockOne(ctx, q, LockTrashPurge, true); err != nil || !mine {
			return err
		}
		gone, err := s.purge(ctx, q, `d.id IN (SELECT t.id FROM documents t WHERE `+s.d.Some("t.deleted_at")+`
			AND t.deleted_at < ? ORDER BY t.deleted_at, t.id LIMIT ?`+s.d.Locked(` FOR UPDATE SKIP LOCKED`)+`)`,
			s.d.Time(before), limit)
		n = len(gone)
		if err != nil || record == nil {
			return err
		}
		evs := make([]*quire.Event, 0, len(gone))
		for _, g := range gone {
			evs = append(evs, record(g[0], g[1]))
		}
		return InsertEvents(ctx, q, s.d, evs)
	})
	if err != nil {
		return 0, s.e.Fail(ctx, "purge trash", err)
	}
	return n, nil
}

// purge deletes the documents (alias d) that match cond, with their tags,
// versions, links and attachments (ON DELETE CASCADE), and returns the id
// and title of each.
func (s *Store) purge(ctx context.Context, q Q, cond string, args ...any) ([][2]string, error) {
	if err := s.e.Purging(ctx, q, cond, args); err != nil {
		return nil, err
	}
	return Collect(ctx, q, func(scan func(dest ...any) error) (g [2]string, err error) {
		err = scan(&g[0], &g[1])
		return
	}, `DELETE FROM documents AS d WHERE `+cond+` RETURNING id, title`, args...)
}
