package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.FolderStore = (*DB)(nil)

const folderSelect = `SELECT id, name, COALESCE(parent_id, ''), created_at, updated_at FROM folders`

func scanFolder(scan func(dest ...any) error) (quire.Folder, error) {
	var f quire.Folder
	err := scan(&f.ID, &f.Name, &f.ParentID, &f.CreatedAt, &f.UpdatedAt)
	f.CreatedAt, f.UpdatedAt = f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	return f, err
}

// Folders returns every folder ordered by name (case-insensitive in ASCII,
// like SQLite's NOCASE), then id.
func (db *DB) Folders(ctx context.Context) ([]quire.Folder, error) {
	rows, err := db.pool.Query(ctx, folderSelect+` ORDER BY lower(name COLLATE "C"), id`)
	if err != nil {
		return nil, db.fail(ctx, "list folders", err)
	}
	folders, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Folder, error) { return scanFolder(row.Scan) })
	if err != nil {
		return nil, db.fail(ctx, "list folders", err)
	}
	return folders, nil
}

func (db *DB) Folder(ctx context.Context, id string) (*quire.Folder, error) {
	f, err := getFolder(ctx, db.pool, id, false)
	return f, db.fail(ctx, "read folder", err)
}

// getFolder reads a folder, locking its row when forUpdate is set.
func getFolder(ctx context.Context, q querier, id string, forUpdate bool) (*quire.Folder, error) {
	if hasNUL(id) {
		return nil, notFound("folder")
	}
	locking := ""
	if forUpdate {
		locking = " FOR NO KEY UPDATE"
	}
	f, err := scanFolder(q.QueryRow(ctx, folderSelect+` WHERE id = $1`+locking, id).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("folder")
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

var errParentMissing = quire.Invalid(map[string]string{"parent_id": "does not exist"})

// CreateFolder inserts f; an unknown parent is EVALIDATION on parent_id.
func (db *DB) CreateFolder(ctx context.Context, f *quire.Folder, now time.Time) error {
	if err := noNUL(map[string]string{"name": f.Name}); err != nil {
		return err
	}
	if hasNUL(f.ParentID) {
		return errParentMissing
	}
	id, at := f.ID, micro(now)
	if id == "" {
		id = newID()
	}
	err := db.withAnswer(ctx, func(q querier) (any, error) {
		_, err := q.Exec(ctx, `INSERT INTO folders (id, name, parent_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $4)`, id, f.Name, nullString(f.ParentID), at)
		out := *f
		out.ID, out.CreatedAt, out.UpdatedAt = id, at, at
		return &out, err
	})
	if code, _ := pgCode(err); code == codeForeignKey {
		return errParentMissing
	}
	if err != nil {
		return db.fail(ctx, "create folder", err)
	}
	f.ID, f.CreatedAt, f.UpdatedAt = id, at, at
	return nil
}

// UpdateFolder writes f.Name and f.ParentID and fills f.CreatedAt and
// f.UpdatedAt. ENOTFOUND for an unknown folder; EVALIDATION on parent_id for
// an unknown parent, the folder itself or one of its descendants. Moves take
// one advisory lock for the whole tree: two moves checked at once on two
// nodes (A under B, B under A) could otherwise each see no cycle.
func (db *DB) UpdateFolder(ctx context.Context, f *quire.Folder, now time.Time) error {
	if err := noNUL(map[string]string{"name": f.Name}); err != nil {
		return err
	}
	if hasNUL(f.ParentID) {
		return errParentMissing
	}
	at := micro(now)
	var createdAt time.Time
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if f.ParentID != "" {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, lockFolderTree); err != nil {
				return err
			}
		}
		cur, err := getFolder(ctx, tx, f.ID, true)
		if err != nil {
			return err
		}
		if err := checkParent(ctx, tx, f.ID, f.ParentID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE folders SET name = $1, parent_id = $2, updated_at = $3 WHERE id = $4`,
			f.Name, nullString(f.ParentID), at, f.ID)
		if code, _ := pgCode(err); code == codeForeignKey {
			return errParentMissing
		}
		if err != nil {
			return err
		}
		createdAt = cur.CreatedAt
		out := *f
		out.CreatedAt, out.UpdatedAt = createdAt, at
		return keepAnswer(ctx, tx, &out)
	})
	if err != nil {
		return db.fail(ctx, "update folder", err)
	}
	f.CreatedAt, f.UpdatedAt = createdAt, at
	return nil
}

// checkParent refuses, as EVALIDATION on parent_id, a parent that does not
// exist or that would close a cycle: the folder id itself, or any folder
// below it, which is the same as id being among the parent's ancestors.
// Walking up from the parent costs the depth of the tree, not its size;
// UNION stops the walk even on a cycle already stored.
func checkParent(ctx context.Context, tx pgx.Tx, id, parentID string) error {
	if parentID == "" {
		return nil
	}
	var exists, cycle bool
	err := tx.QueryRow(ctx, `WITH RECURSIVE up(id) AS (
			SELECT id FROM folders WHERE id = $1
			UNION
			SELECT f.parent_id FROM folders f JOIN up ON f.id = up.id WHERE f.parent_id IS NOT NULL
		)
		SELECT EXISTS (SELECT 1 FROM folders WHERE id = $1), EXISTS (SELECT 1 FROM up WHERE id = $2)`,
		parentID, id).Scan(&exists, &cycle)
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

var errFolderNotEmpty = quire.Errorf(quire.EFOLDERNOTEMPTY, "The folder still holds documents or folders")

// DeleteFolder deletes an empty folder. Emptiness counts every document
// outside the trash, whoever may see it, since none may be left pointing at
// a deleted folder; the documents of the trash in it are left in none, by
// an update that locks them first, so that a restore on another node waits
// and then finds the document in no folder.
// A document or folder put into it by another node after the check makes
// the DELETE fail on its foreign key, which is the same refusal.
func (db *DB) DeleteFolder(ctx context.Context, id string) error {
	if hasNUL(id) {
		return notFound("folder")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var exists, full bool
		if _, err := tx.Exec(ctx, `UPDATE documents SET folder_id = NULL WHERE folder_id = $1 AND deleted_at IS NOT NULL`, id); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM folders WHERE id = $1),
			EXISTS (SELECT 1 FROM documents WHERE folder_id = $1 AND deleted_at IS NULL)
			OR EXISTS (SELECT 1 FROM folders WHERE parent_id = $1)`,
			id).Scan(&exists, &full)
		if err != nil {
			return err
		}
		if !exists {
			return notFound("folder")
		}
		if full {
			return errFolderNotEmpty
		}
		_, err = tx.Exec(ctx, `DELETE FROM folders WHERE id = $1`, id)
		if code, _ := pgCode(err); code == codeForeignKey {
			return errFolderNotEmpty
		}
		if err != nil {
			return err
		}
		return keepAnswer(ctx, tx, nil)
	})
	return db.fail(ctx, "delete folder", err)
}
