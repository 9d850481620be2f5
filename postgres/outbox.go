package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.Outbox = (*DB)(nil)

func (db *DB) QueueMail(ctx context.Context, m *quire.Mail) error {
	if m.To == "" {
		return errors.New("queue mail: mail has no recipient")
	}
	id := newID()
	if err := insertMail(ctx, db.pool, id, m); err != nil {
		return db.fail(ctx, "queue mail", err)
	}
	m.ID = id
	return nil
}

// insertMail queues m as id, due at once, through q: inside a transaction,
// a mail and the record it belongs to (a token) commit together or not at
// all.
func insertMail(ctx context.Context, q querier, id string, m *quire.Mail) error {
	_, err := q.Exec(ctx, `INSERT INTO outbox (id, recipient, subject, text, html, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		id, noNULText(m.To), noNULText(m.Subject), noNULText(m.Text), noNULText(m.HTML), mailCreatedAt(m))
	return err
}

// noNULText replaces U+0000, which a text column cannot hold, in text that
// quire composes itself (mails) from what a client sent.
func noNULText(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// mailCreatedAt is the creation time of m, now when the caller left it zero.
func mailCreatedAt(m *quire.Mail) time.Time {
	if m.CreatedAt.IsZero() {
		return wallClock()
	}
	return micro(m.CreatedAt)
}

const mailColumns = `id, recipient, subject, text, html, created_at, attempts, next_try_at, sent_at, last_error`

func scanMail(scan func(dest ...any) error, extra ...any) (quire.Mail, error) {
	var (
		m          quire.Mail
		next, sent *time.Time
	)
	err := scan(append([]any{&m.ID, &m.To, &m.Subject, &m.Text, &m.HTML, &m.CreatedAt, &m.Attempts, &next, &sent, &m.LastError}, extra...)...)
	m.CreatedAt, m.NextTryAt, m.SentAt = m.CreatedAt.UTC(), timeOf(next), timeOf(sent)
	return m, err
}

// ClaimMail selects the due mails with FOR UPDATE SKIP LOCKED and leases
// them in the same statement: a worker on another node skips the rows this
// one holds and, after the commit, no longer sees them as due, so no mail
// is claimed twice.
func (db *DB) ClaimMail(ctx context.Context, now time.Time, lease time.Duration, n int) ([]quire.Mail, error) {
	if n <= 0 {
		return nil, nil
	}
	now = micro(now)
	rows, err := db.pool.Query(ctx, `WITH due AS (
			SELECT id, next_try_at, created_at FROM outbox
			WHERE sent_at IS NULL AND given_up_at IS NULL AND (next_try_at IS NULL OR next_try_at <= $1)
			ORDER BY next_try_at NULLS FIRST, created_at, id
			LIMIT $2
			FOR UPDATE SKIP LOCKED
		)
		UPDATE outbox o SET attempts = o.attempts + 1, next_try_at = $3
		FROM due WHERE o.id = due.id
		RETURNING o.id, o.recipient, o.subject, o.text, o.html, o.created_at, o.attempts, o.next_try_at, o.sent_at,
			o.last_error, due.next_try_at`, now, n, micro(now.Add(lease)))
	if err != nil {
		return nil, db.fail(ctx, "claim mail", err)
	}
	type claimed struct {
		m   quire.Mail
		due *time.Time
	}
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (claimed, error) {
		var c claimed
		m, err := scanMail(row.Scan, &c.due)
		c.m = m
		return c, err
	})
	if err != nil {
		return nil, db.fail(ctx, "claim mail", err)
	}
	// RETURNING has no order: give the mails in the order they fell due.
	slices.SortFunc(cs, func(a, b claimed) int {
		switch {
		case a.due == nil && b.due != nil:
			return -1
		case a.due != nil && b.due == nil:
			return 1
		case a.due != nil && !a.due.Equal(*b.due):
			return a.due.Compare(*b.due)
		case !a.m.CreatedAt.Equal(b.m.CreatedAt):
			return a.m.CreatedAt.Compare(b.m.CreatedAt)
		}
		return strings.Compare(a.m.ID, b.m.ID)
	})
	mails := make([]quire.Mail, len(cs))
	for i, c := range cs {
		mails[i] = c.m
	}
	return mails, nil
}

func (db *DB) MailSent(ctx context.Context, id string, at time.Time) error {
	return db.updateMail(ctx, id, `UPDATE outbox SET sent_at = $1, next_try_at = NULL, last_error = '', text = '', html = ''
		WHERE id = $2`, micro(at), id)
}

func (db *DB) MailFailed(ctx context.Context, id, reason string, next time.Time) error {
	reason = noNULText(reason)
	if next.IsZero() {
		return db.updateMail(ctx, id, `UPDATE outbox SET given_up_at = $1, next_try_at = NULL, last_error = $2, text = '', html = ''
			WHERE id = $3`, wallClock(), reason, id)
	}
	return db.updateMail(ctx, id, `UPDATE outbox SET next_try_at = $1, last_error = $2 WHERE id = $3`,
		micro(next), reason, id)
}

func (db *DB) updateMail(ctx context.Context, id, query string, args ...any) error {
	if hasNUL(id) {
		return notFound("mail")
	}
	tag, err := db.pool.Exec(ctx, query, args...)
	if err != nil {
		return db.fail(ctx, "update mail", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("mail")
	}
	return nil
}

func (db *DB) MailByID(ctx context.Context, id string) (*quire.Mail, error) {
	if hasNUL(id) {
		return nil, notFound("mail")
	}
	m, err := scanMail(db.pool.QueryRow(ctx, `SELECT `+mailColumns+` FROM outbox WHERE id = $1`, id).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("mail")
	}
	if err != nil {
		return nil, db.fail(ctx, "read mail", err)
	}
	return &m, nil
}
