// Package auth signs people in and keeps them signed in: password hashes
// (argon2id), opaque session tokens stored as hashes, failed sign-in limits
// and account locks, the password flows and invitations, and the user
// administration the CLI drives.
package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"
	_ "time/tzdata" // timezone names validate the same on every machine

	"quire"
	"quire/mfa"
)

// Config holds the limits and lifetimes of contract section 2.
type Config struct {
	Limits            quire.LoginLimits
	TokenTTL          time.Duration // absolute session lifetime
	TokenIdle         time.Duration // idle timeout
	ResetTTL          time.Duration
	InviteTTL         time.Duration
	MinPasswordLength int
	PublicURL         string // base of every link in a mail
	// HashQueueWait is how long a sign-in or password change waits for a
	// hashing slot before it is answered 503 UNAVAILABLE (0: 5 s).
	HashQueueWait time.Duration
	Now           func() time.Time

	// PasswordAdminsOnly refuses password sign-ins of users who are not
	// administrators (--oidc-only: they sign in through single sign-on).
	PasswordAdminsOnly bool
	// MFA is the second factor (package mfa). nil: one on the same store,
	// whose secret key is the one kept in the database.
	MFA *mfa.Service

	// HashPassword hashes a new password (nil: HashPassword, argon2id at
	// the contract's cost). Only tests set it, on a service of their own
	// that makes their fixtures' users (package internal/testpass): a
	// sign-in verifies a hash with the parameters the hash records.
	HashPassword func(password string) (string, error)
}

// DefaultConfig returns the contract's defaults.
func DefaultConfig() Config {
	return Config{
		Limits: quire.LoginLimits{
			Limit: 20, Window: 15 * time.Minute,
			LockThreshold: 50, LockDuration: 30 * time.Minute,
		},
		TokenTTL:          168 * time.Hour,
		TokenIdle:         24 * time.Hour,
		ResetTTL:          time.Hour,
		InviteTTL:         168 * time.Hour,
		MinPasswordLength: 15,
		PublicURL:         "http://127.0.0.1:8080",
		HashQueueWait:     defaultHashQueueWait,
	}
}

// touchEvery is how stale a session's last-use time may get before a request
// writes it again: the idle timeout needs no finer clock, and a write per
// request would put every read behind the database's writer.
const touchEvery = time.Minute

// Store is what the Service needs from persistence.
type Store interface {
	quire.UserStore
	quire.SessionStore
	quire.APITokenStore
	quire.LoginGuard
	quire.TokenStore
	quire.MFAStore // the second step of a sign-in
	quire.Settings // the secret key of the mfa.Service New makes when Config.MFA is nil
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.UserStore
	quire.SessionStore
	quire.APITokenStore
	quire.LoginGuard
	quire.TokenStore
	quire.MFAStore
}

// Service is the authentication service.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	cfg       Config
	logger    *slog.Logger
	hasher    *hasher
	dummyHash string
	stats     *stats // stats.go
}

// dummyHash is the hash that sign-ins with unknown emails are checked
// against, so that they take the time of a known one. One per process is
// enough: it is the hash of a random secret nobody knows, and it costs an
// argon2id computation (tens of milliseconds, ten times that under the
// race detector), which every Service of a test process would repeat.
var dummyHash = sync.OnceValues(func() (string, error) { return HashPassword(newToken()) })

// New returns a Service. The first New of a process computes one password
// hash (dummyHash), which takes a few tens of milliseconds. quire.Store is
// a store of it, with S = quire.Store.
func New[S Recorded](store interface {
	Store
	quire.Recorder[S]
}, cfg Config, logger *slog.Logger) (*Service, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	dummy, err := dummyHash()
	if err != nil {
		return nil, err
	}
	if cfg.MFA == nil {
		cfg.MFA = mfa.New(store, mfa.Config{Now: cfg.Now})
	}
	st := newStats()
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	return &Service{store: store, recording: recording, cfg: cfg, logger: logger, hasher: newHasher(cfg.HashQueueWait, st), dummyHash: dummy, stats: st}, nil
}

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.cfg }

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

var (
	errInvalidCredentials = quire.Errorf(quire.EINVALIDCREDENTIALS, "Invalid email or password")
	errUnauthorized       = quire.Errorf(quire.EUNAUTHORIZED, "Authentication required")
)

// Session is the result of a sign-in.
type Session struct {
	Token     string // shown once; only its hash is stored
	User      *quire.User
	ExpiresAt time.Time
	// MFAToken, when set, means that the password was right and the
	// sign-in waits for its second step (LoginMFA): Token is empty and
	// ExpiresAt is the MFAToken's end.
	MFAToken string
}

