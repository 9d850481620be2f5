// Package audit reads the audit log: who may read it, its filters, its
// cursor, and its pruning. Events are written by the services that make
// the changes (auth, docs, the CLI), each in the transaction of its change,
// through quire.AuditLog.Recording; nothing here writes one.
package audit

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"quire"
)

// Store is what the Service needs from persistence: it reads and prunes
// the log, and writes no event.
type Store interface {
	AuditEvents(ctx context.Context, f quire.AuditFilter) ([]quire.Event, error)
	PruneAudit(ctx context.Context, before time.Time, limit int) (int, error)
}

// Service applies the audit log's rules over a Store.
type Service struct {
	store Store
	now   func() time.Time
}

// New returns a Service over store; now is its clock (nil: time.Now).
func New(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

// Limits of a page.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// Params are a list's filters as the caller gave them (query parameters or
// form fields), all optional.
type Params struct {
	Action   string // exact, or a prefix ending in "." ("auth.")
	ActorID  string
	TargetID string
	Since    string // RFC 3339, inclusive
	Until    string // RFC 3339, exclusive
	Limit    string // 1..MaxLimit, DefaultLimit when ""
	Cursor   string // nextCursor of the previous page
}

// Page is one page of events, newest first. NextCursor is "" on the last.
type Page struct {
	Events     []quire.Event
	NextCursor string
}

// maxFilter bounds the text filters: actions and ids are short.
const maxFilter = 100

// List returns one page of the events that match p, to administrators
// (FORBIDDEN for anyone else). Each filter that is not understood is a
// VALIDATION_ERROR naming it. Following NextCursor never repeats an event
// nor skips one that was written before the first page was read: pages are
// a keyset walk of (at, id), newest first, and what is written meanwhile is
// newer than any cursor.
func (s *Service) List(ctx context.Context, a quire.Actor, p Params) (*Page, error) {
	if !a.User.Role.Admin {
		return nil, quire.Errorf(quire.EFORBIDDEN, "Only administrators may read the audit log")
	}
	f, err := parse(p)
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	f.Limit++ // one more tells whether there is a next page
	events, err := s.store.AuditEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	page := &Page{Events: events}
	if len(events) > limit {
		page.Events = events[:limit]
		last := page.Events[limit-1]
		page.NextCursor = encodeCursor(last.At, last.ID)
	}
	return page, nil
}

// parse checks p and returns the store's filter.
func parse(p Params) (quire.AuditFilter, error) {
	f := quire.AuditFilter{Limit: DefaultLimit}
	fields := map[string]string{}
	if p.Action != "" && !validAction(p.Action) {
		fields["action"] = "must be an action (auth.login) or a prefix ending in a dot (auth.)"
	}
	f.Action = p.Action
	for name, v := range map[string]*string{"actorId": &p.ActorID, "targetId": &p.TargetID} {
		if len(*v) > maxFilter || strings.ContainsFunc(*v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			fields[name] = "must be an id"
		}
	}
	f.ActorID, f.TargetID = p.ActorID, p.TargetID
	for name, v := range map[string]struct {
		in  string
		out *time.Time
	}{"since": {p.Since, &f.Since}, "until": {p.Until, &f.Until}} {
		if v.in == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v.in)
		if err != nil {
			fields[name] = "must be a time in RFC 3339 (2026-11-26T10:00:00Z)"
			continue
		}
		*v.out = t.UTC()
	}
	if p.Limit != "" {
		n, err := strconv.Atoi(p.Limit)
		if err != nil || n < 1 || n > MaxLimit {
			fields["limit"] = fmt.Sprintf("must be a whole number from 1 to %d", MaxLimit)
		}
		f.Limit = n
	}
	if p.Cursor != "" {
		at, id, ok := decodeCursor(p.Cursor)
		if !ok {
			fields["cursor"] = "is not a cursor this list gave"
		}
		f.AfterAt, f.AfterID = at, id
	}
	if len(fields) > 0 {
		return quire.AuditFilter{}, quire.Invalid(fields)
	}
	return f, nil
}

// validAction accepts what actions are made of: lower-case words joined by
// dots, with an optional final dot for a prefix.
func validAction(s string) bool {
	if len(s) > maxFilter || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || c == '.') || (c == '.' && i > 0 && s[i-1] == '.') {
			return false
		}
	}
	return true
}

// The cursor is the (at, id) of the last event of a page, opaque to the
// caller: base64url of "<unix microseconds>.<uuid>".
func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixMicro(), 10) + "." + id))
}

func decodeCursor(c string) (time.Time, string, bool) {
	if len(c) > 100 {
		return time.Time{}, "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", false
	}
	us, id, ok := strings.Cut(string(b), ".")
	if !ok {
		return time.Time{}, "", false
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return time.Time{}, "", false
	}
	return time.UnixMicro(n).UTC(), id, true
}

// documentChanges are the actions of the events that change a document
// and name it as their target (a purge leaves no page to show it on; an
// export names no document).
var documentChanges = []string{quire.ActionDocumentCreated, quire.ActionDocumentUpdated, quire.ActionDocumentDeleted,
	quire.ActionDocumentRestored, quire.ActionVersionRestored}

// LastChange returns the latest event of the document d that changed it
// (documentChanges), which the caller has read (and so may see), or nil
// when the log holds none (never recorded, or pruned): the latest of each
// action, one step of an index each (audit_events_target_action), whatever
// else the log holds of the document since (its comments' events).
func (s *Service) LastChange(ctx context.Context, d *quire.Document) (*quire.Event, error) {
	var last *quire.Event
	for _, action := range documentChanges {
		events, err := s.store.AuditEvents(ctx, quire.AuditFilter{TargetID: d.ID, Action: action, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(events) > 0 {
			e := &events[0]
			if last == nil || e.At.After(last.At) || e.At.Equal(last.At) && e.ID > last.ID {
				last = e
			}
		}
	}
	return last, nil
}

// PruneBatch is how many events one prune transaction deletes.
const PruneBatch = 1000

// Prune deletes the events older than retention, in batches of PruneBatch,
// and returns how many. retention 0 (or less) keeps them all. Another node
// pruning at the same time makes it stop early, leaving the rest to it.
func (s *Service) Prune(ctx context.Context, retention time.Duration) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	before := s.now().UTC().Add(-retention)
	total := 0
	for {
		n, err := s.store.PruneAudit(ctx, before, PruneBatch)
		total += n
		if err != nil || n < PruneBatch {
			return total, err
		}
	}
}

// EventJSON is an event as the API and webhooks show it (EVENT in the
// OpenAPI document).
type EventJSON struct {
	ID        string             `json:"id"`
	At        string             `json:"at"`
	Action    string             `json:"action"`
	Actor     *quire.EventActor  `json:"actor"`
	Target    *quire.EventTarget `json:"target"`
	IP        string             `json:"ip"`
	RequestID string             `json:"requestId"`
	Details   map[string]any     `json:"details"`
}

// JSON returns e as the API and webhooks show it: times in RFC 3339 UTC
// with six fractional digits, details never null.
func JSON(e *quire.Event) EventJSON {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return EventJSON{ID: e.ID, At: e.At.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z07:00"),
		Action: e.Action, Actor: e.Actor, Target: e.Target, IP: e.IP, RequestID: e.RequestID, Details: details}
}
