package notifysql

import (
	"context"
	"errors"

	"quire"
	"quire/sqlstore"
)

// maxFolderDepth bounds the walk up a folder tree (folders are far
// shallower; the bound keeps a walk finite whatever the rows hold).
const maxFolderDepth = 256

// WatchState tells whether userID watches the document id (folder false)
// or the folder id itself, and otherwise the nearest folder above it that
// userID watches, which covers it (through.ID "" for none). It is for the
// Watch button of the pages: the caller has checked that userID sees the
// document. An unknown id is watched by nobody.
func (s *NotifySQL) WatchState(ctx context.Context, userID string, folder bool, id string) (watching bool, through quire.Named, err error) {
	if sqlstore.HasNUL(userID, id) {
		return false, through, nil
	}
	own, start := `SELECT 1 FROM document_watches WHERE document_id = ? AND user_id = ?`,
		`SELECT folder_id, 0 FROM documents WHERE id = ? AND folder_id IS NOT NULL`
	if folder {
		own, start = `SELECT 1 FROM folder_watches WHERE folder_id = ? AND user_id = ?`,
			`SELECT parent_id, 0 FROM folders WHERE id = ? AND parent_id IS NOT NULL`
	}
	err = s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		var one int
		switch err := q.QueryRow(ctx, own, id, userID).Scan(&one); {
		case err == nil:
			watching = true
			return nil
		case !errors.Is(err, sqlstore.ErrNoRows):
			return err
		}
		err := q.QueryRow(ctx, `WITH RECURSIVE up (id, depth) AS (`+start+`
				UNION ALL SELECT f.parent_id, up.depth + 1 FROM folders f JOIN up ON f.id = up.id
				WHERE f.parent_id IS NOT NULL AND up.depth < ?)
			SELECT f.id, f.name FROM up JOIN folder_watches w ON w.folder_id = up.id AND w.user_id = ?
			JOIN folders f ON f.id = up.id ORDER BY up.depth LIMIT 1`, id, maxFolderDepth, userID).Scan(&through.ID, &through.Name)
		if errors.Is(err, sqlstore.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return false, quire.Named{}, s.E.Fail(ctx, "read a watch", err)
	}
	return watching, through, nil
}
