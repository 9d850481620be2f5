package quire

import (
	"context"
	"time"
)

// Actions of the audit log (product.md section 8). Every change of quire
// records one of these in the transaction that makes it.
const (
	ActionLogin                  = "auth.login"
	ActionLoginFailed            = "auth.login_failed"
	ActionLocked                 = "auth.locked"
	ActionLogout                 = "auth.logout"
	ActionPasswordChanged        = "auth.password_changed"
	ActionPasswordResetRequested = "auth.password_reset_requested"
	ActionPasswordReset          = "auth.password_reset"
	ActionPasswordSetup          = "auth.password_setup"
	ActionMFAEnabled             = "auth.mfa_enabled"
	ActionMFADisabled            = "auth.mfa_disabled"
	ActionMFAReset               = "auth.mfa_reset" // an administrator removed a user's second factor
	ActionSessionRevoked         = "session.revoked"
	ActionTokenCreated           = "token.created"
	ActionTokenRevoked           = "token.revoked"
	ActionUserCreated            = "user.created"
	ActionUserInvited            = "user.invited"
	ActionUserUpdated            = "user.updated"
	ActionUserDisabled           = "user.disabled"
	ActionUserEnabled            = "user.enabled"
	ActionUserUnlocked           = "user.unlocked"
	ActionRoleUpdated            = "role.updated"
	ActionDepartmentCreated      = "department.created"
	ActionDepartmentUpdated      = "department.updated"
	ActionDepartmentDeleted      = "department.deleted"
	ActionProjectCreated         = "project.created"
	ActionProjectUpdated         = "project.updated"
	ActionProjectDeleted         = "project.deleted"
	ActionProjectMemberAdded     = "project.member_added"
	ActionProjectMemberRemoved   = "project.member_removed"
	ActionDocumentCreated        = "document.created"
	ActionDocumentUpdated        = "document.updated"
	ActionDocumentDeleted        = "document.deleted"
	ActionDocumentRestored       = "document.restored"
	ActionDocumentPurged         = "document.purged"
	ActionVersionRestored        = "document.version_restored"
	ActionDocumentExported       = "document.exported" // an export: how many documents, never which nor what they say
	ActionFolderCreated          = "folder.created"
	ActionFolderUpdated          = "folder.updated"
	ActionFolderDeleted          = "folder.deleted"
	ActionWebhookCreated         = "webhook.created"
	ActionWebhookUpdated         = "webhook.updated"
	ActionWebhookDeleted         = "webhook.deleted"
	// Comments (product.md section 18): the target is the document, the
	// details its id and the comment's, never the body.
	ActionCommentCreated  = "comment.created"
	ActionCommentUpdated  = "comment.updated"
	ActionCommentDeleted  = "comment.deleted"
	ActionCommentResolved = "comment.resolved"
	ActionCommentReopened = "comment.reopened"
	ActionShareCreated    = "share.created" // never the token
	ActionShareRevoked    = "share.revoked"
	ActionSettingsUpdated = "settings.updated"
)

// Target types of events.
const (
	TargetUser       = "user"
	TargetRole       = "role"
	TargetDepartment = "department"
	TargetProject    = "project"
	TargetDocument   = "document"
	TargetFolder     = "folder"
	TargetSession    = "session"
	TargetToken      = "token"
	TargetWebhook    = "webhook"
	TargetShare      = "share"
	TargetSettings   = "settings"
)

// Reasons of auth.login_failed.
const (
	LoginFailedUnknown  = "unknown"
	LoginFailedPassword = "password"
	LoginFailedDisabled = "disabled"
	LoginFailedNotSetUp = "not_set_up"
	LoginFailedMFA      = "mfa"
)

// RequestInfo is where a change came from: the client address and the id of
// the request that caused it. Both are "" for the CLI and background jobs.
// UserAgent is kept with the sessions and API tokens a request creates (not
// in events).
type RequestInfo struct {
	IP        string
	RequestID string
	UserAgent string
}

