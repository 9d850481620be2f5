package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"quire"
)

var _ quire.AuditLog = (*DB)(nil)

// Recording returns a DB sharing db's database whose write transactions
// insert evs after their change, inside the same transaction (commit.go's
// tx): a change refused writes none of them.
func (db *DB) Recording(evs ...*quire.Event) quire.Store {
	return withStore(&DB{shared: db.shared, events: append(db.events[:len(db.events):len(db.events)], evs...)})
}

// RecordEvent writes ev alone, in a transaction of the committer.
func (db *DB) RecordEvent(ctx context.Context, ev *quire.Event) error {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return insertEvents(ctx, cachedQuerier{c: db.writes, tx: tx}, []*quire.Event{ev})
	})
	if err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	return nil
}

// exec runs one write statement on the writing connection, or, when db
// records events, in a transaction of the committer with them.
func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if len(db.events) == 0 {
		return db.write.ExecContext(ctx, query, args...)
	}
	var res sql.Result
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// execer runs a statement: a transaction, or a cachedQuerier of one, which
// runs it as a prepared statement of the writing connection.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertEvents writes the events whose Action is set, filling their IDs.
// The transactions of the committer pass a cachedQuerier: every saved
// document writes an event, and preparing its two statements each time
// (the INSERT and the webhook deliveries' INSERT ... SELECT) cost 12% of
// the CPU of concurrent updates.
func insertEvents(ctx context.Context, tx execer, evs []*quire.Event) error {
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
		var actorID, targetType, targetID sql.NullString
		var actorName, targetName string
		if e.Actor != nil {
			actorID, actorName = sql.NullString{String: e.Actor.ID, Valid: true}, e.Actor.Name
		}
		if e.Target != nil {
			targetType = sql.NullString{String: e.Target.Type, Valid: true}
			targetID, targetName = sql.NullString{String: e.Target.ID, Valid: true}, e.Target.Name
		}
		e.ID = newID()
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_events
			(id, at, action, actor_id, actor_name, target_type, target_id, target_name, ip, request_id, details)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, toMicros(e.At), e.Action, actorID, actorName, targetType, targetID, targetName,
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
	var (
		conds []string
		args  []any
	)
	switch {
	case strings.HasSuffix(f.Action, "."):
		// A range on the indexed column: every action that starts with the
		// prefix sorts between it and the prefix with "." raised to "/".
		conds = append(conds, `action >= ? AND action < ?`)
		args = append(args, f.Action, strings.TrimSuffix(f.Action, ".")+"/")
	case f.Action != "":
		conds = append(conds, `action = ?`)
		args = append(args, f.Action)
	}
	if f.ActorID != "" {
		conds = append(conds, `actor_id = ?`)
		args = append(args, f.ActorID)
	}
	if f.TargetID != "" {
		conds = append(conds, `target_id = ?`)
		args = append(args, f.TargetID)
	}
	if !f.Since.IsZero() {
		conds = append(conds, `at >= ?`)
		args = append(args, toMicros(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, `at < ?`)
		args = append(args, toMicros(f.Until))
	}
	if f.AfterID != "" {
		conds = append(conds, `(at, id) < (?, ?)`)
		args = append(args, toMicros(f.AfterAt), f.AfterID)
	}
	where := ""
	if len(conds) > 0 {
		where = `WHERE ` + strings.Join(conds, ` AND `)
	}
	args = append(args, f.Limit)
	rows, err := db.read.QueryContext(ctx, `SELECT `+eventColumns+` FROM audit_events `+where+` ORDER BY at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("audit events: %w", err)
	}
	defer rows.Close()
	events := []quire.Event{}
	for rows.Next() {
		e, err := scanEvent(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("audit events: %w", err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit events: %w", err)
	}
	return events, nil
}

// eventColumns are the columns scanEvent reads, in its order.
const eventColumns = `id, at, action, actor_id, actor_name, target_type, target_id, target_name, ip, request_id, details`

func scanEvent(scan func(dest ...any) error) (quire.Event, error) {
	var (
		e                              quire.Event
		at                             int64
		actorID, targetType, targetID  sql.NullString
		actorName, targetName, details string
	)
	if err := scan(&e.ID, &at, &e.Action, &actorID, &actorName, &targetType, &targetID, &targetName,
		&e.IP, &e.RequestID, &details); err != nil {
		return e, err
	}
	e.At = fromMicros(at)
	if actorID.Valid {
		e.Actor = &quire.EventActor{ID: actorID.String, Name: actorName}
	}
	if targetID.Valid {
		e.Target = &quire.EventTarget{Type: targetType.String, ID: targetID.String, Name: targetName}
	}
	if err := json.Unmarshal([]byte(details), &e.Details); err != nil {
		return e, fmt.Errorf("audit event %s details: %w", e.ID, err)
	}
	return e, nil
}

// PruneAudit runs on the one writing connection, so a single database never
// has two prunes at once.
func (db *DB) PruneAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_events WHERE id IN (
			SELECT id FROM audit_events WHERE at < ? ORDER BY at, id LIMIT ?)`, toMicros(before), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return int(n), nil
}
