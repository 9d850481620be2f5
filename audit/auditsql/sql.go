// Package auditsql is the audit log's store, written once for SQLite and
// PostgreSQL on a sqlstore.Engine: the reads, the prune and RecordEvent.
// Package audit holds the rules; the engines embed this through stores.Set.
package auditsql

import (
	"context"
	"strings"
	"time"

	"quire"
	"quire/sqlstore"
)

// RecordEvent writes ev alone, in a write transaction.
func (s *AuditSQL) RecordEvent(ctx context.Context, ev *quire.Event) error {
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		return sqlstore.InsertEvents(ctx, q, s.D, []*quire.Event{ev})
	})
	return s.E.Fail(ctx, "record event", err)
}

// AuditEvents walks the index of its filter (action, actor, target, or
// time alone) in (at, id) order from the cursor and stops after f.Limit
// rows.
func (s *AuditSQL) AuditEvents(ctx context.Context, f quire.AuditFilter) ([]quire.Event, error) {
	if sqlstore.HasNUL(f.Action, f.ActorID, f.TargetID, f.AfterID) {
		return []quire.Event{}, nil
	}
	var (
		conds []string
		p     sqlstore.Params
	)
	switch {
	case strings.HasSuffix(f.Action, "."):
		// A range on the indexed column: every action that starts with the
		// prefix sorts between it and the prefix with "." raised to "/"
		// (byte order: SQLite's BINARY, PostgreSQL's column collation "C").
		conds = append(conds, `action >= `+p.Add(f.Action)+` AND action < `+p.Add(strings.TrimSuffix(f.Action, ".")+"/"))
	case f.Action != "":
		conds = append(conds, `action = `+p.Add(f.Action))
	}
	if f.ActorID != "" {
		conds = append(conds, `actor_id = `+p.Add(f.ActorID))
	}
	if f.TargetID != "" {
		conds = append(conds, `target_id = `+p.Add(f.TargetID))
	}
	if !f.Since.IsZero() {
		conds = append(conds, `at >= `+p.Add(s.D.Time(f.Since)))
	}
	if !f.Until.IsZero() {
		conds = append(conds, `at < `+p.Add(s.D.Time(f.Until)))
	}
	if f.AfterID != "" {
		conds = append(conds, `(at, id) < (`+p.Add(s.D.Time(f.AfterAt))+`, `+p.Add(f.AfterID)+`)`)
	}
	where := ""
	if len(conds) > 0 {
		where = `WHERE ` + strings.Join(conds, ` AND `)
	}
	return sqlstore.List(ctx, s.E, "audit events", sqlstore.ScanEvent,
		`SELECT `+sqlstore.EventColumns+` FROM audit_events `+where+` ORDER BY at DESC, id DESC LIMIT `+p.Add(f.Limit), p...)
}

// PruneAudit deletes the oldest events before before, at most limit.
func (s *AuditSQL) PruneAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	return sqlstore.Prune(ctx, s.E, "prune audit", sqlstore.LockAuditPrune, limit, `DELETE FROM audit_events WHERE id IN (
		SELECT id FROM audit_events WHERE at < ? ORDER BY at, id LIMIT ?)`, s.D.Time(before), limit)
}

// AuditSQL is quire.AuditLog's reads, prune and lone event written once
// for both engines, which embed it. The events of a change are written in
// the change's transaction by the engines (sqlstore.InsertEvents).
type AuditSQL struct{ sqlstore.Base }

// NewSQL returns the audit log on e.
func NewSQL(e sqlstore.Engine) *AuditSQL { return &AuditSQL{sqlstore.NewBase(e)} }
