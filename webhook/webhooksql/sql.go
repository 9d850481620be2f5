// Package webhooksql is the store of webhooks and their delivery queue,
// written once for SQLite and PostgreSQL on a sqlstore.Engine. Package
// webhook holds the rules.
package webhooksql

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/sqlstore"
)

const webhookColumns = `id, url, secret, events, active, created_at, updated_at`

func scanWebhook(scan func(dest ...any) error) (quire.Webhook, error) {
	var (
		w      quire.Webhook
		events []byte
	)
	if err := scan(&w.ID, &w.URL, &w.Secret, &events, &w.Active, sqlstore.T(&w.CreatedAt), sqlstore.T(&w.UpdatedAt)); err != nil {
		return w, err
	}
	if err := json.Unmarshal(events, &w.Events); err != nil {
		return w, fmt.Errorf("webhook %s events: %w", w.ID, err)
	}
	return w, nil
}

func (s *WebhookSQL) CreateWebhook(ctx context.Context, w *quire.Webhook, now time.Time) error {
	id, now := sqlstore.NewID(), sqlstore.Micro(now)
	quire.NameCreated(s.E.Events(), id)
	// The count and the insert in one transaction, one create at a time:
	// counted before, a burst of creates passed the limit together.
	room := func(ctx context.Context, q sqlstore.Q) error {
		if err := s.D.Lock(ctx, q, sqlstore.LockWebhooks, ""); err != nil {
			return err
		}
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM webhooks`).Scan(&n); err != nil {
			return err
		}
		if n >= quire.MaxWebhooks {
			return quire.Invalid(map[string]string{"url": "at most " + strconv.Itoa(quire.MaxWebhooks) + " webhooks may be registered"})
		}
		return nil
	}
	if err := s.saveWebhook(ctx, w, id, room, `INSERT INTO webhooks (url, secret, events, active, updated_at, id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, s.D.Time(now), id, s.D.Time(now)); err != nil {
		return s.E.Fail(ctx, "create webhook", err)
	}
	w.ID, w.CreatedAt, w.UpdatedAt = id, now, now
	return nil
}

func (s *WebhookSQL) UpdateWebhook(ctx context.Context, w *quire.Webhook, now time.Time) error {
	if sqlstore.HasNUL(w.ID) {
		return sqlstore.NotFound("webhook")
	}
	now = sqlstore.Micro(now)
	if err := s.saveWebhook(ctx, w, w.ID, nil, `UPDATE webhooks SET url = ?, secret = ?, events = ?, active = ?, updated_at = ?
		WHERE id = ?`, s.D.Time(now), w.ID); err != nil {
		return s.E.Fail(ctx, "update webhook", err)
	}
	w.UpdatedAt = now
	return nil
}

// saveWebhook runs check (when not nil) and then save, which writes the
// webhook id from w's url, secret, events and active and then more, and
// replaces its pattern rows, in one transaction. A NUL, which a PostgreSQL
// text column cannot store, is refused on both engines.
func (s *WebhookSQL) saveWebhook(ctx context.Context, w *quire.Webhook, id string, check func(context.Context, sqlstore.Q) error,
	save string, more ...any) error {
	if err := sqlstore.NoNUL(map[string]string{"url": w.URL, "secret": w.Secret, "events": strings.Join(w.Events, "")}); err != nil {
		return err
	}
	events, err := json.Marshal(w.Events)
	if err != nil {
		return err
	}
	return s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if check != nil {
			if err := check(ctx, q); err != nil {
				return err
			}
		}
		if err := sqlstore.One(ctx, q, "webhook", save, append([]any{w.URL, w.Secret, string(events), w.Active}, more...)...); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `DELETE FROM webhook_patterns WHERE webhook_id = ?`, id); err != nil {
			return err
		}
		for _, p := range w.Events {
			prefix, exact := quire.WebhookPattern(p)
			if _, err := q.Exec(ctx, `INSERT INTO webhook_patterns (webhook_id, prefix, exact) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, id, prefix, exact); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *WebhookSQL) Webhooks(ctx context.Context) ([]quire.Webhook, error) {
	return sqlstore.List(ctx, s.E, "webhooks", scanWebhook, `SELECT `+webhookColumns+` FROM webhooks ORDER BY created_at, id`)
}

func (s *WebhookSQL) WebhookByID(ctx context.Context, id string) (*quire.Webhook, error) {
	if sqlstore.HasNUL(id) {
		return nil, sqlstore.NotFound("webhook")
	}
	w, err := scanWebhook(s.E.Read().QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = ?`, id).Scan)
	if err != nil {
		return nil, s.E.Fail(ctx, "read webhook", sqlstore.Found(err, "webhook"))
	}
	return &w, nil
}

func (s *WebhookSQL) DeleteWebhook(ctx context.Context, id string) error {
	return sqlstore.UpdateOne(ctx, s.E, "webhook", id, `DELETE FROM webhooks WHERE id = ?`, id)
}

const deliveryColumns = `seq, webhook_id, event_id, action, state, attempts, next_try_at, created_at, delivered_at,
	last_status, last_error`

