// Package mailsql is the outbox's store, written once for SQLite and
// PostgreSQL on a sqlstore.Engine. Package mail's worker holds the rules.
package mailsql

import (
	"context"
	"time"

	"quire"
	"quire/sqlstore"
)

func (s *OutboxSQL) QueueMail(ctx context.Context, m *quire.Mail) error {
	var id string
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) (err error) {
		id, err = sqlstore.InsertMail(ctx, q, s.D, m, "")
		return err
	})
	if err != nil {
		return s.E.Fail(ctx, "queue mail", err)
	}
	m.ID = id
	return nil
}

const mailColumns = `id, recipient, subject, text, html, created_at, attempts, next_try_at, sent_at, last_error, unsubscribe`

func scanMail(scan func(dest ...any) error) (quire.Mail, error) {
	var m quire.Mail
	err := scan(&m.ID, &m.To, &m.Subject, &m.Text, &m.HTML, sqlstore.T(&m.CreatedAt), &m.Attempts, sqlstore.T(&m.NextTryAt), sqlstore.T(&m.SentAt),
		&m.LastError, &m.Unsubscribe)
	return m, err
}

// ClaimMail selects the due mails, in the order they fell due, and leases
// them in one write transaction. On PostgreSQL the selected rows are
// locked with SKIP LOCKED: a worker on another node skips the rows this
// one holds and, after the commit, no longer sees them as due. SQLite has
// one writer, so two workers (in this process or another) cannot both see
// a mail as due. Either way no mail is claimed twice.
func (s *OutboxSQL) ClaimMail(ctx context.Context, now time.Time, lease time.Duration, n int) ([]quire.Mail, error) {
	if n <= 0 {
		return nil, nil
	}
	until := sqlstore.Micro(now.Add(lease))
	var mails []quire.Mail
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		var err error
		mails, err = sqlstore.Collect(ctx, q, scanMail, `SELECT `+mailColumns+` FROM outbox
			WHERE `+s.D.None("sent_at")+` AND `+s.D.None("given_up_at")+` AND (`+s.D.None("next_try_at")+` OR next_try_at <= ?)
			ORDER BY next_try_at NULLS FIRST, created_at, id LIMIT ?`+s.D.Locked(" FOR UPDATE SKIP LOCKED"), s.D.Time(now), n)
		if err != nil || len(mails) == 0 {
			return err
		}
		var p sqlstore.Params
		set := `UPDATE outbox SET attempts = attempts + 1, next_try_at = ` + p.Add(s.D.Time(until)) + ` WHERE id IN `
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
		return nil, s.E.Fail(ctx, "claim mail", err)
	}
	return mails, nil
}

func (s *OutboxSQL) MailSent(ctx context.Context, id string, at time.Time) error {
	return sqlstore.UpdateOne(ctx, s.E, "mail", id, `UPDATE outbox SET sent_at = ?, next_try_at = `+s.D.NoTime+`, last_error = '', text = '', html = ''
		WHERE id = ?`, s.D.Time(at), id)
}

func (s *OutboxSQL) MailFailed(ctx context.Context, id, reason string, next time.Time) error {
	reason = sqlstore.ReplaceNUL(reason)
	if next.IsZero() {
		return sqlstore.UpdateOne(ctx, s.E, "mail", id, `UPDATE outbox SET given_up_at = ?, next_try_at = `+s.D.NoTime+`, last_error = ?, text = '', html = ''
			WHERE id = ?`, s.D.Time(sqlstore.WallClock()), reason, id)
	}
	return sqlstore.UpdateOne(ctx, s.E, "mail", id, `UPDATE outbox SET next_try_at = ?, last_error = ? WHERE id = ?`, s.D.Time(next), reason, id)
}

func (s *OutboxSQL) MailByID(ctx context.Context, id string) (*quire.Mail, error) {
	if sqlstore.HasNUL(id) {
		return nil, sqlstore.NotFound("mail")
	}
	m, err := scanMail(s.E.Read().QueryRow(ctx, `SELECT `+mailColumns+` FROM outbox WHERE id = ?`, id).Scan)
	if err != nil {
		return nil, s.E.Fail(ctx, "read mail", sqlstore.Found(err, "mail"))
	}
	return &m, nil
}

// OutboxSQL is quire.Outbox written once for both engines, which embed it.
// The operations of other capabilities queue their mails in their own
// transactions (sqlstore.InsertMail): a mail and the record it belongs to
// commit together or not at all.
type OutboxSQL struct{ sqlstore.Base }

// NewSQL returns the outbox on e.
func NewSQL(e sqlstore.Engine) *OutboxSQL { return &OutboxSQL{sqlstore.NewBase(e)} }

var _ quire.Outbox = (*OutboxSQL)(nil)
