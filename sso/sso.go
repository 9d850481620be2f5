// Package sso signs people in through their company's identity provider
// with OpenID Connect (product.md section 12): discovery from the issuer,
// the authorization code flow with PKCE, state and nonce, the ID token
// checked (signature, issuer, audience, expiry, nonce), and the rules that
// say which quire user that is:
//
//   - a user linked to the provider's (issuer, sub) is that user;
//   - else, the first time, the user whose email the provider vouches for
//     (email_verified true) is linked to it; an invited user so found
//     accepts the invitation (it becomes active and the invitation's link
//     is void);
//   - else a new user is created, active with the default role, when the
//     email's domain is allowed (and the email verified);
//   - anyone else is refused with a reason, and so is a disabled user.
//
// The session it opens is an ordinary quire session (auth.SignInVerified),
// recorded as auth.login with the method "sso".
// A sign-in begun on one node may come back on another: the flow (state,
// nonce, PKCE verifier) is kept in the database, single-use and short-lived.
package sso

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"quire"
	"quire/auth"
)

// The paths quire serves for single sign-on. CallbackPath, after the public
// URL, is the redirect URL to register at the identity provider.
const (
	StartPath    = "/auth/oidc/start"
	CallbackPath = "/auth/oidc/callback"
)

// Config is the --oidc-* settings.
type Config struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// Name labels the sign-in button ("Sign in with <Name>").
	Name string
	// Domains are the email domains whose people get an account on their
	// first sign-in; empty allows any.
	Domains []string
	// DefaultRole is the role of the accounts made on a first sign-in.
	DefaultRole string
	// Only hides the password form: password sign-in is for administrators.
	Only bool
	// PublicURL is where users reach quire; the redirect URL is
	// PublicURL+CallbackPath.
	PublicURL string
	// FlowTTL is how long a sign-in may take at the provider (10 minutes
	// when 0).
	FlowTTL time.Duration
	// StartsPerAddr bounds the sign-ins one client address may begin in a
	// minute (DefaultStartsPerAddr when 0).
	StartsPerAddr int
	// MaxFlows bounds the sign-ins begun and not yet back that the
	// database keeps (DefaultMaxFlows when 0); a new one beyond drops the
	// oldest.
	MaxFlows int
	// HTTPClient talks to the provider (nil: one with a 15 s timeout).
	HTTPClient *http.Client
	Now        func() time.Time
}

// Store is what the Service needs from persistence.
type Store interface {
	quire.SSOStore
	UserByEmail(ctx context.Context, email string) (*quire.User, error)
	Role(ctx context.Context, key string) (*quire.Role, error)
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.SSOStore
}

// Service runs single sign-on.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	auth      *auth.Service
	cfg       Config
	logger    *slog.Logger

	mu        sync.Mutex
	provider  *oidc.Provider   // found by discovery on first use, then kept
	authStyle oauth2.AuthStyle // at its token endpoint, from discovery

	starts startLimiter
}

// New checks cfg and returns the service. It does not reach the provider:
// discovery happens on the first sign-in (and again after a failure), so
// that quire starts while the provider is down. quire.Store is a store of
// it, with S = quire.Store.
func New[S Recorded](ctx context.Context, store interface {
	Store
	quire.Recorder[S]
}, a *auth.Service, cfg Config, logger *slog.Logger) (*Service, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" {
		return nil, errors.New("single sign-on needs --oidc-issuer and --oidc-client-id")
	}
	if cfg.Name == "" {
		cfg.Name = "Single sign-on"
	}
	if cfg.DefaultRole == "" {
		cfg.DefaultRole = "viewer"
	}
	if _, err := store.Role(ctx, cfg.DefaultRole); err != nil {
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil, fmt.Errorf("--oidc-default-role %q is not a role", cfg.DefaultRole)
		}
		return nil, err
	}
	cfg.Domains = NormalizeDomains(cfg.Domains)
	if cfg.FlowTTL <= 0 {
		cfg.FlowTTL = 10 * time.Minute
	}
	if cfg.StartsPerAddr <= 0 {
		cfg.StartsPerAddr = DefaultStartsPerAddr
	}
	if cfg.MaxFlows <= 0 {
		cfg.MaxFlows = DefaultMaxFlows
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	return &Service{store: store, recording: recording, auth: a, cfg: cfg, logger: logger}, nil
}

