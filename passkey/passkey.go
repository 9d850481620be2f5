// Package passkey registers passkeys (WebAuthn credentials, with
// github.com/go-webauthn/webauthn) and signs people in with one alone: a
// discoverable credential names its user, so no email is typed.
//
// The relying party is the public URL: its host is the RP ID and its
// scheme, host and port the one origin accepted. Browsers offer WebAuthn
// only on HTTPS or on http://localhost, and never for an IP address, so a
// public URL such as http://127.0.0.1:8080 leaves passkeys unavailable
// (Available says why).
//
// The state of each ceremony between its begin and its finish is a row of
// the store, named by the hash of its challenge, single-use and valid for
// CeremonyTTL, so that a finish may reach another node than its begin. A
// failed sign-in counts under the limits of password sign-ins: always per
// client address, and, once the credential names a user, as a failed
// sign-in of that user's email (window, consecutive count, lock).
package passkey

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"quire"
	"quire/auth"
)

const (
	// CeremonyTTL is how long a begun ceremony may be finished.
	CeremonyTTL = 5 * time.Minute
	// CeremoniesPerAddr bounds the live ceremonies of one client address,
	// so that nobody fills the table through the public sign-in begin:
	// beyond, the address's oldest are dropped, not the new one refused,
	// so that an office behind one address is never locked out (the
	// finishes' failures are what the sign-in limits count).
	CeremoniesPerAddr = 64
	// MaxPerUser bounds the passkeys of one user.
	MaxPerUser = 20
	// MaxNameLength bounds a passkey's name, in characters.
	MaxNameLength = 100
	// DefaultName names a passkey registered without a name.
	DefaultName = "Passkey"
	// Method is the "method" of the auth.login event of a passkey sign-in.
	Method = "passkey"
)

// Store is what the Service needs from persistence.
type Store interface {
	quire.PasskeyStore
	quire.LoginGuard // passkey sign-ins count against the login limits too
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.PasskeyStore
	quire.LoginGuard
}

// Service registers passkeys and signs people in with them.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	auth      *auth.Service
	wa        *webauthn.WebAuthn // nil: unavailable, see reason
	reason    string
	limits    quire.LoginLimits
	now       func() time.Time
	logger    *slog.Logger
}

// New returns the service for the auth service's public URL, limits and
// clock. A public URL that cannot be a relying party (an IP address) gives
// a service whose every call is refused with the reason. quire.Store is a
// store of it, with S = quire.Store.
func New[S Recorded](store interface {
	Store
	quire.Recorder[S]
}, a *auth.Service, logger *slog.Logger) *Service {
	cfg := a.Config()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	s := &Service{store: store, recording: recording, auth: a, limits: cfg.Limits, now: func() time.Time { return now().UTC() }, logger: logger}
	s.wa, s.reason = relyingParty(cfg.PublicURL)
	return s
}

// relyingParty builds the WebAuthn configuration of publicURL, or says why
// there is none.
func relyingParty(publicURL string) (*webauthn.WebAuthn, string) {
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, "Passkeys need the public URL (--public-url) to be an http:// or https:// URL."
	}
	host := strings.ToLower(u.Hostname())
	if err := protocol.ValidateRPID(host); err != nil {
		return nil, fmt.Sprintf("Passkeys need quire to be reached by a host name, not an address: start it with --public-url https://your.host (or http://localhost:%s on this machine).", portOr(u, "8080"))
	}
	if u.Scheme == "http" && host != "localhost" && !strings.HasSuffix(host, ".localhost") {
		return nil, "Passkeys need HTTPS: browsers offer them only on https:// sites and on http://localhost."
	}
	origin := u.Scheme + "://" + strings.ToLower(u.Host)
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          host,
		RPDisplayName: "quire",
		RPOrigins:     []string{origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementRequired,
			UserVerification: protocol.VerificationPreferred,
		},
		AttestationPreference: protocol.PreferNoAttestation,
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: CeremonyTTL},
			Registration: webauthn.TimeoutConfig{Timeout: CeremonyTTL},
		},
	})
	if err != nil {
		return nil, "Passkeys are not available with this public URL: " + err.Error()
	}
	return wa, ""
}

func portOr(u *url.URL, def string) string {
	if p := u.Port(); p != "" {
		return p
	}
	return def
}