// login is Login (stats.go), uncounted.
func (s *Service) login(ctx context.Context, req quire.RequestInfo, email, password, timezone string) (*Session, error) {
	addr := req.IP
	if timezone != "" {
		if err := checkTimezone(timezone); err != nil {
			return nil, err
		}
	}
	email = quire.NormalizeEmail(email)
	if len(email) > maxEmail {
		// No account has such an address (validEmail): the attempt is
		// limited, counted and logged under one name of bounded size,
		// rather than store and audit log keeping what anyone sent.
		email = overlongEmail
	}
	now := s.now()

	// Take the hashing slot first, so that an attempt let past the limit
	// below is never abandoned for want of a slot. Give it back as soon as
	// the hash is done: what follows is writes, which wait on the disk,
	// and the slot is what the next login waits for.
	release, err := s.hasher.acquire(ctx)
	if err != nil {
		return nil, err
	}
	var (
		a      string // the attempt
		user   *quire.User
		rehash string // the hash of the NFKC form, for a stale hash that matched
	)
	var block uint64 // the bytes of the argon2id block hashed in the slot
	ok, err := func() (bool, error) {
		defer release()
		defer func() { makeRoom(block) }() // before release (hash.go)
		attempt, err := s.store.BeginLogin(ctx, addr, email, now, s.cfg.Limits)
		if err != nil {
			return false, err
		}
		a = attempt
		user, err = s.store.UserByEmail(ctx, email)
		if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
			return false, err
		}
		if user != nil && user.Status == quire.UserActive && user.PasswordHash != "" {
			block = blockSize(user.PasswordHash)
			ok, stale, err := verifyPassword(user.PasswordHash, password)
			if err != nil {
				s.logger.Error("stored password hash is unreadable", "user", user.ID, "err", err)
				ok = false
			}
			if ok && stale {
				// Made before passwords were normalised: make it again
				// from the NFKC form, in the slot this sign-in holds.
				block = max(block, argonMemory<<10)
				if rehash, err = HashPassword(password); err != nil {
					s.logger.Warn("rehash password", "user", user.ID, "err", err)
					rehash = ""
				}
			}
			return ok, nil
		}
		block = blockSize(s.dummyHash)
		VerifyPassword(s.dummyHash, password)
		return false, nil
	}()
	if err != nil {
		return nil, err
	}
	if !ok {
		if err := s.loginFailed(ctx, req, email, user, now); err != nil {
			return nil, err
		}
		return nil, errInvalidCredentials
	}
	if err := s.passwordAllowed(ctx, a, email, user); err != nil { // sso.go
		return nil, err
	}
	if on, err := s.cfg.MFA.Enabled(ctx, user.ID); err != nil {
		return nil, err
	} else if on {
		return s.challenge(ctx, a, user, rehash, timezone, now) // mfa.go
	}
	if err := s.passkeyOnly(ctx, a, email, user); err != nil { // sso.go
		return nil, err
	}
	if err := s.store.LoginSucceeded(ctx, a, email); err != nil {
		return nil, err
	}
	if rehash != "" {
		// A failure leaves the old hash, which still works: the next
		// sign-in tries again.
		if err := s.store.ReplacePasswordHash(ctx, user.ID, user.PasswordHash, rehash); err != nil {
			s.logger.Warn("store rehashed password", "user", user.ID, "err", err)
		} else {
			user.PasswordHash = rehash
		}
	}
	return s.startSession(ctx, req, user, timezone, "", now)
}

// startSession opens a session for user, whose sign-in succeeded, storing
// timezone (when not "") on the user, and records auth.login with it; the
// event names method when it is not "" (a sign-in without a password).
func (s *Service) startSession(ctx context.Context, req quire.RequestInfo, user *quire.User, timezone, method string, now time.Time) (*Session, error) {
	if timezone != "" && timezone != user.Timezone {
		if err := s.store.SetUserTimezone(ctx, user.ID, timezone); err != nil {
			return nil, err
		}
		user.Timezone = timezone
	}
	token := newToken()
	sess := &quire.Session{
		UserID:     user.ID,
		TokenHash:  hashToken(token),
		CreatedAt:  now,
		ExpiresAt:  now.Add(s.cfg.TokenTTL),
		LastUsedAt: now,
		IP:         req.IP,
		UserAgent:  boundedUserAgent(req.UserAgent),
	}
	ev := quire.NewEvent(quire.ActionLogin, now, &quire.EventActor{ID: user.ID, Name: user.Name}, req).
		On(quire.TargetUser, user.ID, user.Name)
	if method != "" {
		ev = ev.With("method", method)
	}
	if err := s.recording(ev).CreateSession(ctx, sess); err != nil {
		return nil, err
	}
	return &Session{Token: token, User: user, ExpiresAt: sess.ExpiresAt}, nil
}

