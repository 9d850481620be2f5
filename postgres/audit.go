package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"quire"
)

var _ quire.AuditLog = (*DB)(nil)

// Recording returns a DB on db's pool whose write transactions insert evs
// after their change, inside the same transaction (db.go's tx): a change
// refused writes none of them.
func (db *DB) Recording(evs ...*quire.Event) quire.Store {
	return withStore(&DB{pool: db.pool, searches: db.searches, events: append(db.events[:len(db.events):len(db.events)], evs...)})
}

// RecordEvent writes ev alone, in a transaction of its own.
func (db *DB) RecordEvent(ctx context.Context, ev *quire.Event) error {
	if err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		return insertEvents(ctx, tx, []*quire.Event{ev})
	}); err != nil {
		return db.fail(ctx, "record event", err)
	}
	return nil
}

// exec runs one write statement on the pool, or, when db records events,
// in a transaction with them. When one is not "", a statement that changes
// no row is ENOTFOUND naming it, decided inside the transaction, so that
// the events of a change that did not happen are not written.
func (db *DB) exec(ctx context.Context, one, query string, args ...any) (pgconn.CommandTag, error) {
	if len(db.events) == 0 {
		tag, err := db.pool.Exec(ctx, query, args...)
		if err == nil && one != "" && tag.RowsAffected() == 0 {
			return tag, notFound(one)
		}
		return tag, err
	}
	var tag pgconn.CommandTag
	err := db.tx(ctx, func(tx pgx.Tx) (err error) {
		tag, err = tx.Exec(ctx, query, args...)
		if err == nil && one != "" && tag.RowsAffected() == 0 {
			return notFound(one)
		}
		return err
	})
	return tag, err
}

// insertEvents writes the events whose Action is set, filling their IDs.
func insertEvents(ctx context.Context, tx pgx.Tx, evs []*quire.Event) error {
	for _, e := range evs {
		if e == nil || e.Action == "" {
			continue
		}
		details, err := json.Marshal(e.Details)
		if err != nil {
			return fmt.Errorf("audit event %s: %w", e.Action, err)
		}
		if e.Details == nil {
			details = []byte("{}")
		}
		var actorID, targetType, targetID any
		var actorName, targetName string
		if e.Actor != nil {
			actorID, actorName = e.Actor.ID, e.Actor.Name
		}
		if e.Target != nil {
			targetType, targetID, targetName = e.Target.Type, e.Target.ID, e.Target.Name
		}
		e.ID = newID()
		if _, err := tx.Exec(ctx, `INSERT INTO audit_events
			(id, at, action, actor_id, actor_name, target_type, target_id, target_name, ip, request_id, details)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			e.ID, micro(e.At), e.Action, actorID, actorName, targetType, targetID, targetName,
			e.IP, e.RequestID, string(details)); err != nil {
			return fmt.Errorf("audit event %s: %w", e.Action, err)
		}
		if err := queueDeliveries(ctx, tx, e); err != nil {
			return fmt.Errorf("audit event %s: %w", e.Action, err)
		}
	}
	return nil
}

// AuditEvents walks the index of its filter (action, actor, target, or
// time alone) in (at, id) order from the cursor and stops after f.Limit
// rows.
func (db *DB) AuditEvents(ctx context.Context, f quire.AuditFilter) ([]quire.Event, error) {
	if hasNUL(f.Action, f.ActorID, f.TargetID) {
		return []quire.Event{}, nil
	}
	var (
		conds []string
		p     params
	)
	switch {
	case strings.HasSuffix(f.Action, "."):
		// A range on the indexed column: every action that starts with the
		// prefix sorts between it and the prefix with "." raised to "/"
		// (the column's collation is "C": byte order).
		conds = append(conds, `action >= `+p.add(f.Action)+` AND action < `+
			p.add(strings.TrimSuffix(f.Action, ".")+"/"))
	case f.Action != "":
		conds = append(conds, `action = `+p.add(f.Action))
	}
	if f.ActorID != "" {
		conds = append(conds, `actor_id = `+p.add(f.ActorID))
	}
	if f.TargetID != "" {
		conds = append(conds, `target_id = `+p.add(f.TargetID))
	}
	if !f.Since.IsZero() {
		conds = append(conds, `at >= `+p.add(micro(f.Since)))
	}
	if !f.Until.IsZero() {
		conds = append(conds, `at < `+p.add(micro(f.Until)))
	}
	if f.AfterID != "" {
		conds = append(conds, `(at, id) < (`+p.add(micro(f.AfterAt))+`, `+p.add(f.AfterID)+`::uuid)`)
	}
	where := ""
	if len(conds) > 0 {
		where = `WHERE ` + strings.Join(conds, ` AND `)
	}
	limit := p.add(f.Limit)
	rows, err := db.pool.Query(ctx, `SELECT `+eventColumns+` FROM audit_events `+where+` ORDER BY at DESC, id DESC LIMIT `+limit, p...)
	if err != nil {
		return nil, db.fail(ctx, "audit events", err)
	}
	defer rows.Close()
	events := []quire.Event{}
	for rows.Next() {
		e, err := scanEvent(rows.Scan)
		if err != nil {
			return nil, db.fail(ctx, "audit events", err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(ctx, "audit events", err)
	}
	return events, nil
}

// eventColumns are the columns scanEvent reads, in its order.
const eventColumns = `id::text, at, action, actor_id, actor_name, target_type, target_id, target_name, ip, request_id, details`

func scanEvent(scan func(dest ...any) error) (quire.Event, error) {
	var (
		e                             quire.Event
		actorID, targetType, targetID *string
		actorName, targetName         string
		details                       []byte
	)
	if err := scan(&e.ID, &e.At, &e.Action, &actorID, &actorName, &targetType, &targetID, &targetName,
		&e.IP, &e.RequestID, &details); err != nil {
		return e, err
	}
	e.At = e.At.UTC()
	if actorID != nil {
		e.Actor = &quire.EventActor{ID: *actorID, Name: actorName}
	}
	if targetID != nil {
		typ := ""
		if targetType != nil {
			typ = *targetType
		}
		e.Target = &quire.EventTarget{Type: typ, ID: *targetID, Name: targetName}
	}
	if err := json.Unmarshal(details, &e.Details); err != nil {
		return e, fmt.Errorf("audit event %s details: %w", e.ID, err)
	}
	return e, nil
}

// PruneAudit holds the prune's advisory lock for its transaction, taken
// without waiting: of several nodes whose prunes fall due together, one
// deletes the batch and the others return 0 at once.
func (db *DB) PruneAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, 0)`, lockAuditPrune).Scan(&mine); err != nil {
			return err
		}
		if !mine {
			return nil
		}
		tag, err := tx.Exec(ctx, `DELETE FROM audit_events WHERE id IN (
			SELECT id FROM audit_events WHERE at < $1 ORDER BY at, id LIMIT $2)`, micro(before), limit)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		return nil
	})
	if err != nil {
		return 0, db.fail(ctx, "prune audit", err)
	}
	return n, nil
}
