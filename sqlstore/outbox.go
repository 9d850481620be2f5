package sqlstore

import (
	"context"
	"errors"

	"quire"
)

// The outbox's store is package mail's (mail.OutboxSQL); the operations of
// other capabilities queue their mails in their own transactions with
// InsertMail.

// InsertMail queues m, due at once, in q and returns its id: inside a
// transaction, a mail and the record it belongs to commit together or not
// at all. With token set, only when that one-time token exists.
func InsertMail(ctx context.Context, q Q, d *Dialect, m *quire.Mail, token string) (string, error) {
	if m.To == "" {
		return "", errors.New("mail has no recipient")
	}
	id, created, from := NewID(), Micro(m.CreatedAt), ""
	if created.IsZero() {
		created = WallClock()
	}
	args := []any{id, ReplaceNUL(m.To), ReplaceNUL(m.Subject), ReplaceNUL(m.Text), ReplaceNUL(m.HTML), d.Time(created),
		ReplaceNUL(m.Unsubscribe)}
	if token != "" {
		from, args = ` FROM one_time_tokens WHERE id = ?`, append(args, token)
	}
	_, err := q.Exec(ctx, `INSERT INTO outbox (id, recipient, subject, text, html, created_at, unsubscribe)
		SELECT ?, ?, ?, ?, ?, ?, ?`+from, args...)
	return id, err
}

func (s *Store) insertMail(ctx context.Context, q Q, m *quire.Mail, token string) (string, error) {
	return InsertMail(ctx, q, s.d, m, token)
}
