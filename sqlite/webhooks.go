package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"quire"
)

var _ quire.WebhookStore = (*DB)(nil)

// queueDeliveries queues, inside the transaction recording e, one delivery
// of e for each active webhook with a pattern that matches its action.
func queueDeliveries(ctx context.Context, tx execer, e *quire.Event) error {
	key := "event:" + e.ID
	if e.Target != nil && e.Target.ID != "" {
		key = e.Target.Type + ":" + e.Target.ID
	}
	at := toMicros(e.At)
	_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
		(webhook_id, event_id, action, order_key, next_try_at, created_at)
		SELECT w.id, ?, ?, ?, ?, ? FROM webhooks w
		WHERE w.active = 1 AND EXISTS (SELECT 1 FROM webhook_patterns p WHERE p.webhook_id = w.id
			AND ((p.exact = 1 AND p.prefix = ?) OR (p.exact = 0 AND substr(?, 1, length(p.prefix)) = p.prefix)))`,
		e.ID, e.Action, key, at, at, e.Action, e.Action)
	if err != nil {
		return fmt.Errorf("queue webhook deliveries: %w", err)
	}
	return nil
}

const webhookColumns = `id, url, secret, events, active, created_at, updated_at`

func scanWebhook(scan func(dest ...any) error) (quire.Webhook, error) {
	var (
		w                quire.Webhook
		events           string
		created, updated int64
	)
	if err := scan(&w.ID, &w.URL, &w.Secret, &events, &w.Active, &created, &updated); err != nil {
		return w, err
	}
	w.CreatedAt, w.UpdatedAt = fromMicros(created), fromMicros(updated)
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return w, fmt.Errorf("webhook %s events: %w", w.ID, err)
	}
	return w, nil
}

// writePatterns replaces the pattern rows of w.
func writePatterns(ctx context.Context, tx *sql.Tx, w *quire.Webhook) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_patterns WHERE webhook_id = ?`, w.ID); err != nil {
		return err
	}
	for _, p := range w.Events {
		prefix, exact := quire.WebhookPattern(p)
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_patterns (webhook_id, prefix, exact) VALUES (?, ?, ?)
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
	err = db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhooks (id, url, secret, events, active, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, id, w.URL, w.Secret, string(events), w.Active, toMicros(now), toMicros(now)); err != nil {
			return err
		}
		w.ID = id
		return writePatterns(ctx, tx, w)
	})
	if err != nil {
		w.ID = ""
		return fmt.Errorf("create webhook: %w", db.noteWrite(err))
	}
	db.noteChange()
	w.CreatedAt, w.UpdatedAt = fromMicros(toMicros(now)), fromMicros(toMicros(now))
	return nil
}

func (db *DB) Webhooks(ctx context.Context) ([]quire.Webhook, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhooks ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	defer rows.Close()
	out := []quire.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return out, nil
}

func (db *DB) WebhookByID(ctx context.Context, id string) (*quire.Webhook, error) {
	w, err := scanWebhook(db.read.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook")
	}
	if err != nil {
		return nil, fmt.Errorf("read webhook: %w", err)
	}
	return &w, nil
}

func (db *DB) UpdateWebhook(ctx context.Context, w *quire.Webhook, now time.Time) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return fmt.Errorf("update webhook: %w", err)
	}
	err = db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := updateOne(ctx, tx, "webhook", `UPDATE webhooks SET url = ?, secret = ?, events = ?, active = ?, updated_at = ?
			WHERE id = ?`, w.URL, w.Secret, string(events), w.Active, toMicros(now), w.ID); err != nil {
			return err
		}
		return writePatterns(ctx, tx, w)
	})
	if err != nil {
		return db.noteWrite(err)
	}
	db.noteChange()
	w.UpdatedAt = fromMicros(toMicros(now))
	return nil
}

func (db *DB) DeleteWebhook(ctx context.Context, id string) error {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "webhook", `DELETE FROM webhooks WHERE id = ?`, id)
	})
	return db.noteWrite(err)
}

const deliveryColumns = `seq, webhook_id, event_id, action, state, attempts, next_try_at, created_at, delivered_at,
	last_status, last_error`

func scanDelivery(scan func(dest ...any) error) (quire.WebhookDelivery, error) {
	var (
		d                       quire.WebhookDelivery
		seq, next, created, del int64
	)
	if err := scan(&seq, &d.WebhookID, &d.EventID, &d.Action, &d.State, &d.Attempts, &next, &created, &del,
		&d.LastStatus, &d.LastError); err != nil {
		return d, err
	}
	d.ID = strconv.FormatInt(seq, 10)
	d.NextTryAt, d.CreatedAt, d.DeliveredAt = fromMicros(next), fromMicros(created), fromMicros(del)
	return d, nil
}

// ClaimDeliveries selects and leases in one write transaction: SQLite has
// one writer, so two workers cannot both see a delivery as due.
func (db *DB) ClaimDeliveries(ctx context.Context, webhookID string, now time.Time, lease time.Duration, n int) ([]quire.WebhookDelivery, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []quire.WebhookDelivery
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = nil // the committer may run this again
		rows, err := tx.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
			WHERE d.webhook_id = ? AND d.state = 'pending' AND d.next_try_at <= ?
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = d.webhook_id
				AND e.order_key = d.order_key AND e.state = 'pending' AND e.seq < d.seq)
			ORDER BY d.seq LIMIT ?`, webhookID, toMicros(now), n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDelivery(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		until := toMicros(now.Add(lease))
		for i := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, next_try_at = ?
				WHERE seq = ?`, until, seqOf(out[i].ID)); err != nil {
				return err
			}
			out[i].Attempts++
			out[i].NextTryAt = fromMicros(until)
			e, err := scanEvent(tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM audit_events WHERE id = ?`,
				out[i].EventID).Scan)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			default:
				out[i].Event = &e
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", db.noteWrite(err))
	}
	return out, nil
}

func (db *DB) DeliverySucceeded(ctx context.Context, id string, at time.Time, status int) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "delivery", `UPDATE webhook_deliveries SET state = 'delivered', delivered_at = ?,
			next_try_at = 0, last_status = ?, last_error = '' WHERE seq = ?`, toMicros(at), status, seqOf(id))
	})
}

func (db *DB) DeliveryFailed(ctx context.Context, id string, status int, reason string, next time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if next.IsZero() {
			return updateOne(ctx, tx, "delivery", `UPDATE webhook_deliveries SET state = 'failed', next_try_at = 0,
				last_status = ?, last_error = ? WHERE seq = ?`, status, reason, seqOf(id))
		}
		return updateOne(ctx, tx, "delivery", `UPDATE webhook_deliveries SET next_try_at = ?, last_status = ?,
			last_error = ? WHERE seq = ?`, toMicros(next), status, reason, seqOf(id))
	})
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

func (db *DB) Deliveries(ctx context.Context, webhookID, before string, limit int) ([]quire.WebhookDelivery, error) {
	cursor := int64(1<<63 - 1)
	if before != "" {
		cursor = seqOf(before)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`, webhookID, cursor, limit)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	defer rows.Close()
	out := []quire.WebhookDelivery{}
	for rows.Next() {
		d, err := scanDelivery(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("deliveries: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	return out, nil
}

func (db *DB) PruneDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE seq IN (
			SELECT seq FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ? ORDER BY created_at LIMIT ?)`,
			toMicros(before), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", db.noteWrite(err))
	}
	return int(n), nil
}
