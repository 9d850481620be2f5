package sqlite

import (
	"context"

	"quire"
	"quire/sqlstore"
)

// insertMail queues m in tx (sqlstore.InsertMail) and names it.
func insertMail(ctx context.Context, tx querier, m *quire.Mail) error {
	id := newID()
	if err := sqlstore.InsertMail(ctx, qOf(tx), dialect, id, m); err != nil {
		return err
	}
	m.ID = id
	return nil
}