// NormalizeDomains trims and lower-cases domains, drops a leading "@" and
// empty entries.
func NormalizeDomains(domains []string) []string {
	var out []string
	for _, d := range domains {
		d = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Name is the button's label.
func (s *Service) Name() string { return s.cfg.Name }

// Only reports whether password sign-in is for administrators only.
func (s *Service) Only() bool { return s.cfg.Only }

// RedirectURL is the callback to register at the provider.
func (s *Service) RedirectURL() string { return s.cfg.PublicURL + CallbackPath }

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// errUnreachable answers a sign-in while the provider cannot be reached.
var errUnreachable = &quire.Error{Code: quire.EUNAVAILABLE,
	Message: "The identity provider cannot be reached. Please try again in a moment.", RetryAfter: 5 * time.Second}

// client returns the context for calls to the provider and the provider,
// discovering it on first use.
func (s *Service) client(ctx context.Context) (context.Context, *oidc.Provider, error) {
	ctx = oidc.ClientContext(ctx, s.cfg.HTTPClient)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return ctx, s.provider, nil
	}
	p, err := oidc.NewProvider(ctx, s.cfg.Issuer)
	if err != nil {
		s.logger.Warn("sso: discovery failed", "issuer", s.cfg.Issuer, "err", err)
		return ctx, nil, errUnreachable
	}
	s.provider, s.authStyle = p, authStyle(p)
	return ctx, p, nil
}

// authStyle is how the client authenticates at the token endpoint, from
// the provider's discovery document: HTTP Basic (client_secret_basic) when
// it lists that method or lists none (the default of OpenID Connect
// Discovery), the form's client_secret (client_secret_post) when it lists
// only that. Never x/oauth2's detection, which after a refused exchange
// (an invalid_grant) tries again with the secret in the body and returns
// only the second error.
func authStyle(p *oidc.Provider) oauth2.AuthStyle {
	var d struct {
		Methods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := p.Claims(&d); err != nil || len(d.Methods) == 0 {
		return oauth2.AuthStyleInHeader
	}
	for _, m := range d.Methods {
		if m == "client_secret_basic" {
			return oauth2.AuthStyleInHeader
		}
	}
	for _, m := range d.Methods {
		if m == "client_secret_post" {
			return oauth2.AuthStyleInParams
		}
	}
	return oauth2.AuthStyleInHeader
}

func (s *Service) oauth(p *oidc.Provider) *oauth2.Config {
	ep := p.Endpoint()
	s.mu.Lock()
	ep.AuthStyle = s.authStyle
	s.mu.Unlock()
	return &oauth2.Config{
		ClientID:     s.cfg.ClientID,
		ClientSecret: s.cfg.ClientSecret,
		Endpoint:     ep,
		RedirectURL:  s.RedirectURL(),
		Scopes:       []string{oidc.ScopeOpenID, "email", "profile"},
	}
}

// Begin starts a sign-in from the client address addr that comes back to
// next (a path of this site, or ""): it stores the flow and returns its
// state, which the caller keeps in the browser (a cookie) to bind the
// callback to it, and the provider's authorization URL to send the
// browser to. TOO_MANY_ATTEMPTS (with RetryAfter) when addr began
// StartsPerAddr sign-ins in the current minute.
func (s *Service) Begin(ctx context.Context, addr, next string) (state, authURL string, err error) {
	if wait := s.starts.take(addr, s.now(), s.cfg.StartsPerAddr); wait > 0 {
		return "", "", &quire.Error{Code: quire.ETOOMANYATTEMPTS, Message: "Too many login attempts, please try again later.", RetryAfter: wait}
	}
	ctx, p, err := s.client(ctx)
	if err != nil {
		return "", "", err
	}
	state, nonce, verifier := random(), random(), oauth2.GenerateVerifier()
	now := s.now()
	f := &quire.SSOFlow{StateHash: hash(state), Nonce: nonce, Verifier: verifier, Next: next,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.FlowTTL)}
	if err := s.store.CreateSSOFlow(ctx, f, s.cfg.MaxFlows); err != nil {
		return "", "", err
	}
	return state, s.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// The defaults of Config's bounds on anonymous starts: a person begins a
// sign-in or two a minute, an office behind one address some dozens; the
// flows kept are far more than a site's people begin in ten minutes.
const (
	DefaultStartsPerAddr = 60
	DefaultMaxFlows      = 10000
)

// startLimiter counts the sign-ins each client address began in the
// current minute, in memory (one node's count: a start is a redirect, the
// bound on the database's rows is MaxFlows). It forgets everything when
// the minute turns, and tracks at most maxTracked addresses a minute.
type startLimiter struct {
	mu     sync.Mutex
	window time.Time
	counts map[string]int
}

const maxTracked = 100000

// take counts one start of addr at now and returns 0, or how long to wait
// when addr began limit starts in now's minute already.
func (l *startLimiter) take(addr string, now time.Time, limit int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := now.Truncate(time.Minute); !w.Equal(l.window) || l.counts == nil {
		l.window, l.counts = w, map[string]int{}
	}
	n, ok := l.counts[addr]
	if n >= limit {
		return max(l.window.Add(time.Minute).Sub(now), time.Second)
	}
	if ok || len(l.counts) < maxTracked {
		l.counts[addr] = n + 1
	}
	return 0
}

// Method names single sign-on in the auth.login event.
const Method = auth.MethodSSO

// Callback is what the provider sent the browser back with, and the state
// the browser kept.
type Callback struct {
	CookieState string // the state kept by the browser at Begin
	State       string
	Code        string
	Error       string // the provider's error parameter, when it refused
}

// Result is a finished sign-in.
type Result struct {
	Session *auth.Session
	Next    string // where the sign-in began, "" for the default
}

// refused is a sign-in turned down: the message says why, and is shown to
// the person, who is not signed in.
func refused(format string, args ...any) error {
	return quire.Errorf(quire.EFORBIDDEN, format, args...)
}

var (
	errStateMismatch = refused("This sign-in did not start in this browser, or it took too long. Please start again.")
	errFlowUnknown   = refused("This sign-in has expired or was used already. Please start again.")
	errNotVerified   = refused("The identity provider could not confirm who you are. Please start again.")
)

// maxParam bounds what a callback parameter may be: real states are 43
// characters, codes a few hundred.
const maxParam = 4096

// Finish completes a sign-in from the provider's callback: it takes the
// flow (once), exchanges the code with the PKCE verifier, checks the ID
// token and its nonce, finds or creates the user and opens a session.
// Every refusal is FORBIDDEN with a message for the person.
func (s *Service) Finish(ctx context.Context, req quire.RequestInfo, cb Callback) (*Result, error) {
	if cb.State == "" || cb.CookieState == "" || len(cb.State) > maxParam || len(cb.Code) > maxParam ||
		subtle.ConstantTimeCompare([]byte(cb.State), []byte(cb.CookieState)) != 1 {
		return nil, errStateMismatch
	}
	flow, err := s.store.TakeSSOFlow(ctx, hash(cb.State), s.now())
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, errFlowUnknown
	}
	if err != nil {
		return nil, err
	}
	if cb.Error != "" {
		s.logger.Info("sso: the provider refused the sign-in", "error", boundedASCII(cb.Error))
		return nil, refused("The identity provider did not sign you in (%s).", boundedASCII(cb.Error))
	}
	if cb.Code == "" {
		return nil, errNotVerified
	}
	ctx, p, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := s.oauth(p).Exchange(ctx, cb.Code, oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		s.logExchangeFailure(err)
		return nil, errNotVerified
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		s.logger.Info("sso: the token answer has no id_token")
		return nil, errNotVerified
	}
	// Signature (with the provider's published keys), issuer, audience
	// (our client id) and expiry; the nonce below.
	idt, err := p.Verifier(&oidc.Config{ClientID: s.cfg.ClientID, Now: s.cfg.Now}).Verify(ctx, raw)
	if err != nil {
		s.logger.Info("sso: ID token refused", "err", err)
		return nil, errNotVerified
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(flow.Nonce)) != 1 {
		s.logger.Info("sso: ID token refused: nonce mismatch")
		return nil, errNotVerified
	}
	who, err := s.claims(ctx, p, idt, tok)
	if err != nil {
		return nil, err
	}
	sess, err := s.signIn(ctx, req, who)
	if err != nil {
		return nil, err
	}
	return &Result{Session: sess, Next: flow.Next}, nil
}

// logExchangeFailure logs why the provider refused the code: its OAuth
// error code and description (RFC 6749 section 5.2), bounded, and the
// HTTP status; or the transport's error. Neither holds the client secret
// (it travels in a header or the request's form, never in the answer).
func (s *Service) logExchangeFailure(err error) {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		s.logger.Info("sso: code exchange refused by the provider", "error", boundedASCII(re.ErrorCode),
			"description", boundedASCII(re.ErrorDescription), "status", status)
		return
	}
	s.logger.Info("sso: code exchange failed", "err", err)
}