func scanDelivery(scan func(dest ...any) error) (quire.WebhookDelivery, error) {
	var (
		d   quire.WebhookDelivery
		seq int64
	)
	if err := scan(&seq, &d.WebhookID, &d.EventID, &d.Action, &d.State, &d.Attempts, sqlstore.T(&d.NextTryAt), sqlstore.T(&d.CreatedAt),
		sqlstore.T(&d.DeliveredAt), &d.LastStatus, &d.LastError); err != nil {
		return d, err
	}
	d.ID = strconv.FormatInt(seq, 10)
	return d, nil
}

// ClaimDeliveries leases the due heads of their keys in one statement, in
// a write transaction that also reads their events. On PostgreSQL the
// heads are locked with SKIP LOCKED: a delivery another node holds is
// skipped, and so is every later one of its key, which still sees it
// pending. SQLite has one writer, so two workers cannot both see a
// delivery as due.
func (s *WebhookSQL) ClaimDeliveries(ctx context.Context, webhookID string, now time.Time, lease time.Duration, n int) ([]quire.WebhookDelivery, error) {
	if n <= 0 || sqlstore.HasNUL(webhookID) {
		return nil, nil
	}
	var out []quire.WebhookDelivery
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		var err error
		out, err = sqlstore.Collect(ctx, q, scanDelivery, `UPDATE webhook_deliveries SET attempts = attempts + 1, next_try_at = ?
			WHERE seq IN (SELECT seq FROM webhook_deliveries d
				WHERE d.webhook_id = ? AND d.state = 'pending' AND d.next_try_at <= ?
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = d.webhook_id
					AND e.order_key = d.order_key AND e.state = 'pending' AND e.seq < d.seq)
				ORDER BY d.seq LIMIT ?`+s.D.Locked(" FOR UPDATE SKIP LOCKED")+`)
			RETURNING `+deliveryColumns, s.D.Time(now.Add(lease)), webhookID, s.D.Time(now), n)
		if err != nil {
			return err
		}
		// RETURNING has no order: give them in the order they were queued.
		slices.SortFunc(out, func(a, b quire.WebhookDelivery) int { return cmp.Compare(seqOf(a.ID), seqOf(b.ID)) })
		for i := range out {
			e, err := sqlstore.ScanEvent(q.QueryRow(ctx, `SELECT `+sqlstore.EventColumns+` FROM audit_events WHERE id = ?`, out[i].EventID).Scan)
			switch {
			case errors.Is(err, sqlstore.ErrNoRows): // pruned
			case err != nil:
				return err
			default:
				out[i].Event = &e
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "claim deliveries", err)
	}
	return out, nil
}

func (s *WebhookSQL) DeliverySucceeded(ctx context.Context, id string, at time.Time, status int) error {
	return sqlstore.UpdateOne(ctx, s.E, "delivery", "", `UPDATE webhook_deliveries SET state = 'delivered', delivered_at = ?,
		next_try_at = `+s.D.NoTime+`, last_status = ?, last_error = '' WHERE seq = ?`, s.D.Time(at), status, seqOf(id))
}

// DeliveryFailed with no next try fails the delivery for good.
func (s *WebhookSQL) DeliveryFailed(ctx context.Context, id string, status int, reason string, next time.Time) error {
	failed := ""
	if next.IsZero() {
		failed = `state = 'failed', `
	}
	return sqlstore.UpdateOne(ctx, s.E, "delivery", "", `UPDATE webhook_deliveries SET `+failed+`next_try_at = ?, last_status = ?,
		last_error = ? WHERE seq = ?`, s.D.Time(next), status, sqlstore.ReplaceNUL(reason), seqOf(id))
}

// seqOf is the row of a delivery ID; -1 (no row) for one that is not a
// number.
func seqOf(id string) int64 {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 || strings.HasPrefix(id, "+") {
		return -1
	}
	return n
}

func (s *WebhookSQL) Deliveries(ctx context.Context, webhookID, before string, limit int) ([]quire.WebhookDelivery, error) {
	cursor := int64(1<<63 - 1)
	if before != "" {
		cursor = seqOf(before)
	}
	if sqlstore.HasNUL(webhookID) {
		return []quire.WebhookDelivery{}, nil
	}
	return sqlstore.List(ctx, s.E, "deliveries", scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`, webhookID, cursor, limit)
}

func (s *WebhookSQL) PruneDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	n, err := s.E.ExecOne(ctx, "", `DELETE FROM webhook_deliveries WHERE seq IN (
		SELECT seq FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ? ORDER BY created_at LIMIT ?)`,
		s.D.Time(before), limit)
	if err != nil {
		return 0, s.E.Fail(ctx, "prune deliveries", err)
	}
	return int(n), nil
}

// WebhookSQL is quire.WebhookStore written once for both engines, which
// embed it. The deliveries of an event are queued in the transaction that
// records it, by sqlstore.InsertEvents.
type WebhookSQL struct{ sqlstore.Base }

// NewSQL returns the webhook store on e.
func NewSQL(e sqlstore.Engine) *WebhookSQL { return &WebhookSQL{sqlstore.NewBase(e)} }

var _ quire.WebhookStore = (*WebhookSQL)(nil)
