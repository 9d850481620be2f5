package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.TrashStore = (*DB)(nil)

// trashColumns read who deleted a document and when, after docColumns and
// the content.
const trashColumns = `d.deleted_at, COALESCE(d.deleted_by, ''),
	COALESCE((SELECT u.name FROM users u WHERE u.id = d.deleted_by), '')`

// scanTrashed reads docColumns, the content and trashColumns, after the
// columns of before.
func scanTrashed(scan func(dest ...any) error, before ...any) (*quire.Document, error) {
	var deletedAt time.Time
	var by, name string
	var d *quire.Document
	d, err := scanDocument(func(dest ...any) error {
		return scan(append(append(before, dest...), &deletedAt, &by, &name)...)
	})
	if err != nil {
		return nil, err
	}
	d.DeletedAt, d.DeletedByID, d.DeletedByName = deletedAt.UTC(), by, name
	return d, nil
}

// Trash reads the page and the total in one statement, one snapshot.
func (db *DB) Trash(ctx context.Context, f quire.TrashFilter) ([]quire.Document, int, error) {
	if hasNUL(f.Visibility.UserID, f.Visibility.DepartmentID) {
		return []quire.Document{}, 0, nil
	}
	var p params
	where := trashed + ` AND ` + visible(f.Visibility, &p)
	var limit any // NULL: LIMIT ALL
	if f.Limit > 0 {
		limit = f.Limit
	}
	offset := max(f.Offset, 0)
	count := `SELECT count(*) FROM documents d WHERE ` + where
	args := append(append(params{}, p...), limit, offset)
	rows, err := db.pool.Query(ctx, `SELECT (`+count+`), `+docColumns+`, '', `+trashColumns+` FROM documents d
		WHERE `+where+` ORDER BY d.deleted_at DESC, d.id DESC
		LIMIT $`+strconv.Itoa(len(p)+1)+` OFFSET $`+strconv.Itoa(len(p)+2), args...)
	if err != nil {
		return nil, 0, db.fail(ctx, "list trash", err)
	}
	var total int
	docs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Document, error) {
		d, err := scanTrashed(row.Scan, &total)
		if err != nil {
			return quire.Document{}, err
		}
		return *d, nil
	})
	if err != nil {
		return nil, 0, db.fail(ctx, "list trash", err)
	}
	if len(docs) == 0 && offset > 0 {
		// A page past the end carries no row to read the total from.
		if err := db.pool.QueryRow(ctx, count, p...).Scan(&total); err != nil {
			return nil, 0, db.fail(ctx, "list trash: count", err)
		}
	}
	if docs == nil {
		docs = []quire.Document{}
	}
	return docs, total, nil
}