// Available returns nil when passkeys can be used, and otherwise the
// refusal every call answers (404 NOT_FOUND, with the reason to show).
func (s *Service) Available() error {
	if s.wa == nil {
		return quire.Errorf(quire.ENOTFOUND, "%s", s.reason)
	}
	return nil
}

// webauthnUser is a quire user as the WebAuthn library sees it: its
// handle is the user's id, which a discoverable credential hands back.
type webauthnUser struct {
	user  *quire.User
	creds []webauthn.Credential
}

func (u webauthnUser) WebAuthnID() []byte                         { return []byte(u.user.ID) }
func (u webauthnUser) WebAuthnName() string                       { return u.user.Email }
func (u webauthnUser) WebAuthnDisplayName() string                { return u.user.Name }
func (u webauthnUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// credential is the library's view of a stored passkey.
func credential(p *quire.Passkey) webauthn.Credential {
	transports := make([]protocol.AuthenticatorTransport, len(p.Transports))
	for i, t := range p.Transports {
		transports[i] = protocol.AuthenticatorTransport(t)
	}
	return webauthn.Credential{
		ID:            p.CredentialID,
		PublicKey:     p.PublicKey,
		Transport:     transports,
		Flags:         webauthn.NewCredentialFlags(protocol.AuthenticatorFlags(p.Flags)),
		Authenticator: webauthn.Authenticator{AAGUID: p.AAGUID, SignCount: p.SignCount},
	}
}

// ceremonyKey is the name of a ceremony: the SHA-256 of its challenge as
// the browser reports it (base64url).
func ceremonyKey(challenge string) []byte {
	h := sha256.Sum256([]byte(challenge))
	return h[:]
}

// begin stores the state of a ceremony and its expiry.
func (s *Service) begin(ctx context.Context, kind, userID, addr string, sd *webauthn.SessionData) error {
	data, err := json.Marshal(sd)
	if err != nil {
		return fmt.Errorf("passkey ceremony: %w", err)
	}
	now := s.now()
	return s.store.BeginPasskeyCeremony(ctx, &quire.PasskeyCeremony{
		ChallengeHash: ceremonyKey(sd.Challenge), Kind: kind, UserID: userID, Addr: addr,
		Data: data, ExpiresAt: now.Add(CeremonyTTL),
	}, now, CeremoniesPerAddr)
}

// take returns the state of the ceremony of kind whose challenge the
// browser answered, deleting it: a second finish of the same ceremony
// finds nothing. ok is false for none (unknown, used, or expired).
func (s *Service) take(ctx context.Context, kind, challenge string) (sd webauthn.SessionData, c *quire.PasskeyCeremony, ok bool, err error) {
	if challenge == "" || len(challenge) > 512 {
		return sd, nil, false, nil
	}
	c, err = s.store.TakePasskeyCeremony(ctx, kind, ceremonyKey(challenge), s.now())
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return sd, nil, false, nil
	}
	if err != nil {
		return sd, nil, false, err
	}
	if err := json.Unmarshal(c.Data, &sd); err != nil {
		return sd, nil, false, fmt.Errorf("passkey ceremony: %w", err)
	}
	// The store judged the expiry by the injected clock; the library,
	// which reads the wall clock, is not asked to.
	sd.Expires = time.Time{}
	return sd, c, true, nil
}

// checkName trims a passkey's name and checks it; "" becomes DefaultName
// when blank is allowed.
func checkName(name string, blankOK bool) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "" && blankOK:
		return DefaultName, nil
	case name == "":
		return "", quire.Invalid(map[string]string{"name": "is required"})
	case !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", quire.Invalid(map[string]string{"name": "must be text without control characters"})
	case utf8.RuneCountInString(name) > MaxNameLength:
		return "", quire.Invalid(map[string]string{"name": fmt.Sprintf("must be at most %d characters", MaxNameLength)})
	}
	return name, nil
}

// errNotAccepted is every refused sign-in with a passkey: the same answer
// whether the challenge, the credential, its user or its signature failed.
var errNotAccepted = quire.Errorf(quire.EINVALIDCREDENTIALS, "The passkey was not accepted")

// parseError turns the library's refusal of a malformed response into a
// validation error naming the field.
func parseError(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return quire.Invalid(map[string]string{"credential": "is not a WebAuthn response: " + pe.Details})
	}
	return quire.Invalid(map[string]string{"credential": "is not a WebAuthn response"})
}
