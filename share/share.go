// Package share holds the rules of share links (product.md section 21):
// who may create, list and revoke a read-only link to a document for
// people without an account, the administrators' list and switch, and the
// checks on every use of a link (open.go), the per-address limit of the
// public pages (limit.go) and the batched count of views (views.go).
//
// A token is 24 random bytes (192 bits) in base64url, 32 characters. The
// database keeps its SHA-256, which finds the share, and the token sealed
// with the server's secret key (package secretkey) bound to the share's
// id, so that whoever may manage the share can copy its link again. The
// token is never logged, never in a metric's labels and never in the audit
// log.
package share

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"

	"github.com/google/uuid"

	"quire"
	"quire/auth"
	"quire/documents"
	"quire/secretkey"
)

// sealPurpose names the key that seals tokens (secretkey.Key.Derive), and
// answerPurpose the one that seals the kept answer of a share's creation
// under an Idempotency-Key (its URL holds the token).
const (
	sealPurpose   = "share token"
	answerPurpose = "share answer"
)

// SealAnswer seals body, the answer of a share's creation kept for a
// repeat of its Idempotency-Key, bound to aad: the database keeps no token
// in the clear.
func (s *Service) SealAnswer(body, aad []byte) []byte {
	return s.cfg.Key.Seal(answerPurpose, body, aad)
}

// OpenAnswer opens what SealAnswer sealed with the same aad.
func (s *Service) OpenAnswer(sealed, aad []byte) ([]byte, error) {
	return s.cfg.Key.Open(answerPurpose, sealed, aad)
}

// TokenBytes is the randomness of a token; TokenLength its length in
// base64url.
const (
	TokenBytes  = 24
	TokenLength = 32
)

// The administrators' list: at most MaxLimit a page, DefaultLimit by
// default.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Config is the service's part of the configuration.
type Config struct {
	// Key seals the tokens (required: quire serve's, secretkey.Load).
	Key *secretkey.Key
	// PublicURL is the base of a share's URL (--public-url).
	PublicURL string
	// PerMinute is how many requests of share pages one client address
	// may make in a minute on this node (DefaultPerMinute when 0).
	PerMinute int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// DefaultPerMinute is the limit of share requests per address and minute.
const DefaultPerMinute = 120

// Store is what the Service needs from persistence.
type Store interface {
	quire.ShareStore
	quire.Settings // the switch (quire.SettingSharing) and the secret key
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.ShareStore
	quire.Settings
}

// Service applies the rules of share links over a store.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	docs      *documents.Service
	cfg       Config
	limit     *limiter
	views     *viewCounter
}