// loginFailed counts a failed sign-in of email (user is nil for no
// account) and records it, and the lock it may set, in the same
// transaction: auth.login_failed with the reason, auth.locked.
func (s *Service) loginFailed(ctx context.Context, req quire.RequestInfo, email string, user *quire.User, now time.Time) error {
	reason := quire.LoginFailedPassword
	switch {
	case user == nil:
		reason = quire.LoginFailedUnknown
	case user.Status == quire.UserDisabled:
		reason = quire.LoginFailedDisabled
	case user.Status == quire.UserInvited || user.PasswordHash == "":
		reason = quire.LoginFailedNotSetUp
	}
	return s.recordFailure(ctx, req, email, user, now, reason)
}

// recordFailure counts a failed sign-in of email for reason and records it
// (auth.login_failed), and the lock it may set, in the same transaction.
func (s *Service) recordFailure(ctx context.Context, req quire.RequestInfo, email string, user *quire.User, now time.Time, reason string) error {
	s.stats.login(reason)
	failed := quire.NewEvent(quire.ActionLoginFailed, now, nil, req).With("email", email).With("reason", reason)
	locked := quire.NewEvent(quire.ActionLocked, now, nil, req).With("email", email).
		With("until", now.Add(s.cfg.Limits.LockDuration).Format(time.RFC3339))
	if user != nil {
		failed.On(quire.TargetUser, user.ID, user.Name)
		locked.On(quire.TargetUser, user.ID, user.Name)
	}
	return s.recording(failed).LoginFailed(ctx, email, now, s.cfg.Limits, locked)
}

func checkTimezone(tz string) error {
	// "Local" and "UTC"-like aliases load too; only real zone names are
	// stored, so "Local" (the server's zone) is refused.
	if tz == "Local" || len(tz) > 64 {
		return quire.Invalid(map[string]string{"timezone": "must be an IANA time zone name"})
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return quire.Invalid(map[string]string{"timezone": "must be an IANA time zone name"})
	}
	return nil
}

// maxTokenLength bounds what is hashed and looked up: real tokens are 43
// characters.
const maxTokenLength = 256

// Authenticate returns the actor behind a session token: the user with its
// role and department as they are now. Any token that is unknown, revoked,
// expired, idle too long, or whose user is no longer active, is UNAUTHORIZED.
func (s *Service) Authenticate(ctx context.Context, token string) (quire.Actor, error) {
	if token == "" || len(token) > maxTokenLength {
		return quire.Actor{}, errUnauthorized
	}
	sess, user, err := bearerRecord(ctx, token, s.store.SessionByTokenHash)
	if err != nil {
		return quire.Actor{}, err
	}
	now := s.now()
	if !usable(now, sess.RevokedAt, sess.ExpiresAt, user) || now.Sub(sess.LastUsedAt) >= s.cfg.TokenIdle {
		return quire.Actor{}, errUnauthorized
	}
	if now.Sub(sess.LastUsedAt) >= touchEvery {
		if err := s.store.TouchSession(ctx, sess.ID, now); err != nil {
			// The request may go on: a missed touch only brings the idle
			// timeout a minute closer.
			s.logger.Warn("touch session", "err", err)
		}
	}
	return quire.Actor{User: *user, SessionID: sess.ID}, nil
}

// bearerRecord finds the record of a bearer secret (a session token or an
// API token) and its user through byHash, by the hash of the secret: an
// unknown secret is UNAUTHORIZED, as every other refusal of one is.
func bearerRecord[R any](ctx context.Context, secret string, byHash func(context.Context, []byte) (*R, *quire.User, error)) (*R, *quire.User, error) {
	r, user, err := byHash(ctx, hashToken(secret))
	if err != nil {
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil, nil, errUnauthorized
		}
		return nil, nil, err
	}
	return r, user, nil
}

// usable reports whether a bearer secret revoked at revokedAt (zero: not
// revoked) and expiring at expiresAt still signs in user at now: neither
// revoked nor expired, and its user active (even were a revocation missed).
func usable(now, revokedAt, expiresAt time.Time, user *quire.User) bool {
	return revokedAt.IsZero() && now.Before(expiresAt) && user.Status == quire.UserActive
}

// Logout revokes the actor's session.
func (s *Service) Logout(ctx context.Context, actor quire.Actor) error {
	if err := RequireSession(actor); err != nil {
		return err
	}
	now := s.now()
	ev := quire.NewEvent(quire.ActionLogout, now, quire.EventActorOf(actor), actor.Request).
		On(quire.TargetSession, actor.SessionID, "")
	return s.recording(ev).RevokeSession(ctx, actor.SessionID, now)
}
