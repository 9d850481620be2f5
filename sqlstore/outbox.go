package sqlstore

import (
	"context"
	"errors"
	"time"

	"quire"
)

func (s *Store) QueueMail(ctx context.Context, m *quire.Mail) error {
	var id string
	err := s.e.Write(ctx, func(ctx context.Context, q Q) (err error) { id, err = s.insertMail(ctx, q, m, ""); return err })
	if err != nil {
		return s.e.Fail(ctx, "queue mail", err)
	}
	m.ID = id
	return nil
}

// insertMail queues m, due at once, in q and returns its id: inside a
// transaction, a mail and the record it belongs to commit together or not
// at all. With token set, only when that one-time token exists.
func (s *Store) insertMail(ctx context.Context, q Q, m *quire.Mail, token string) (string, error) {
	if m.To == "" {
		return "", errors.New("mail has no recipient")
	}
	id, created, from := NewID(), Micro(m.CreatedAt), ""
	if created.IsZero() {
		created = WallClock()
	}
	args := []any{id, ReplaceNUL(m.To), ReplaceNUL(m.Subject), ReplaceNUL(m.Text), ReplaceNUL(m.HTML), s.d.Time(created)}
	if token != "" {
		from, args = ` FROM one_time_tokens WHERE id = ?`, append(args, token)
	}
	_, err := q.Exec(ctx, `INSERT INTO outbox (id, recipient, subject, text, html, created_at) SELECT ?, ?, ?, ?, ?, ?`+from, args...)
	return id, err
}

const mailColumns = `id, recipient, subject, text, html, created_at, attempts, next_try_at, sent_at, last_error`

func scanMail(scan func(dest ...any) error) (quire.Mail, error) {
	var m quire.Mail
	err := scan(&m.ID, &m.To, &m.Subject, &m.Text, &m.HTML, T(&m.CreatedAt), &m.Attempts, T(&m.NextTryAt), T(&m.SentAt),
		&m.LastError)
	return m, err
}

// ClaimMail selects the due mails, in the order they fell due, and leases
// them in one write transaction. On PostgreSQL the selected rows are
// locked with SKIP LOCKED: a worker on another node skips the rows this
// one holds and, after the commit, no longer sees them as due. SQLite has
// one writer, so two workers (in this process or another) cannot both see
// a mail as due. Either way no mail is claimed twice.
func (s *Store) ClaimMail(ctx context.Context, now time.Time, lease time.Duration, n int) ([]quire.Mail, error) {
	if n <= 0 {
		return nil, nil
	}
	until := Micro(now.Add(lease))
	var mails []quire.Mail
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		var err error
		mails, err = Collect(ctx, q, scanMail, `SELECT `+mailColumns+` FROM outbox
			WHERE `+s.d.None("sent_at")+` AND `+s.d.None("given_up_at")+` AND (`+s.d.None("next_try_at")+` OR next_try_at <= ?)
			ORDER BY next_try_at NULLS FIRST, created_at, id LIMIT ?`+s.d.Locked(" FOR UPDATE SKIP LOCKED"), s.d.Time(now), n)
		if err != nil || len(mails) == 0 {
			return err
		}
		var p Params
		set := `UPDATE outbox SET attempts = attempts + 1, next_try_at = ` + p.Add(s.d.Time(until)) + ` WHERE id IN `
		ids := make([]string, len(mails))
		for i := range mails {
			ids[i] = mails[i].ID
			mails[i].Attempts++
			mails[i].NextTryAt = until
		}
		_, err = q.Exec(ctx, set+p.In(ids...), p...)
		return err
	})
	if err != nil {
		return nil, s.e.Fail(ctx, "claim mail", err)
	}
	return mails, nil
}

func (s *Store) MailSent(ctx context.Context, id string, at time.Time) error {
	return s.updateOne(ctx, "mail", id, `UPDATE outbox SET sent_at = ?, next_try_at = `+s.d.NoTime+`, last_error = '', text = '', html = ''
		WHERE id = ?`, s.d.Time(at), id)
}

func (s *Store) MailFailed(ctx context.Context, id, reason string, next time.Time) error {
	reason = ReplaceNUL(reason)
	if next.IsZero() {
		return s.updateOne(ctx, "mail", id, `UPDATE outbox SET given_up_at = ?, next_try_at = `+s.d.NoTime+`, last_error = ?, text = '', html = ''
			WHERE id = ?`, s.d.Time(WallClock()), reason, id)
	}
	return s.updateOne(ctx, "mail", id, `UPDATE outbox SET next_try_at = ?, last_error = ? WHERE id = ?`, s.d.Time(next), reason, id)
}

func (s *Store) MailByID(ctx context.Context, id string) (*quire.Mail, error) {
	if HasNUL(id) {
		return nil, NotFound("mail")
	}
	m, err := scanMail(s.e.Read().QueryRow(ctx, `SELECT `+mailColumns+` FROM outbox WHERE id = ?`, id).Scan)
	if err != nil {
		return nil, s.e.Fail(ctx, "read mail", Found(err, "mail"))
	}
	return &m, nil
}
