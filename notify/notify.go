// Package notify holds the rules of mentions, watching and notifications
// (product.md section 19): who may watch what, who may be mentioned, what
// a person's notifications are and how they are marked read, and the
// worker that fans the queued events out into notifications after the
// change that queued them has committed.
//
// Visibility is checked where a notification is used, not only where it
// was made: the store lists, counts and marks only notifications about
// documents the reader sees now.
package notify

import (
	"context"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"quire"
	"quire/documents"
)

// Store is what the Service reads and writes.
type Store interface {
	quire.NotificationStore
	Document(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error)
	Folder(ctx context.Context, id string) (*quire.Folder, error)
}

// Config configures a Service.
type Config struct {
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time
	// Key signs the one-click unsubscribe links of the mails (derived from
	// the secret key, so that every node shares it); without one no link
	// is accepted.
	Key []byte
	// PublicURL is where the mails link to (the place of a notification,
	// the unsubscribe address).
	PublicURL string
}

// Service applies the rules of notifications over a store.
type Service struct {
	store     Store
	now       func() time.Time
	key       []byte
	publicURL string
}

// New returns the Service over store.
func New(store Store, cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now, key: cfg.Key, publicURL: strings.TrimRight(cfg.PublicURL, "/")}
}

// Limits of the lists.
const (
	DefaultLimit    = 20
	MaxLimit        = 100
	MaxMentionable  = 10  // people the mention picker offers
	MaxMentionQuery = 100 // characters of the picker's query
)

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

func documentNotFound() error { return quire.Errorf(quire.ENOTFOUND, "Document not found") }
func folderNotFound() error   { return quire.Errorf(quire.ENOTFOUND, "Folder not found") }

var errReadOnlyToken = quire.Errorf(quire.EFORBIDDEN, "This API token may only read")

// canRead refuses a role without view on documents: such a caller has no
// document to hear about.
func canRead(a quire.Actor) error { return documents.Require(a, quire.LevelView) }

// canChange refuses, beyond canRead, a personal API token of scope read:
// watching, marking read and the settings are changes.
func canChange(a quire.Actor) error {
	if err := canRead(a); err != nil {
		return err
	}
	if a.ViaToken() && a.Scope != quire.ScopeWrite {
		return errReadOnlyToken
	}
	return nil
}

// document reads document id as the actor sees it: NOT_FOUND otherwise.
func (s *Service) document(ctx context.Context, a quire.Actor, id string) (*quire.Document, error) {
	if !quire.ValidID(id) {
		return nil, documentNotFound()
	}
	d, err := s.store.Document(ctx, documents.VisibilityOf(a), id)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, documentNotFound()
	}
	return d, err
}

// Watch makes the actor watch (on) or stop watching the document id, or
// the folder id (folder true), which covers every document in it and in
// its subfolders, now and later. Both are idempotent. A document the actor
// cannot see, and an unknown folder, are NOT_FOUND.
func (s *Service) Watch(ctx context.Context, a quire.Actor, folder bool, id string, on bool) error {
	if err := canChange(a); err != nil {
		return err
	}
	if folder {
		if !quire.ValidID(id) {
			return folderNotFound()
		}
		if _, err := s.store.Folder(ctx, id); err != nil {
			if quire.ErrorCode(err) == quire.ENOTFOUND {
				return folderNotFound()
			}
			return err
		}
	} else if _, err := s.document(ctx, a, id); err != nil {
		return err
	}
	err := s.store.Watch(ctx, a.User.ID, folder, id, on, s.clock())
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		if folder {
			return folderNotFound()
		}
		return documentNotFound()
	}
	return err
}

// Watching returns what the actor watches: the documents it sees, and the
// folders.
func (s *Service) Watching(ctx context.Context, a quire.Actor) (*quire.Watched, error) {
	if err := canRead(a); err != nil {
		return nil, err
	}
	return s.store.Watching(ctx, documents.VisibilityOf(a), a.User.ID)
}

// ListParams selects a page of the actor's notifications.
type ListParams struct {
	UnreadOnly bool
	Limit      int    // 0: DefaultLimit; 1 to MaxLimit
	Before     string // the id of the last notification of the previous page
}

// List returns a page of the actor's notifications, newest first, and how
// many are unread; both only about documents it sees now.
func (s *Service) List(ctx context.Context, a quire.Actor, p ListParams) ([]quire.Notification, int, error) {
	if err := canRead(a); err != nil {
		return nil, 0, err
	}
	if p.Limit == 0 {
		p.Limit = DefaultLimit
	}
	if p.Limit < 1 || p.Limit > MaxLimit {
		return nil, 0, quire.Invalid(map[string]string{"limit": "must be an integer from 1 to 100"})
	}
	if p.Before != "" && !quire.ValidID(p.Before) {
		return nil, 0, quire.Invalid(map[string]string{"before": "must be the id of one of your notifications"})
	}
	return s.store.Notifications(ctx, quire.NotificationFilter{Visibility: documents.VisibilityOf(a), UserID: a.User.ID,
		UnreadOnly: p.UnreadOnly, Before: p.Before, Limit: p.Limit})
}