// person is who the provider says signed in.
type person struct {
	issuer, subject string
	email           string // normalised
	emailVerified   bool
	name            string
}

// claims reads the person from the ID token, or from the userinfo endpoint
// when the ID token carries no email (some providers put only sub in it).
func (s *Service) claims(ctx context.Context, p *oidc.Provider, idt *oidc.IDToken, tok *oauth2.Token) (person, error) {
	var c struct {
		Email             string     `json:"email"`
		EmailVerified     stringBool `json:"email_verified"`
		Name              string     `json:"name"`
		PreferredUsername string     `json:"preferred_username"`
	}
	if err := idt.Claims(&c); err != nil {
		s.logger.Info("sso: unreadable ID token claims", "err", err)
		return person{}, errNotVerified
	}
	who := person{issuer: idt.Issuer, subject: idt.Subject, email: c.Email, emailVerified: bool(c.EmailVerified),
		name: c.Name}
	if who.name == "" {
		who.name = c.PreferredUsername
	}
	if who.email == "" && p.UserInfoEndpoint() != "" {
		ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			s.logger.Info("sso: userinfo failed", "err", err)
			return person{}, errNotVerified
		}
		if ui.Subject != idt.Subject {
			s.logger.Info("sso: userinfo names another subject")
			return person{}, errNotVerified
		}
		who.email, who.emailVerified = ui.Email, ui.EmailVerified
	}
	who.email = quire.NormalizeEmail(who.email)
	if len(who.email) > 254 || !strings.Contains(who.email, "@") {
		who.email = ""
	}
	return who, nil
}

