package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.WebhookStore = (*DB)(nil)

// queueDeliveries queues, inside the transaction recording e, one delivery
// of e for each active webhook with a pattern that matches its action.
func queueDeliveries(ctx context.Context, tx pgx.Tx, e *quire.Event) error {
	key := "event:" + e.ID
	if e.Target != nil && e.Target.ID != "" {
		key = e.Target.Type + ":" + e.Target.ID
	}
	_, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries
		(webhook_id, event_id, action, order_key, next_try_at, created_at)
		SELECT w.id, $1, $2, $3, $4, $4 FROM webhooks w
		WHERE w.active AND EXISTS (SELECT 1 FROM webhook_patterns p WHERE p.webhook_id = w.id
			AND ((p.exact AND p.prefix = $2) OR (NOT p.exact AND left($2, length(p.prefix)) = p.prefix)))`,
		e.ID, e.Action, key, micro(e.At))
	if err != nil {
		return fmt.Errorf("queue webhook deliveries: %w", err)
	}
	return nil
}

const webhookColumns = `id, url, secret, events, active, created_at, updated_at`

func scanWebhook(scan func(dest ...any) error) (quire.Webhook, error) {
	var (
		w      quire.Webhook
		events []byte
	)
	if err := scan(&w.ID, &w.URL, &w.Secret, &events, &w.Active, &w.CreatedAt, &w.UpdatedAt); err != nil {
		return w, err
	}
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	if err := json.Unmarshal(events, &w.Events); err != nil {
		return w, fmt.Errorf("webhook %s events: %w", w.ID, err)
	}
	return w, nil
}

// writePatterns replaces the pattern rows of w.
func writePatterns(ctx context.Context, tx pgx.Tx, w *quire.Webhook) error {
	if _, err := tx.Exec(ctx, `DELETE FROM webhook_patterns WHERE webhook_id = $1`, w.ID); err != nil {
		return err
	}
	for _, p := range w.Events {
		prefix, exact := quire.WebhookPattern(p)
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_patterns (webhook_id, prefix, exact) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, w.ID, prefix, exact); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) CreateWebhook(ctx context.Context, w *quire.Webhook, now time.Time) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	id := newID()
	quire.NameCreated(db.events, id)
	now = micro(now)
	err = db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO webhooks (id, url, secret, events, active, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6)`, id, w.URL, w.Secret, string(events), w.Active, now); err != nil {
			return err
		}
		return writePatterns(ctx, tx, &quire.Webhook{ID: id, Events: w.Events})
	})
	if err != nil {
		return db.fail(ctx, "create webhook", err)
	}
	w.ID, w.CreatedAt, w.UpdatedAt = id, now, now
	return nil
}

func (db *DB) Webhooks(ctx context.Context) ([]quire.Webhook, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks ORDER BY created_at, id`)
	if err != nil {
		return nil, db.fail(ctx, "webhooks", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Webhook, error) { return scanWebhook(row.Scan) })
	if err != nil {
		return nil, db.fail(ctx, "webhooks", err)
	}
	if out == nil {
		out = []quire.Webhook{}
	}
	return out, nil
}

func (db *DB) WebhookByID(ctx context.Context, id string) (*quire.Webhook, error) {
	w, err := scanWebhook(db.pool.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = $1`, id).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("webhook")
	}
	if err != nil {
		return nil, db.fail(ctx, "read webhook", err)
	}
	return &w, nil
}

