package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.LinkStore = (*DB)(nil)

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