// signIn applies the rules of the package comment and opens the session.
func (s *Service) signIn(ctx context.Context, req quire.RequestInfo, who person) (*auth.Session, error) {
	now := s.now()
	login := func(u *quire.User) (*auth.Session, error) {
		if err := auth.SignInAllowed(u); err != nil {
			return nil, err
		}
		return s.auth.SignInVerified(ctx, req, u, Method)
	}
	u, err := s.store.IdentityUser(ctx, who.issuer, who.subject)
	if err == nil {
		if u.Status == quire.UserInvited {
			// Linked, and invited again: a user without a password that
			// an administrator disabled and enabled. The provider proves
			// who it is, as it did when the link was made.
			return s.acceptInvitation(ctx, req, u, nil, who, login)
		}
		return login(u)
	}
	if quire.ErrorCode(err) != quire.ENOTFOUND {
		return nil, err
	}
	// Not linked yet: only an email the provider vouches for may name an
	// account, existing or new.
	switch {
	case who.email == "":
		return nil, refused("The identity provider gave no email address, so no account here can be found for you.")
	case !who.emailVerified:
		return nil, refused("Your email address %s is not verified at the identity provider, so it cannot be matched to an account here. Verify it there, then sign in again.", who.email)
	}
	id := &quire.Identity{Issuer: who.issuer, Subject: who.subject, Email: who.email, CreatedAt: now}
	u, err = s.store.UserByEmail(ctx, who.email)
	switch {
	case err == nil && u.Status == quire.UserInvited:
		// An invitation is a match by a verified email too: the person
		// accepts it by signing in, and its link is void.
		id.UserID = u.ID
		return s.acceptInvitation(ctx, req, u, id, who, login)
	case err == nil:
		if err := auth.SignInAllowed(u); err != nil {
			return nil, err // before anything is linked
		}
		id.UserID = u.ID
		ev := quire.NewEvent(quire.ActionUserUpdated, now, nil, req).On(quire.TargetUser, u.ID, u.Name).
			With("via", Method).With("issuer", who.issuer).With("linked", true)
		if err := s.recording(ev).LinkIdentity(ctx, id); err != nil {
			return nil, err
		}
		return login(u)
	case quire.ErrorCode(err) != quire.ENOTFOUND:
		return nil, err
	}
	domain := who.email[strings.LastIndexByte(who.email, '@')+1:]
	if !s.domainAllowed(domain) {
		return nil, refused("Accounts of %s may not sign in here. Ask an administrator to invite you.", domain)
	}
	role, err := s.store.Role(ctx, s.cfg.DefaultRole)
	if err != nil {
		return nil, err
	}
	u = &quire.User{Email: who.email, Name: displayName(who), Role: *role, Status: quire.UserActive}
	ev := quire.NewEvent(quire.ActionUserCreated, now, nil, req).On(quire.TargetUser, "", u.Name).
		With("via", "sso").With("issuer", who.issuer).With("role", role.Key)
	if err := s.recording(ev).CreateUserWithIdentity(ctx, u, id); err != nil {
		if quire.ErrorCode(err) == quire.ECONFLICT {
			// Another sign-in of the same person won the race: it is
			// linked or created now, so one more try finds it.
			return nil, refused("This account was being set up at the same moment. Please sign in again.")
		}
		return nil, err
	}
	return login(u)
}

