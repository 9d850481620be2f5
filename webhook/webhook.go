// Package webhook tells other systems what changed in quire (product.md
// section 16): administrators register receivers of audit events, every
// matching event is queued in the transaction that records it (the webhook
// outbox of quire.WebhookStore), and the Worker delivers the queue, signed,
// with retries and back-off, in order per document, at least once.
//
// A receiver is another machine that quire calls on behalf of whoever
// registered it, so its address is checked twice against the private
// networks quire can reach (guard.go): when it is registered, and at every
// connection, since DNS can change in between.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quire"
	"quire/auth"
)

// Limits of what an administrator registers.
const (
	MaxWebhooks  = quire.MaxWebhooks // checked by the store (quire.WebhookStore.CreateWebhook)
	MaxPatterns  = 50
	MaxURLLength = 2048
	MinSecret    = 16
	MaxSecret    = 256
	// Deliveries lists at most MaxLimit per page, DefaultLimit by default.
	DefaultLimit = 50
	MaxLimit     = 200
)

// Config is the service's part of the configuration.
type Config struct {
	// AllowPrivate lets receivers live on loopback, private and link-local
	// addresses (--webhooks-allow-private): for a receiver on the same
	// machine or network, and for tests.
	AllowPrivate bool
	// Resolver looks host names up (net.DefaultResolver when nil).
	Resolver Resolver
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Store is what the Service needs from persistence.
type Store interface {
	quire.WebhookStore
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.WebhookStore
}

// Service applies the rules of webhooks over a store.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	cfg       Config
}

// New returns the service over store; quire.Store is one, with S = quire.Store.
func New[S Recorded](store interface {
	Store
	quire.Recorder[S]
}, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Resolver == nil {
		cfg.Resolver = defaultResolver
	}
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	return &Service{store: store, recording: recording, cfg: cfg}
}

// Input is what an administrator sends to create or change a webhook; nil
// fields are left as they are (on create: Events and URL are required,
// Secret is generated, Active is true).
type Input struct {
	URL    *string
	Events *[]string
	Secret *string
	Active *bool
}

// List returns every webhook (their secrets blanked).
func (s *Service) List(ctx context.Context, a quire.Actor) ([]quire.Webhook, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, err
	}
	hooks, err := s.store.Webhooks(ctx)
	for i := range hooks {
		hooks[i].Secret = ""
	}
	return hooks, err
}

// Get returns one webhook (its secret blanked).
func (s *Service) Get(ctx context.Context, a quire.Actor, id string) (*quire.Webhook, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, err
	}
	w, err := s.store.WebhookByID(ctx, id)
	if err != nil {
		return nil, err
	}
	w.Secret = ""
	return w, nil
}

// Create registers a webhook and returns it with its secret, shown this
// once.
func (s *Service) Create(ctx context.Context, a quire.Actor, in Input) (*quire.Webhook, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, err
	}
	w := &quire.Webhook{Active: true}
	if in.URL == nil {
		in.URL = new(string)
	}
	if in.Events == nil {
		in.Events = &[]string{}
	}
	if in.Secret == nil {
		in.Secret = new(string)
		*in.Secret = newSecret()
	}
	if err := s.apply(ctx, w, in); err != nil {
		return nil, err
	}
	ev := s.event(a, quire.ActionWebhookCreated, "", w.URL).With("events", w.Events)
	if err := s.recording(ev).CreateWebhook(ctx, w, s.cfg.Now()); err != nil {
		return nil, err
	}
	return w, nil
}