func (db *DB) UpdateWebhook(ctx context.Context, w *quire.Webhook, now time.Time) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return fmt.Errorf("update webhook: %w", err)
	}
	now = micro(now)
	err = db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE webhooks SET url = $1, secret = $2, events = $3, active = $4, updated_at = $5
			WHERE id = $6`, w.URL, w.Secret, string(events), w.Active, now, w.ID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("webhook")
		}
		return writePatterns(ctx, tx, w)
	})
	if err != nil {
		return db.fail(ctx, "update webhook", err)
	}
	w.UpdatedAt = now
	return nil
}

func (db *DB) DeleteWebhook(ctx context.Context, id string) error {
	_, err := db.exec(ctx, "webhook", `DELETE FROM webhooks WHERE id = $1`, id)
	return db.fail(ctx, "delete webhook", err)
}

const deliveryColumns = `seq, webhook_id, event_id, action, state, attempts, next_try_at, created_at, delivered_at,
	last_status, last_error`

func scanDelivery(scan func(dest ...any) error) (quire.WebhookDelivery, error) {
	var (
		d              quire.WebhookDelivery
		seq            int64
		next, doneTime *time.Time
	)
	if err := scan(&seq, &d.WebhookID, &d.EventID, &d.Action, &d.State, &d.Attempts, &next, &d.CreatedAt, &doneTime,
		&d.LastStatus, &d.LastError); err != nil {
		return d, err
	}
	d.ID = strconv.FormatInt(seq, 10)
	d.CreatedAt = d.CreatedAt.UTC()
	d.NextTryAt, d.DeliveredAt = timeOf(next), timeOf(doneTime)
	return d, nil
}

// ClaimDeliveries locks the due heads of their keys with SKIP LOCKED: a
// delivery another node holds is skipped, and so is every later one of its
// key, which still sees it pending.
func (db *DB) ClaimDeliveries(ctx context.Context, webhookID string, now time.Time, lease time.Duration, n int) ([]quire.WebhookDelivery, error) {
	if n <= 0 {
		return nil, nil
	}
	now = micro(now)
	var out []quire.WebhookDelivery
	err := db.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH due AS (
				SELECT seq FROM webhook_deliveries d
				WHERE d.webhook_id = $1 AND d.state = 'pending' AND d.next_try_at <= $2
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = d.webhook_id
					AND e.order_key = d.order_key AND e.state = 'pending' AND e.seq < d.seq)
				ORDER BY d.seq LIMIT $3
				FOR UPDATE SKIP LOCKED
			)
			UPDATE webhook_deliveries w SET attempts = w.attempts + 1, next_try_at = $4
			FROM due WHERE w.seq = due.seq
			RETURNING w.seq, w.webhook_id, w.event_id, w.action, w.state, w.attempts, w.next_try_at, w.created_at,
				w.delivered_at, w.last_status, w.last_error`, webhookID, now, n, micro(now.Add(lease)))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.WebhookDelivery, error) {
			return scanDelivery(row.Scan)
		})
		if err != nil {
			return err
		}
		// RETURNING has no order: give them in the order they were queued.
		slices.SortFunc(out, func(a, b quire.WebhookDelivery) int { return cmpSeq(a.ID, b.ID) })
		for i := range out {
			e, err := scanEvent(tx.QueryRow(ctx, `SELECT `+eventColumns+` FROM audit_events WHERE id::text = $1`,
				out[i].EventID).Scan)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return err
			default:
				out[i].Event = &e
			}
		}
		return nil
	})
	if err != nil {
		return nil, db.fail(ctx, "claim deliveries", err)
	}
	return out, nil
}

func cmpSeq(a, b string) int {
	x, y := seqOf(a), seqOf(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
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

func (db *DB) DeliverySucceeded(ctx context.Context, id string, at time.Time, status int) error {
	_, err := db.exec(ctx, "delivery", `UPDATE webhook_deliveries SET state = 'delivered', delivered_at = $1,
		next_try_at = NULL, last_status = $2, last_error = '' WHERE seq = $3`, micro(at), status, seqOf(id))
	return db.fail(ctx, "delivery succeeded", err)
}

func (db *DB) DeliveryFailed(ctx context.Context, id string, status int, reason string, next time.Time) error {
	var err error
	if next.IsZero() {
		_, err = db.exec(ctx, "delivery", `UPDATE webhook_deliveries SET state = 'failed', next_try_at = NULL,
			last_status = $1, last_error = $2 WHERE seq = $3`, status, reason, seqOf(id))
	} else {
		_, err = db.exec(ctx, "delivery", `UPDATE webhook_deliveries SET next_try_at = $1, last_status = $2,
			last_error = $3 WHERE seq = $4`, micro(next), status, reason, seqOf(id))
	}
	return db.fail(ctx, "delivery failed", err)
}

func (db *DB) Deliveries(ctx context.Context, webhookID, before string, limit int) ([]quire.WebhookDelivery, error) {
	cursor := int64(1<<63 - 1)
	if before != "" {
		cursor = seqOf(before)
	}
	rows, err := db.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, webhookID, cursor, limit)
	if err != nil {
		return nil, db.fail(ctx, "deliveries", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.WebhookDelivery, error) {
		return scanDelivery(row.Scan)
	})
	if err != nil {
		return nil, db.fail(ctx, "deliveries", err)
	}
	if out == nil {
		out = []quire.WebhookDelivery{}
	}
	return out, nil
}

func (db *DB) PruneDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM webhook_deliveries WHERE seq IN (
		SELECT seq FROM webhook_deliveries WHERE state <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)`,
		micro(before), limit)
	if err != nil {
		return 0, db.fail(ctx, "prune deliveries", err)
	}
	return int(tag.RowsAffected()), nil
}
