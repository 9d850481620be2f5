package postgres

import (
	"context"
	"time"

	"quire"
	"quire/sqlstore"
)

// insertMail queues m as id in q (sqlstore.InsertMail).
func insertMail(ctx context.Context, q querier, id string, m *quire.Mail) error {
	return sqlstore.InsertMail(ctx, qOf(q), dialect, id, m)
}

func noNULText(s string) string { return sqlstore.NoNULText(s) }

func mailCreatedAt(m *quire.Mail) time.Time { return sqlstore.MailCreatedAt(m) }