// acceptInvitation makes the invited user u active, voids its invitation's
// link and links id (nil when linked already), in one transaction with its
// event, then opens the session.
func (s *Service) acceptInvitation(ctx context.Context, req quire.RequestInfo, u *quire.User, id *quire.Identity,
	who person, login func(*quire.User) (*auth.Session, error)) (*auth.Session, error) {
	ev := quire.NewEvent(quire.ActionUserUpdated, s.now(), nil, req).On(quire.TargetUser, u.ID, u.Name).
		With("via", Method).With("issuer", who.issuer).With("linked", true).With("status", string(quire.UserActive))
	err := s.recording(ev).AcceptInvitationWithIdentity(ctx, u.ID, id, s.now())
	if quire.ErrorCode(err) == quire.ECONFLICT {
		// Set up, disabled or linked by a request beside this one.
		return nil, refused("This account was being set up at the same moment. Please sign in again.")
	}
	if err != nil {
		return nil, err
	}
	u.Status = quire.UserActive
	return login(u)
}

func (s *Service) domainAllowed(domain string) bool {
	if len(s.cfg.Domains) == 0 {
		return true
	}
	for _, d := range s.cfg.Domains {
		if d == domain {
			return true
		}
	}
	return false
}

// displayName is the new user's name: the provider's, or the email's
// local part, at most 200 characters.
func displayName(who person) string {
	name := strings.TrimSpace(who.name)
	if name == "" {
		name, _, _ = strings.Cut(who.email, "@")
	}
	if utf8.RuneCountInString(name) > 200 {
		name = string([]rune(name)[:200])
	}
	return name
}

// stringBool reads email_verified as a boolean or as "true"/"false" (some
// providers send a string).
type stringBool bool

func (b *stringBool) UnmarshalJSON(p []byte) error {
	switch string(p) {
	case `true`, `"true"`:
		*b = true
	default:
		*b = false
	}
	return nil
}

// boundedASCII is a provider's error code as it may be shown and logged:
// printable ASCII, at most 64 characters.
func boundedASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 64; i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func random() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