// MarkRead marks the actor's notifications ids read, or all of them, and
// returns how many stay unread. Exactly one of ids (1 to
// quire.MaxNotificationIDs of them) and all is given; an id that is not
// one of the actor's notifications (about a document it sees) refuses the
// whole request, and nothing is marked.
func (s *Service) MarkRead(ctx context.Context, a quire.Actor, ids []string, all bool) (int, error) {
	if err := canChange(a); err != nil {
		return 0, err
	}
	switch {
	case all && len(ids) > 0:
		return 0, quire.Invalid(map[string]string{"ids": "give either ids or all, not both"})
	case !all && len(ids) == 0:
		return 0, quire.Invalid(map[string]string{"ids": "is required (or all: true)"})
	case len(ids) > quire.MaxNotificationIDs:
		return 0, quire.Invalid(map[string]string{"ids": "must hold at most 100 ids"})
	}
	for _, id := range ids {
		if !quire.ValidID(id) {
			return 0, quire.Invalid(map[string]string{"ids": "must each be the id of one of your notifications"})
		}
	}
	return s.store.MarkRead(ctx, documents.VisibilityOf(a), a.User.ID, ids, all, s.clock())
}

// Mentionable returns up to MaxMentionable active people who can see the
// document id whose name has a word starting with q (case-insensitive),
// by name; never their emails. A document the actor cannot see is
// NOT_FOUND.
func (s *Service) Mentionable(ctx context.Context, a quire.Actor, id, q string) ([]quire.Named, error) {
	if err := canRead(a); err != nil {
		return nil, err
	}
	if !utf8.ValidString(q) || utf8.RuneCountInString(q) > MaxMentionQuery {
		return nil, quire.Invalid(map[string]string{"q": "must be text of at most 100 characters"})
	}
	d, err := s.document(ctx, a, id)
	if err != nil {
		return nil, err
	}
	return s.store.Mentionable(ctx, d.ID, strings.TrimPrefix(strings.TrimSpace(q), "@"), MaxMentionable)
}

// Email returns the actor's mail setting.
func (s *Service) Email(ctx context.Context, a quire.Actor) (string, error) {
	return s.store.NotificationEmail(ctx, a.User.ID)
}

// SetEmail sets the actor's mail setting: instant, digest or off.
func (s *Service) SetEmail(ctx context.Context, a quire.Actor, email string) error {
	if a.ViaToken() && a.Scope != quire.ScopeWrite {
		return errReadOnlyToken
	}
	switch email {
	case quire.NotifyEmailInstant, quire.NotifyEmailDigest, quire.NotifyEmailOff:
	default:
		return quire.Invalid(map[string]string{"email": "must be instant, digest or off"})
	}
	return s.store.SetNotificationEmail(ctx, a.User.ID, email, s.clock())
}

// FanOut fans out up to n queued events now and returns how many it took;
// mentions beyond quire.MaxMentions in a comment or a save are ignored,
// and logged here.
func (s *Service) FanOut(ctx context.Context, n int, logger *slog.Logger) (int, error) {
	events, ignored, err := s.store.FanOut(ctx, s.clock(), n)
	if ignored > 0 && logger != nil {
		logger.Info("notifications: mentions beyond the limit ignored", "ignored", ignored, "limit", quire.MaxMentions)
	}
	return events, err
}

// fanOutBatch is how many events one transaction of the worker fans out.
const fanOutBatch = 20

// Run fans out the queued events until ctx ends: at once while there is
// work, then every poll; and queues the mails that are due every 15
// seconds. Every node runs it; the store's claims give each event and
// each mail to one of them.
func (s *Service) Run(ctx context.Context, poll time.Duration, logger *slog.Logger) error {
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	var mailed time.Time
	for {
		n, err := s.FanOut(ctx, fanOutBatch, logger)
		if err != nil && ctx.Err() == nil {
			logger.Error("notifications: fan-out failed", "err", err)
		}
		if n == fanOutBatch && err == nil {
			continue
		}
		if now := s.now(); now.Sub(mailed) >= mailEvery {
			mailed = now
			if _, err := s.Mail(ctx); err != nil && ctx.Err() == nil {
				logger.Error("notifications: mail failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
