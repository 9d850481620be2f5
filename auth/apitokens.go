package auth

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"quire"
)

// Lifetimes of a personal API token (product.md section 10).
const (
	APITokenDefaultTTL = 90 * 24 * time.Hour
	APITokenMaxTTL     = 366 * 24 * time.Hour
	maxTokenName       = 100 // characters
	// maxUserAgent bounds what is kept of a User-Agent header: enough to
	// tell browsers apart, and a row of bounded size.
	maxUserAgent = 512
)

var errTokenRefused = quire.Errorf(quire.EFORBIDDEN, "An API token cannot do this; sign in with a password")

// RequireSession refuses an actor that called with a personal API token:
// tokens work on the documents API only, never on tokens, passwords,
// sessions or administration.
func RequireSession(actor quire.Actor) error {
	if actor.ViaToken() || actor.SessionID == "" {
		return errTokenRefused
	}
	return nil
}

// IsAPIToken reports whether secret has the form of a personal API token, so
// that a caller can tell it from a session token before looking it up.
func IsAPIToken(secret string) bool { return strings.HasPrefix(secret, quire.APITokenPrefix) }

// CreateAPIToken creates a personal API token for the actor, named name
// (1 to 100 characters), of scope "read" or "write", expiring at expiresAt
// (nil: in 90 days; at most 366 days ahead). It returns the token and its
// secret, which is shown once and stored only as a hash. A token cannot
// create tokens (FORBIDDEN); bounds are VALIDATION_ERROR naming the field.
// The token keeps the client address and User-Agent of actor.Request.
func (s *Service) CreateAPIToken(ctx context.Context, actor quire.Actor, name, scope string, expiresAt *time.Time) (*quire.APIToken, string, error) {
	if err := RequireSession(actor); err != nil {
		return nil, "", err
	}
	now := s.now().Truncate(time.Microsecond)
	fields := map[string]string{}
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n < 1 || n > maxTokenName || !utf8.ValidString(name) {
		fields["name"] = "must be 1 to 100 characters"
	} else if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		fields["name"] = "must not contain control characters"
	}
	sc := quire.TokenScope(scope)
	if sc != quire.ScopeRead && sc != quire.ScopeWrite {
		fields["scope"] = `must be "read" or "write"`
	}
	expires := now.Add(APITokenDefaultTTL)
	if expiresAt != nil {
		expires = expiresAt.UTC().Truncate(time.Microsecond)
		if !expires.After(now) || expires.After(now.Add(APITokenMaxTTL)) {
			fields["expiresAt"] = "must be in the future and at most 366 days ahead"
		}
	}
	if len(fields) > 0 {
		return nil, "", quire.Invalid(fields)
	}
	secret := quire.APITokenPrefix + newToken()
	t := &quire.APIToken{
		UserID:    actor.User.ID,
		Name:      name,
		Scope:     sc,
		TokenHash: hashToken(secret),
		CreatedAt: now,
		ExpiresAt: expires,
		IP:        actor.Request.IP,
		UserAgent: boundedUserAgent(actor.Request.UserAgent),
	}
	ev := quire.NewEvent(quire.ActionTokenCreated, now, quire.EventActorOf(actor), actor.Request).
		On(quire.TargetToken, "", name).With("scope", scope).With("expiresAt", expires.Format("2006-01-02T15:04:05.000000Z"))
	if err := s.recording(ev).CreateAPIToken(ctx, t); err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// APITokens lists the actor's tokens neither revoked nor expired.
func (s *Service) APITokens(ctx context.Context, actor quire.Actor) ([]quire.APIToken, error) {
	if err := RequireSession(actor); err != nil {
		return nil, err
	}
	return s.store.APITokens(ctx, actor.User.ID, s.now())
}

