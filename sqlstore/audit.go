package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"quire"
)

// The audit log's reads and prune are package audit's (audit.AuditSQL), the
// webhooks' store package webhook's. What stays here is shared: the write
// of the events of a change (and of their webhook deliveries) in the
// change's transaction, which the engines' Write calls; the read of an
// event, which the audit log and the webhook deliveries both use; and the
// bounded prune of a log, one node at a time.

// InsertEvents writes, in q, the events whose Action is set, filling their
// IDs (and the time of one that has none), and queues their webhook
// deliveries. The engines' write transactions call it after their change.
// SQLite's committer passes a q of its statement cache: every saved
// document writes an event, and preparing its two statements each time
// cost 12% of the CPU of concurrent updates.
func InsertEvents(ctx context.Context, q Q, d *Dialect, evs []*quire.Event) error {
	for _, e := range evs {
		if e == nil || e.Action == "" {
			continue
		}
		details := []byte("{}")
		if e.Details != nil {
			var err error
			if details, err = json.Marshal(e.Details); err != nil {
				return fmt.Errorf("audit event %s: %w", e.Action, err)
			}
		}
		var actorID, targetType, targetID any
		var actorName, targetName string
		if e.Actor != nil {
			actorID, actorName = e.Actor.ID, e.Actor.Name
		}
		if e.Target != nil {
			targetType, targetID, targetName = e.Target.Type, e.Target.ID, e.Target.Name
		}
		if e.At.IsZero() {
			e.At = WallClock()
		}
		e.ID = NewID()
		if _, err := q.Exec(ctx, `INSERT INTO audit_events
			(id, at, action, actor_id, actor_name, target_type, target_id, target_name, ip, request_id, details)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, d.Time(e.At), e.Action, actorID, actorName, targetType, targetID, targetName,
			e.IP, e.RequestID, string(details)); err != nil {
			return fmt.Errorf("audit event %s: %w", e.Action, err)
		}
		if err := queueDeliveries(ctx, q, d, e); err != nil {
			return fmt.Errorf("audit event %s: %w", e.Action, err)
		}
		if err := queueNotify(ctx, q, d, e); err != nil {
			return fmt.Errorf("audit event %s: %w", e.Action, err)
		}
	}
	return nil
}

// queueNotify queues, inside the transaction recording e, an event of a
// document that notifies people (quire.Notifies) for the notifications
// worker (notifysql's FanOut), with the people it mentions anew: the
// change never waits for its watchers.
func queueNotify(ctx context.Context, q Q, d *Dialect, e *quire.Event) error {
	if !quire.Notifies(e.Action) || e.Target == nil || e.Target.Type != quire.TargetDocument || e.Target.ID == "" {
		return nil
	}
	var actorID, commentID string
	if e.Actor != nil {
		actorID = e.Actor.ID
	}
	if id, ok := e.Details["comment_id"].(string); ok {
		commentID = id
	}
	mentions := e.Mentions
	if mentions == nil {
		mentions = []string{}
	}
	list, err := json.Marshal(mentions)
	if err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `INSERT INTO notify_queue (action, document_id, comment_id, actor_id, mentions, ignored, at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, e.Action, e.Target.ID, commentID, actorID, string(list), e.MentionsIgnored,
		d.Time(e.At)); err != nil {
		return fmt.Errorf("queue notifications: %w", err)
	}
	return nil
}

// queueDeliveries queues, inside the transaction recording e, one delivery
// of e for each active webhook with a pattern that matches its action.
func queueDeliveries(ctx context.Context, q Q, d *Dialect, e *quire.Event) error {
	key := "event:" + e.ID
	if e.Target != nil && e.Target.ID != "" {
		key = e.Target.Type + ":" + e.Target.ID
	}
	at := d.Time(e.At)
	_, err := q.Exec(ctx, `INSERT INTO webhook_deliveries
		(webhook_id, event_id, action, order_key, next_try_at, created_at)
		SELECT w.id, ?, ?, ?, ?, ? FROM webhooks w
		WHERE w.active AND EXISTS (SELECT 1 FROM webhook_patterns p WHERE p.webhook_id = w.id
			AND ((p.exact AND p.prefix = ?) OR (NOT p.exact AND substr(?, 1, length(p.prefix)) = p.prefix)))`,
		e.ID, e.Action, key, at, at, e.Action, e.Action)
	if err != nil {
		return fmt.Errorf("queue webhook deliveries: %w", err)
	}
	return nil
}

// EventColumns are the columns of audit_events ScanEvent reads, in its
// order.
const EventColumns = `id, at, action, actor_id, actor_name, COALESCE(target_type, ''), target_id, target_name, ip, request_id,
	details`

// ScanEvent reads an event of EventColumns.
func ScanEvent(scan func(dest ...any) error) (quire.Event, error) {
	var (
		e                                 quire.Event
		actorID, targetID                 *string
		actorName, targetType, targetName string
		details                           []byte
	)
	if err := scan(&e.ID, T(&e.At), &e.Action, &actorID, &actorName, &targetType, &targetID, &targetName,
		&e.IP, &e.RequestID, &details); err != nil {
		return e, err
	}
	if actorID != nil {
		e.Actor = &quire.EventActor{ID: *actorID, Name: actorName}
	}
	if targetID != nil {
		e.Target = &quire.EventTarget{Type: targetType, ID: *targetID, Name: targetName}
	}
	if err := json.Unmarshal(details, &e.Details); err != nil {
		return e, fmt.Errorf("audit event %s details: %w", e.ID, err)
	}
	return e, nil
}

// Prune runs del, which deletes a batch of at most limit rows, holding
// the lock of class taken without waiting: of several nodes whose prunes
// fall due together, one deletes the batch and the others return 0 at
// once.
func Prune(ctx context.Context, e Engine, op string, class int32, limit int, del string, args ...any) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := e.Write(ctx, func(ctx context.Context, q Q) error {
		n = 0
		if mine, err := e.Dialect().lockOne(ctx, q, class, true); err != nil || !mine {
			return err
		}
		var err error
		n, err = q.Exec(ctx, del, args...)
		return err
	})
	if err != nil {
		return 0, e.Fail(ctx, op, err)
	}
	return int(n), nil
}

func (s *Store) prune(ctx context.Context, op string, class int32, limit int, del string, args ...any) (int, error) {
	return Prune(ctx, s.e, op, class, limit, del, args...)
}