// EventActor is who made a change, named as they were then.
type EventActor struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// EventTarget is what a change was made to, named as it was then.
type EventTarget struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Event is one entry of the audit log. Details never hold a password, a
// token, a mailed link or a document's content.
type Event struct {
	ID        string
	At        time.Time
	Action    string
	Actor     *EventActor  // nil: nobody signed in (a failed sign-in, the CLI)
	Target    *EventTarget // nil: no such record (a sign-in to an unknown email)
	IP        string
	RequestID string
	Details   map[string]any
	// Mentions are the people the change mentions anew (a new comment's
	// mentions, those a save adds), at most MaxMentions, and
	// MentionsIgnored the count of further ones: not part of the log,
	// they are queued with an event of NotifyActions for the
	// notifications worker.
	Mentions        []string
	MentionsIgnored int
}

// NewEvent returns the event of action made by actor (nil for none) at at,
// with the request's address and id.
func NewEvent(action string, at time.Time, actor *EventActor, req RequestInfo) *Event {
	return &Event{Action: action, At: at, Actor: actor, IP: req.IP, RequestID: req.RequestID, Details: map[string]any{}}
}

// On sets the event's target and returns the event.
func (e *Event) On(typ, id, name string) *Event {
	e.Target = &EventTarget{Type: typ, ID: id, Name: name}
	return e
}

// With sets one detail and returns the event.
func (e *Event) With(key string, value any) *Event {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// EventActorOf names a as an event's actor.
func EventActorOf(a Actor) *EventActor {
	return &EventActor{ID: a.User.ID, Name: a.User.Name}
}

// AuditFilter selects events, newest first. Action is an exact action or,
// ending in ".", a prefix; After, when set, is the (At, ID) of the last
// event of the previous page: only events strictly older are returned.
type AuditFilter struct {
	Action   string
	ActorID  string
	TargetID string
	Since    time.Time // inclusive; zero: no bound
	Until    time.Time // exclusive; zero: no bound
	Limit    int
	AfterAt  time.Time
	AfterID  string
}

// AuditLog keeps the audit log.
//
// Events of a change are written only with it, through Recording: the Store it
// returns writes the given events in the transaction of each write it makes,
// so that a change refused (an error, a conflict) writes none of them. An
// event whose Action is "" when the transaction ends is skipped: a change
// that finds inside its transaction that it changes nothing (a save that
// changes nothing) blanks it. Call one write method on the returned Store.
type AuditLog interface {
	// Recording returns the store that records evs with its write. The
	// store fills each event's ID (a UUID v7). The returned store shares
	// the database of its origin: closing it closes both.
	Recording(evs ...*Event) Store
	// RecordEvent writes ev on its own, for what is audited but changes
	// nothing (an export), filling its ID; its webhook deliveries are
	// queued with it, as with Recording.
	RecordEvent(ctx context.Context, ev *Event) error
	// AuditEvents returns up to f.Limit events matching f, newest first
	// (by At, then ID, both descending).
	AuditEvents(ctx context.Context, f AuditFilter) ([]Event, error)
	// PruneAudit deletes up to limit events older than before, oldest
	// first, and returns how many. One caller at a time prunes a database:
	// a call that finds another one pruning (another node) returns 0 at
	// once.
	PruneAudit(ctx context.Context, before time.Time, limit int) (int, error)
}

// Recorder is what a service takes to write audit events with its changes:
// Recording returns the store, of type S, whose write records evs in its
// own transaction (AuditLog.Recording). A service names S by the writes it
// records (mfa.Recorded, webhook.Recorded, ...) and its New is generic in
// S: Go has no covariant results, so an interface whose Recording returned
// the narrow type would not be met by a store whose Recording returns
// Store. In the server S is Store, inferred from the store given.
type Recorder[S any] interface {
	Recording(evs ...*Event) S
}

// CLIEvent returns the event of action made through the admin CLI at at:
// no actor, no request, "via": "cli" in its details.
func CLIEvent(action string, at time.Time) *Event {
	return NewEvent(action, at, nil, RequestInfo{}).With("via", "cli")
}

// NameCreated gives the events whose target has a type but no id the id
// of the record the write creates, when the store chooses it.
func NameCreated(evs []*Event, id string) {
	for _, e := range evs {
		if e != nil && e.Target != nil && e.Target.ID == "" {
			e.Target.ID = id
		}
	}
}

// Unchanged blanks evs: the write found inside its transaction that it
// changes nothing (a department that exists already), so they are not
// written.
func Unchanged(evs []*Event) {
	for _, e := range evs {
		if e != nil {
			e.Action = ""
		}
	}
}