// RevokeAPIToken revokes one of the actor's tokens. Another user's token,
// or one revoked or expired, is NOT_FOUND.
func (s *Service) RevokeAPIToken(ctx context.Context, actor quire.Actor, id string) error {
	if err := RequireSession(actor); err != nil {
		return err
	}
	if !quire.ValidID(id) {
		return errNotFound("API token")
	}
	now := s.now()
	ev := quire.NewEvent(quire.ActionTokenRevoked, now, quire.EventActorOf(actor), actor.Request).On(quire.TargetToken, id, "")
	return s.recording(ev).RevokeAPIToken(ctx, actor.User.ID, id, now)
}

// AuthenticateAPIToken returns the actor behind a personal API token: its
// user as it is now, with the token's id and scope. A token that is
// unknown, revoked or expired, or whose user is no longer active (even were
// its revocation missed), is UNAUTHORIZED. It costs what a session check
// costs: one lookup through the unique index of the hash, and a write of
// the last-use time at most once a minute.
func (s *Service) AuthenticateAPIToken(ctx context.Context, secret string) (quire.Actor, error) {
	if !IsAPIToken(secret) || len(secret) > maxTokenLength {
		return quire.Actor{}, errUnauthorized
	}
	t, user, err := bearerRecord(ctx, secret, s.store.APITokenByHash)
	if err != nil {
		return quire.Actor{}, err
	}
	now := s.now()
	if !usable(now, t.RevokedAt, t.ExpiresAt, user) {
		return quire.Actor{}, errUnauthorized
	}
	if now.Sub(t.LastUsedAt) >= touchEvery {
		if err := s.store.TouchAPIToken(ctx, t.ID, now); err != nil {
			s.logger.Warn("touch api token", "err", err)
		}
	}
	return quire.Actor{User: *user, TokenID: t.ID, Scope: t.Scope}, nil
}

// Sessions lists the actor's sessions that are still valid: neither
// revoked, expired, nor idle past the idle timeout.
func (s *Service) Sessions(ctx context.Context, actor quire.Actor) ([]quire.Session, error) {
	if err := RequireSession(actor); err != nil {
		return nil, err
	}
	now := s.now()
	all, err := s.store.UserSessions(ctx, actor.User.ID, now)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, sess := range all {
		if now.Sub(sess.LastUsedAt) < s.cfg.TokenIdle {
			out = append(out, sess)
		}
	}
	return out, nil
}

// RevokeSession revokes one of the actor's sessions (its own included:
// that is a sign-out). Another user's session, or one revoked or expired,
// is NOT_FOUND.
func (s *Service) RevokeSession(ctx context.Context, actor quire.Actor, id string) error {
	if err := RequireSession(actor); err != nil {
		return err
	}
	if !quire.ValidID(id) {
		return errNotFound("Session")
	}
	now := s.now()
	ev := quire.NewEvent(quire.ActionSessionRevoked, now, quire.EventActorOf(actor), actor.Request).On(quire.TargetSession, id, "")
	return s.recording(ev).RevokeUserSession(ctx, actor.User.ID, id, now)
}

// RevokeOtherSessions revokes every session of the actor but the one it
// called with.
func (s *Service) RevokeOtherSessions(ctx context.Context, actor quire.Actor) error {
	if err := RequireSession(actor); err != nil {
		return err
	}
	// One event for the sign-out of every other session, on the user,
	// naming the session kept.
	now := s.now()
	ev := quire.NewEvent(quire.ActionSessionRevoked, now, quire.EventActorOf(actor), actor.Request).
		On(quire.TargetUser, actor.User.ID, actor.User.Name).With("except", actor.SessionID)
	return s.recording(ev).RevokeUserSessions(ctx, actor.User.ID, actor.SessionID, now)
}

func errNotFound(what string) error { return quire.Errorf(quire.ENOTFOUND, "%s not found", what) }

// boundedUserAgent keeps at most maxUserAgent bytes of valid UTF-8 without
// control characters (a row of bounded size that prints safely).
func boundedUserAgent(ua string) string {
	ua = strings.ToValidUTF8(ua, "")
	ua = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, ua)
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
		for !utf8.ValidString(ua) {
			ua = ua[:len(ua)-1]
		}
	}
	return strings.TrimSpace(ua)
}