// Update changes the fields of in that are set.
func (s *Service) Update(ctx context.Context, a quire.Actor, id string, in Input) (*quire.Webhook, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, err
	}
	w, err := s.store.WebhookByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.apply(ctx, w, in); err != nil {
		return nil, err
	}
	var changed []string
	for name, set := range map[string]bool{"url": in.URL != nil, "events": in.Events != nil, "secret": in.Secret != nil, "active": in.Active != nil} {
		if set {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	ev := s.event(a, quire.ActionWebhookUpdated, w.ID, w.URL).With("fields", changed)
	if err := s.recording(ev).UpdateWebhook(ctx, w, s.cfg.Now()); err != nil {
		return nil, err
	}
	w.Secret = ""
	return w, nil
}

// Delete removes a webhook and its delivery log.
func (s *Service) Delete(ctx context.Context, a quire.Actor, id string) error {
	if err := auth.RequireAdmin(a); err != nil {
		return err
	}
	w, err := s.store.WebhookByID(ctx, id)
	if err != nil {
		return err
	}
	return s.recording(s.event(a, quire.ActionWebhookDeleted, w.ID, w.URL)).DeleteWebhook(ctx, id)
}

// Deliveries returns one page of a webhook's delivery log, newest first,
// and the cursor of the next page ("" on the last).
func (s *Service) Deliveries(ctx context.Context, a quire.Actor, id, before, limit string) ([]quire.WebhookDelivery, string, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, "", err
	}
	n := DefaultLimit
	if limit != "" {
		v, err := strconv.Atoi(limit)
		if err != nil || v < 1 || v > MaxLimit {
			return nil, "", quire.Invalid(map[string]string{"limit": "must be a number from 1 to " + strconv.Itoa(MaxLimit)})
		}
		n = v
	}
	if before != "" {
		if v, err := strconv.ParseInt(before, 10, 64); err != nil || v <= 0 || strconv.FormatInt(v, 10) != before {
			return nil, "", quire.Invalid(map[string]string{"cursor": "is not a cursor of this list"})
		}
	}
	if _, err := s.store.WebhookByID(ctx, id); err != nil {
		return nil, "", err
	}
	ds, err := s.store.Deliveries(ctx, id, before, n+1)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(ds) > n {
		ds = ds[:n]
		next = ds[n-1].ID
	}
	return ds, next, nil
}

func (s *Service) event(a quire.Actor, action, id, url string) *quire.Event {
	return quire.NewEvent(action, s.cfg.Now(), quire.EventActorOf(a), a.Request).On(quire.TargetWebhook, id, redactURL(url))
}

// apply checks the set fields of in and writes them into w.
func (s *Service) apply(ctx context.Context, w *quire.Webhook, in Input) error {
	bad := map[string]string{}
	if in.URL != nil {
		u, msg := s.checkURL(ctx, *in.URL)
		if msg != "" {
			bad["url"] = msg
		}
		w.URL = u
	}
	if in.Events != nil {
		events, msg := checkPatterns(*in.Events)
		if msg != "" {
			bad["events"] = msg
		}
		w.Events = events
	}
	if in.Secret != nil {
		if n := utf8.RuneCountInString(*in.Secret); n < MinSecret || n > MaxSecret || !printable(*in.Secret) {
			bad["secret"] = "must be " + strconv.Itoa(MinSecret) + " to " + strconv.Itoa(MaxSecret) + " printable characters"
		}
		w.Secret = *in.Secret
	}
	if in.Active != nil {
		w.Active = *in.Active
	}
	if len(bad) > 0 {
		return quire.Invalid(bad)
	}
	return nil
}

// checkURL returns the URL as it will be called, or why it may not be.
func (s *Service) checkURL(ctx context.Context, raw string) (string, string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "is required"
	}
	if len(raw) > MaxURLLength {
		return "", "must be at most " + strconv.Itoa(MaxURLLength) + " bytes"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return "", "must be an absolute http or https URL"
	}
	if u.User != nil {
		return "", "must not carry a user name or password"
	}
	if u.Fragment != "" {
		return "", "must not have a fragment"
	}
	if !s.cfg.AllowPrivate {
		if msg := checkHost(ctx, s.cfg.Resolver, u); msg != "" {
			return "", msg
		}
	}
	return u.String(), ""
}

// checkPatterns returns the patterns without duplicates, or why they are
// refused.
func checkPatterns(ps []string) ([]string, string) {
	if len(ps) == 0 {
		return nil, "must name at least one event (an action, a prefix such as \"document.*\", or \"*\")"
	}
	if len(ps) > MaxPatterns {
		return nil, "must name at most " + strconv.Itoa(MaxPatterns) + " events"
	}
	out := make([]string, 0, len(ps))
	seen := map[string]bool{}
	for _, p := range ps {
		if !validPattern(p) {
			return nil, "\"" + truncate(p, 64) + "\" is not an action, a prefix such as \"document.*\", or \"*\""
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, ""
}

// validPattern: "*", "word.*", "word" or "word.word", words of lowercase
// letters, digits and underscores.
func validPattern(p string) bool {
	if p == "*" {
		return true
	}
	if len(p) > 64 {
		return false
	}
	head, tail, dotted := strings.Cut(p, ".")
	if !word(head) {
		return false
	}
	return !dotted || tail == "*" || word(tail)
}

func word(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for _, c := range s {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// redactURL is a webhook's URL as the audit log names it: scheme, host and
// path, without a query (which may carry a receiver's key).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.User = "", nil
	return u.String()
}

// newSecret returns a generated signing secret: 32 random bytes in hex.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}
