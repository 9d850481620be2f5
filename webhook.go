package quire

import (
	"context"
	"time"
)

// Webhook is a receiver of audit events (product.md section 16): every event
// whose action matches one of Events is delivered to URL, signed with
// Secret, through the webhook outbox.
type Webhook struct {
	ID     string
	URL    string
	Secret string   // the HMAC key; never shown after creation
	Events []string // exact actions ("document.updated"), prefixes ("document.*") or "*"
	Active bool
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// States of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed" // given up after the last attempt
)

// WebhookDelivery is one event to deliver to one webhook. It is queued in
// the transaction that records the event, so that an event committed is
// an event delivered, at least once, whatever restarts.
type WebhookDelivery struct {
	ID          string // a number, increasing in the order deliveries were queued
	WebhookID   string
	EventID     string
	Action      string
	State       string
	Attempts    int
	NextTryAt   time.Time // zero once delivered or given up
	CreatedAt   time.Time
	DeliveredAt time.Time
	LastStatus  int    // the HTTP status of the last attempt (0: no answer)
	LastError   string // why the last attempt failed
	// Event is the event itself, filled by ClaimDeliveries (nil when the
	// audit log no longer has it).
	Event *Event
}

// MaxWebhooks is how many webhooks may be registered.
const MaxWebhooks = 50

// WebhookStore keeps webhooks and their deliveries. Every event the audit
// log records (AuditLog.Recording) queues, in the same transaction, one
// delivery for each active webhook one of whose patterns matches its
// action.
type WebhookStore interface {
	// CreateWebhook inserts w, filling ID, CreatedAt and UpdatedAt, unless
	// MaxWebhooks are registered (VALIDATION_ERROR naming url), counted in
	// the insert's transaction, one create at a time across nodes.
	CreateWebhook(ctx context.Context, w *Webhook, now time.Time) error
	// Webhooks lists every webhook, oldest first.
	Webhooks(ctx context.Context) ([]Webhook, error)
	// WebhookByID returns one webhook (ENOTFOUND).
	WebhookByID(ctx context.Context, id string) (*Webhook, error)
	// UpdateWebhook replaces the URL, events, secret and active flag of
	// w.ID, setting UpdatedAt (ENOTFOUND).
	UpdateWebhook(ctx context.Context, w *Webhook, now time.Time) error
	// DeleteWebhook removes a webhook and its deliveries (ENOTFOUND).
	DeleteWebhook(ctx context.Context, id string) error
	// ClaimDeliveries takes up to n pending deliveries of webhook that are
	// due at now and have no earlier pending delivery for the same target
	// (so that the events of one document go out in order), oldest first;
	// it counts an attempt on each and hides them from other workers until
	// now+lease. Several workers never claim the same delivery.
	ClaimDeliveries(ctx context.Context, webhookID string, now time.Time, lease time.Duration, n int) ([]WebhookDelivery, error)
	// DeliverySucceeded marks a claimed delivery delivered at at with the
	// receiver's status. ENOTFOUND for an unknown one.
	DeliverySucceeded(ctx context.Context, id string, at time.Time, status int) error
	// DeliveryFailed records a failed attempt (status 0 when the receiver
	// did not answer) and when to try again; a zero next gives it up.
	DeliveryFailed(ctx context.Context, id string, status int, reason string, next time.Time) error
	// Deliveries lists up to limit deliveries of a webhook, newest first,
	// starting below the delivery before ("" for the newest).
	Deliveries(ctx context.Context, webhookID, before string, limit int) ([]WebhookDelivery, error)
	// PruneDeliveries deletes up to limit delivered or given-up deliveries
	// created before before, and returns how many.
	PruneDeliveries(ctx context.Context, before time.Time, limit int) (int, error)
}

// WebhookPattern is how a store keeps one of a webhook's event patterns:
// "*" matches every action (prefix ""), "document.*" every action that
// starts with "document." and anything else exactly itself.
func WebhookPattern(p string) (prefix string, exact bool) {
	switch {
	case p == "*":
		return "", false
	case len(p) >= 2 && p[len(p)-2:] == ".*":
		return p[:len(p)-1], false
	default:
		return p, true
	}
}
