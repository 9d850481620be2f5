package sqlstore

import (
	"context"
	"time"

	"quire"
)

var _ quire.FolderStore = (*Store)(nil)

const folderSelect = `SELECT id, name, COALESCE(parent_id, ''), created_at, updated_at FROM folders`

func scanFolder(scan func(dest ...any) error) (quire.Folder, error) {
	var f quire.Folder
	err := scan(&f.ID, &f.Name, &f.ParentID, T(&f.CreatedAt), T(&f.UpdatedAt))
	return f, err
}

// Folders returns every folder ordered by name (case-insensitive in
// ASCII), then id.
func (s *Store) Folders(ctx context.Context) ([]quire.Folder, error) {
	return list(ctx, s, "list folders", scanFolder, folderSelect+` ORDER BY `+s.d.noCase("name")+`, id`)
}

func (s *Store) Folder(ctx context.Context, id string) (*quire.Folder, error) {
	f, err := s.getFolder(ctx, s.e.Read(), id, "")
	return f, s.e.Fail(ctx, "read folder", err)
}

// getFolder reads a folder; lock is appended to the query.
func (s *Store) getFolder(ctx context.Context, q Q, id, lock string) (*quire.Folder, error) {
	if HasNUL(id) {
		return nil, NotFound("folder")
	}
	f, err := scanFolder(q.QueryRow(ctx, folderSelect+` WHERE id = ?`+lock, id).Scan)
	if err != nil {
		return nil, Found(err, "folder")
	}
	return &f, nil
}

var (
	errParentMissing  = quire.Invalid(map[string]string{"parent_id": "does not exist"})
	errFolderNotEmpty = quire.Errorf(quire.EFOLDERNOTEMPTY, "The folder still holds documents or folders")
)

// CreateFolder inserts f; an unknown parent (the insert's foreign key) is
// EVALIDATION on parent_id.
func (s *Store) CreateFolder(ctx context.Context, f *quire.Folder, now time.Time) error {
	return s.saveFolder(ctx, f, now, true)
}

// UpdateFolder writes f.Name and f.ParentID and fills f.CreatedAt and
// f.UpdatedAt. ENOTFOUND for an unknown folder; EVALIDATION on parent_id for
// an unknown parent, the folder itself or one of its descendants. Moves take
// one lock for the whole tree: two moves checked at once on two nodes (A
// under B, B under A) could otherwise each see no cycle.
func (s *Store) UpdateFolder(ctx context.Context, f *quire.Folder, now time.Time) error {
	return s.saveFolder(ctx, f, now, false)
}

func (s *Store) saveFolder(ctx context.Context, f *quire.Folder, now time.Time, create bool) error {
	if err := NoNUL(map[string]string{"name": f.Name}); err != nil {
		return err
	}
	if HasNUL(f.ParentID) {
		return errParentMissing
	}
	out := *f
	out.CreatedAt, out.UpdatedAt = Micro(now), Micro(now)
	if create && out.ID == "" {
		out.ID = NewID()
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) (err error) {
		if create {
			_, err = q.Exec(ctx, `INSERT INTO folders (id, name, parent_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				out.ID, f.Name, NullString(f.ParentID), s.d.Time(now), s.d.Time(now))
		} else {
			if f.ParentID != "" {
				if _, err := s.d.lockOne(ctx, q, LockFolderTree, false); err != nil {
					return err
				}
			}
			var cur *quire.Folder
			if cur, err = s.getFolder(ctx, q, f.ID, s.d.Locked(" FOR NO KEY UPDATE")); err != nil {
				return err
			}
			if err := checkParent(ctx, q, f.ID, f.ParentID); err != nil {
				return err
			}
			out.CreatedAt = cur.CreatedAt
			_, err = q.Exec(ctx, `UPDATE folders SET name = ?, parent_id = ?, updated_at = ? WHERE id = ?`,
				f.Name, NullString(f.ParentID), s.d.Time(now), f.ID)
		}
		if s.d.IsForeignKey(err) {
			return errParentMissing
		}
		if err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, &out)
	})
	if err != nil {
		return s.e.Fail(ctx, "save folder", err)
	}
	*f = out
	return nil
}

// checkParent refuses, as EVALIDATION on parent_id, a parent that does not
// exist or that would close a cycle: the folder id itself, or any folder
// below it, which is the same as id being among the parent's ancestors.
// Walking up from the parent costs the depth of the tree, not its size;
// UNION stops the walk even on a cycle already stored.
func checkParent(ctx context.Context, q Q, id, parentID string) error {
	if parentID == "" {
		return nil
	}
	var exists, cycle bool
	err := q.QueryRow(ctx, `WITH RECURSIVE up(id) AS (
			SELECT id FROM folders WHERE id = ?
			UNION
			SELECT f.parent_id FROM folders f JOIN up ON f.id = up.id WHERE f.parent_id IS NOT NULL
		)
		SELECT EXISTS (SELECT 1 FROM folders WHERE id = ?), EXISTS (SELECT 1 FROM up WHERE id = ?)`,
		parentID, parentID, id).Scan(&exists, &cycle)
	if err != nil {
		return err
	}
	if !exists {
		return errParentMissing
	}
	if cycle {
		return quire.Invalid(map[string]string{"parent_id": "must not be the folder itself or one of its descendants"})
	}
	return nil
}

// DeleteFolder deletes an empty folder. Emptiness counts every document
// outside the trash, whoever may see it, since none may be left pointing at
// a deleted folder; the documents of the trash in it are left in none, by
// an update that (in PostgreSQL) locks them first, so that a restore on
// another node waits and then finds the document in no folder.
// A document or folder put into it by another node after the check makes
// the DELETE fail on its foreign key, which is the same refusal.
func (s *Store) DeleteFolder(ctx context.Context, id string) error {
	if HasNUL(id) {
		return NotFound("folder")
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		if _, err := q.Exec(ctx, `UPDATE documents SET folder_id = NULL WHERE folder_id = ? AND `+s.d.Some("deleted_at"), id); err != nil {
			return err
		}
		var exists, full bool
		err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM folders WHERE id = ?),
			EXISTS (SELECT 1 FROM documents WHERE folder_id = ? AND `+s.d.None("deleted_at")+`)
			OR EXISTS (SELECT 1 FROM folders WHERE parent_id = ?)`,
			id, id, id).Scan(&exists, &full)
		if err != nil {
			return err
		}
		if !exists {
			return NotFound("folder")
		}
		if full {
			return errFolderNotEmpty
		}
		_, err = q.Exec(ctx, `DELETE FROM folders WHERE id = ?`, id)
		if s.d.IsForeignKey(err) {
			return errFolderNotEmpty
		}
		if err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, nil)
	})
	return s.e.Fail(ctx, "delete folder", err)
}