// New returns the service over store, reading documents through docs;
// quire.Store is one, with S = quire.Store. A nil cfg.Key panics.
func New[S Recorded](store interface {
	Store
	quire.Recorder[S]
}, docs *documents.Service, cfg Config) *Service {
	if cfg.Key == nil {
		panic("share.New: Config.Key is nil")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PerMinute <= 0 {
		cfg.PerMinute = DefaultPerMinute
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	return &Service{store: store, recording: recording, docs: docs, cfg: cfg,
		limit: newLimiter(cfg.PerMinute, time.Minute, maxAddresses), views: &viewCounter{counts: map[string]quire.ShareViews{}}}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// View is a share as those who may manage it see it: with its URL, ""
// when the token cannot be opened (the secret key changed).
type View struct {
	quire.Share
	URL string
}

var (
	errNotFound = quire.Errorf(quire.ENOTFOUND, "Share not found")
	errDisabled = quire.Errorf(quire.ESHARINGDISABLED, "Sharing is switched off by an administrator")
)

// Create shares a document the actor can see and may write, until expires
// (zero: until revoked). NOT_FOUND for a document the actor cannot see (or
// in the trash), FORBIDDEN without write, SHARING_DISABLED while sharing
// is off, VALIDATION_ERROR on expires_at for an expiry not in the future.
func (s *Service) Create(ctx context.Context, a quire.Actor, documentID string, expires time.Time) (*View, error) {
	doc, err := s.docs.Get(ctx, a, documentID)
	if err != nil {
		return nil, err
	}
	if err := documents.Require(a, quire.LevelWrite); err != nil {
		return nil, err
	}
	on, err := s.Sharing(ctx)
	if err != nil {
		return nil, err
	}
	if !on {
		return nil, errDisabled
	}
	now := s.now()
	if !expires.IsZero() && !expires.After(now) {
		return nil, quire.Invalid(map[string]string{"expires_at": "must be in the future"})
	}
	key := s.cfg.Key
	token := newToken()
	sum := sha256.Sum256([]byte(token))
	id := uuid.Must(uuid.NewV7()).String()
	sh := &quire.Share{ID: id, DocumentID: doc.ID, CreatedByID: a.User.ID, TokenHash: sum[:],
		TokenSealed: key.Seal(sealPurpose, []byte(token), []byte(id)), ExpiresAt: expires}
	ev := quire.NewEvent(quire.ActionShareCreated, now, quire.EventActorOf(a), a.Request).
		On(quire.TargetShare, id, doc.Title).With("documentId", doc.ID)
	if !expires.IsZero() {
		ev.With("expiresAt", expires.UTC().Format(time.RFC3339Nano))
	}
	if err := s.recording(ev).CreateShare(ctx, documents.VisibilityOf(a), sh, now); err != nil {
		return nil, err
	}
	sh.DocumentTitle, sh.OwnerID, sh.CreatedByName = doc.Title, doc.OwnerID, a.User.Name
	return &View{Share: *sh, URL: s.url(token)}, nil
}

// List returns the shares of a document the actor can see that the actor
// may manage: every one for its owner and administrators, the actor's own
// for anyone else. NOT_FOUND for a document the actor cannot see.
func (s *Service) List(ctx context.Context, a quire.Actor, documentID string) ([]View, error) {
	doc, err := s.docs.Get(ctx, a, documentID)
	if err != nil {
		return nil, err
	}
	by := a.User.ID
	if a.User.Role.Admin || doc.OwnerID == a.User.ID {
		by = ""
	}
	shares, err := s.store.DocumentShares(ctx, doc.ID, by)
	if err != nil {
		return nil, err
	}
	return s.viewsOf(shares), nil
}

// Revoke ends a share at once: its creator, its document's owner or an
// administrator may. NOT_FOUND for anyone else, as for an unknown share.
func (s *Service) Revoke(ctx context.Context, a quire.Actor, id string) error {
	if a.User.ID == "" || !documents.ValidID(id) {
		return errNotFound
	}
	sh, err := s.store.ShareByID(ctx, id)
	if err != nil {
		return errNotFound
	}
	if !mayManage(a, sh) {
		return errNotFound
	}
	ev := quire.NewEvent(quire.ActionShareRevoked, s.now(), quire.EventActorOf(a), a.Request).
		On(quire.TargetShare, sh.ID, sh.DocumentTitle).With("documentId", sh.DocumentID)
	if err := s.recording(ev).DeleteShare(ctx, id); err != nil {
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return errNotFound
		}
		return err
	}
	return nil
}

func mayManage(a quire.Actor, sh *quire.Share) bool {
	return a.User.Role.Admin || a.User.ID == sh.CreatedByID || a.User.ID == sh.OwnerID
}

// Page is one page of the administrators' list.
type Page struct {
	Shares             []View
	Page, Limit, Total int
	TotalPages         int
	HasMore            bool
}

// All returns one page of every share, newest first: administrators only.
func (s *Service) All(ctx context.Context, a quire.Actor, page, limit int) (*Page, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, err
	}
	shares, total, err := s.store.Shares(ctx, documents.Offset(page, limit), limit)
	if err != nil {
		return nil, err
	}
	views := s.viewsOf(shares)
	pages := (total + limit - 1) / limit
	return &Page{Shares: views, Page: page, Limit: limit, Total: total, TotalPages: pages, HasMore: page < pages}, nil
}

// Sharing reports whether sharing is on (it is unless an administrator
// switched it off).
func (s *Service) Sharing(ctx context.Context) (bool, error) {
	v, err := s.store.Setting(ctx, quire.SettingSharing)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return v != "off", nil
}

// Settings are the administrators' settings.
type Settings struct {
	Sharing bool
}

// Settings returns the settings: administrators only.
func (s *Service) Settings(ctx context.Context, a quire.Actor) (*Settings, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, err
	}
	on, err := s.Sharing(ctx)
	if err != nil {
		return nil, err
	}
	return &Settings{Sharing: on}, nil
}

// SetSharing switches sharing on or off for every share at once:
// administrators only; recorded as settings.updated.
func (s *Service) SetSharing(ctx context.Context, a quire.Actor, on bool) (*Settings, error) {
	if err := auth.RequireAdmin(a); err != nil {
		return nil, err
	}
	v := "on"
	if !on {
		v = "off"
	}
	ev := quire.NewEvent(quire.ActionSettingsUpdated, s.now(), quire.EventActorOf(a), a.Request).
		On(quire.TargetSettings, quire.SettingSharing, "sharing").With("sharing", on)
	if err := s.recording(ev).SetSetting(ctx, quire.SettingSharing, v); err != nil {
		return nil, err
	}
	return &Settings{Sharing: on}, nil
}

// viewsOf opens the tokens of shares into their URLs.
func (s *Service) viewsOf(shares []quire.Share) []View {
	out := make([]View, len(shares))
	for i, sh := range shares {
		out[i] = View{Share: sh}
		if token, err := s.cfg.Key.Open(sealPurpose, sh.TokenSealed, []byte(sh.ID)); err == nil {
			out[i].URL = s.url(string(token))
		}
	}
	return out
}

// url is the address of a share's page.
func (s *Service) url(token string) string { return s.cfg.PublicURL + Path(token) }

// Path is the path of the page of token.
func Path(token string) string { return "/s/" + token }

func newToken() string {
	b := make([]byte, TokenBytes)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// wellFormed reports whether token could be a token at all: 32 characters
// of base64url. Anything else is not looked up.
func wellFormed(token string) bool {
	if len(token) != TokenLength {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
