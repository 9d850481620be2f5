package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.Outbox = (*DB)(nil)

func (db *DB) QueueMail(ctx context.Context, m *quire.Mail) error {
	if err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error { return insertMail(ctx, tx, m) }); err != nil {
		return fmt.Errorf("queue mail: %w", err)
	}
	return nil
}

// insertMail queues m inside tx, due at once, so that a mail and the record
// it belongs to (a token) are committed together or not at all.
func insertMail(ctx context.Context, tx *sql.Tx, m *quire.Mail) error {
	if m.To == "" {
		return errors.New("mail has no recipient")
	}
	id := newID()
	_, err := tx.ExecContext(ctx, `INSERT INTO outbox (id, recipient, subject, text, html, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, id, m.To, m.Subject, m.Text, m.HTML, toMicros(m.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert mail: %w", err)
	}
	m.ID = id
	return nil
}

const mailColumns = `id, recipient, subject, text, html, created_at, attempts, next_try_at, sent_at, last_error`

func scanMail(scan func(dest ...any) error) (quire.Mail, error) {
	var (
		m                     quire.Mail
		created, next, sentAt int64
	)
	err := scan(&m.ID, &m.To, &m.Subject, &m.Text, &m.HTML, &created, &m.Attempts, &next, &sentAt, &m.LastError)
	m.CreatedAt, m.NextTryAt, m.SentAt = fromMicros(created), fromMicros(next), fromMicros(sentAt)
	return m, err
}

// ClaimMail selects and leases in one write transaction: SQLite has one
// writer, so two workers (in this process or another) cannot both see a
// mail as due.
func (db *DB) ClaimMail(ctx context.Context, now time.Time, lease time.Duration, n int) ([]quire.Mail, error) {
	if n <= 0 {
		return nil, nil
	}
	var mails []quire.Mail
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		mails = nil // the committer may run this again
		rows, err := tx.QueryContext(ctx, `SELECT `+mailColumns+` FROM outbox
			WHERE sent_at = 0 AND given_up_at = 0 AND next_try_at <= ?
			ORDER BY next_try_at, created_at, id LIMIT ?`, toMicros(now), n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m, err := scanMail(rows.Scan)
			if err != nil {
				return err
			}
			mails = append(mails, m)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		until := toMicros(now.Add(lease))
		for i := range mails {
			if _, err := tx.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1, next_try_at = ? WHERE id = ?`,
				until, mails[i].ID); err != nil {
				return err
			}
			mails[i].Attempts++
			mails[i].NextTryAt = fromMicros(until)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim mail: %w", err)
	}
	return mails, nil
}

func (db *DB) MailSent(ctx context.Context, id string, at time.Time) error {
	return db.updateMail(ctx, `UPDATE outbox SET sent_at = ?, next_try_at = 0, last_error = '', text = '', html = ''
		WHERE id = ?`, toMicros(at), id)
}

func (db *DB) MailFailed(ctx context.Context, id, reason string, next time.Time) error {
	if next.IsZero() {
		return db.updateMail(ctx, `UPDATE outbox SET given_up_at = ?, next_try_at = 0, last_error = ?, text = '', html = ''
			WHERE id = ?`, toMicros(wallClock()), reason, id)
	}
	return db.updateMail(ctx, `UPDATE outbox SET next_try_at = ?, last_error = ? WHERE id = ?`,
		toMicros(next), reason, id)
}

func (db *DB) updateMail(ctx context.Context, query string, args ...any) error {
	return updateOne(ctx, db.write, "mail", query, args...)
}

func (db *DB) MailByID(ctx context.Context, id string) (*quire.Mail, error) {
	m, err := scanMail(db.read.QueryRowContext(ctx, `SELECT `+mailColumns+` FROM outbox WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("mail")
	}
	if err != nil {
		return nil, fmt.Errorf("read mail: %w", err)
	}
	return &m, nil
}
