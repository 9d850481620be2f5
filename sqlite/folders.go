package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.FolderStore = (*DB)(nil)

const folderSelect = `SELECT id, name, COALESCE(parent_id, ''), created_at, updated_at FROM folders`

func scanFolder(scan func(dest ...any) error) (*quire.Folder, error) {
	var (
		f                    quire.Folder
		createdAt, updatedAt int64
	)
	if err := scan(&f.ID, &f.Name, &f.ParentID, &createdAt, &updatedAt); err != nil {
		return nil, err
	}
	f.CreatedAt, f.UpdatedAt = fromMicros(createdAt), fromMicros(updatedAt)
	return &f, nil
}

// Folders returns every folder ordered by name (case-insensitive), then id.
func (db *DB) Folders(ctx context.Context) ([]quire.Folder, error) {
	rows, err := db.read.QueryContext(ctx, folderSelect+` ORDER BY name COLLATE NOCASE, id`)
	if err != nil {
		return nil, fmt.Errorf("list folders: %w", err)
	}
	defer rows.Close()
	folders := []quire.Folder{}
	for rows.Next() {
		f, err := scanFolder(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list folders: %w", err)
		}
		folders = append(folders, *f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list folders: %w", err)
	}
	return folders, nil
}

func (db *DB) Folder(ctx context.Context, id string) (*quire.Folder, error) {
	return getFolder(ctx, db.read, id)
}

func getFolder(ctx context.Context, q docQuerier, id string) (*quire.Folder, error) {
	f, err := scanFolder(q.QueryRowContext(ctx, folderSelect+` WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("folder")
	}
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", id, err)
	}
	return f, nil
}

// CreateFolder inserts f; an unknown parent is EVALIDATION on parent_id.
func (db *DB) CreateFolder(ctx context.Context, f *quire.Folder, now time.Time) error {
	id, at := f.ID, toMicros(now)
	if id == "" {
		id = newID()
	}
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := checkParent(ctx, tx, "", f.ParentID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO folders (id, name, parent_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?)`, id, f.Name, nullString(f.ParentID), at, at)
		if err != nil {
			return fmt.Errorf("create folder: %w", err)
		}
		out := *f
		out.ID, out.CreatedAt, out.UpdatedAt = id, fromMicros(at), fromMicros(at)
		return db.keepAnswer(ctx, cachedQuerier{c: db.writes, tx: tx}, &out)
	})
	if err != nil {
		return err
	}
	f.ID, f.CreatedAt, f.UpdatedAt = id, fromMicros(at), fromMicros(at)
	return nil
}

// UpdateFolder writes f.Name and f.ParentID and fills f.CreatedAt and
// f.UpdatedAt. ENOTFOUND for an unknown folder; EVALIDATION on parent_id for
// an unknown parent, the folder itself or one of its descendants.
func (db *DB) UpdateFolder(ctx context.Context, f *quire.Folder, now time.Time) error {
	at := toMicros(now)
	var createdAt time.Time
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cur, err := getFolder(ctx, tx, f.ID)
		if err != nil {
			return err
		}
		if err := checkParent(ctx, tx, f.ID, f.ParentID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE folders SET name = ?, parent_id = ?, updated_at = ? WHERE id = ?`,
			f.Name, nullString(f.ParentID), at, f.ID); err != nil {
			return fmt.Errorf("update folder %s: %w", f.ID, err)
		}
		createdAt = cur.CreatedAt
		out := *f
		out.CreatedAt, out.UpdatedAt = createdAt, fromMicros(at)
		return db.keepAnswer(ctx, cachedQuerier{c: db.writes, tx: tx}, &out)
	})
	if err != nil {
		return err
	}
	f.CreatedAt, f.UpdatedAt = createdAt, fromMicros(at)
	return nil
}

// checkParent refuses, as EVALIDATION on parent_id, a parent that does not
// exist or that would close a cycle: the folder id itself, or any folder
// below it, which is the same as id being among the parent's ancestors.
// Walking up from the parent costs the depth of the tree, not its size;
// UNION stops the walk even on a cycle already stored.
func checkParent(ctx context.Context, tx *sql.Tx, id, parentID string) error {
	if parentID == "" {
		return nil
	}
	var exists, cycle bool
	err := tx.QueryRowContext(ctx, `WITH RECURSIVE up(id) AS (
			SELECT id FROM folders WHERE id = ?1
			UNION
			SELECT f.parent_id FROM folders f JOIN up ON f.id = up.id WHERE f.parent_id IS NOT NULL
		)
		SELECT EXISTS (SELECT 1 FROM folders WHERE id = ?1), EXISTS (SELECT 1 FROM up WHERE id = ?2)`,
		parentID, id).Scan(&exists, &cycle)
	if err != nil {
		return fmt.Errorf("check parent folder: %w", err)
	}
	if !exists {
		return quire.Invalid(map[string]string{"parent_id": "does not exist"})
	}
	if cycle {
		return quire.Invalid(map[string]string{"parent_id": "must not be the folder itself or one of its descendants"})
	}
	return nil
}

// DeleteFolder deletes an empty folder. Emptiness counts every document
// outside the trash, whoever may see it, since none may be left pointing at
// a deleted folder; the documents of the trash in it are left in none.
func (db *DB) DeleteFolder(ctx context.Context, id string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var exists, full bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM folders WHERE id = ?1),
			EXISTS (SELECT 1 FROM documents WHERE folder_id = ?1 AND deleted_at = 0)
			OR EXISTS (SELECT 1 FROM folders WHERE parent_id = ?1)`,
			id).Scan(&exists, &full)
		if err != nil {
			return fmt.Errorf("delete folder %s: %w", id, err)
		}
		if !exists {
			return notFound("folder")
		}
		if full {
			return quire.Errorf(quire.EFOLDERNOTEMPTY, "The folder still holds documents or folders")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE documents SET folder_id = NULL WHERE folder_id = ? AND deleted_at <> 0`, id); err != nil {
			return fmt.Errorf("delete folder %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM folders WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete folder %s: %w", id, err)
		}
		return db.keepAnswer(ctx, cachedQuerier{c: db.writes, tx: tx}, nil)
	})
}
