package passkey

import (
	"bytes"
	"context"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"quire"
	"quire/auth"
)

// BeginLogin starts a sign-in with a passkey alone: the options to pass to
// navigator.credentials.get, with no allowed credentials listed, so that
// the authenticator offers the discoverable ones it holds for this site.
// When the client address holds CeremoniesPerAddr ceremonies already, its
// oldest is dropped: a begin is never refused.
func (s *Service) BeginLogin(ctx context.Context, req quire.RequestInfo) (*protocol.CredentialAssertion, error) {
	if err := s.Available(); err != nil {
		return nil, err
	}
	assertion, sd, err := s.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return nil, err
	}
	if err := s.begin(ctx, quire.PasskeyLogin, "", req.IP, sd); err != nil {
		return nil, err
	}
	return assertion, nil
}

// addrKey is the key under which the failed passkey sign-ins of a client
// address are counted in the store's sign-in window (LoginGuard): a key
// that no normalised email can be (it has capitals), so that nobody
// reaches it through the password sign-in, and that is never locked.
func addrKey(addr string) string { return "Passkey sign-in from " + addr }

// FinishLogin checks the authenticator's answer (the JSON of the
// PublicKeyCredential that navigator.credentials.get resolved to) and, when
// it verifies, opens an ordinary session for the credential's user.
//
// Limits: the attempt is counted in advance against the client address's
// window (TOO_MANY_ATTEMPTS when it is full) and, once the credential names
// a user, against that user's email as a password sign-in is
// (ACCOUNT_LOCKED, TOO_MANY_ATTEMPTS); a refusal after that is a failed
// sign-in of the email (auth.login_failed with reason passkey, or
// disabled; the consecutive count and the lock). Every refusal is the same
// INVALID_CREDENTIALS: an unknown, used or expired challenge, an unknown
// credential, a user not active, a signature that does not verify, a
// sign count that went back (a cloned authenticator). A passkey that
// verifies but did not verify its user (UV) is refused, with its own
// message and not counted, for a user with a TOTP on or whose role
// requires a second factor: it would stand in for two factors.
func (s *Service) FinishLogin(ctx context.Context, req quire.RequestInfo, response []byte) (*auth.Session, error) {
	if err := s.Available(); err != nil {
		return nil, err
	}
	now := s.now()
	key := addrKey(req.IP)
	addrAttempt, err := s.store.BeginLogin(ctx, req.IP, key, now, s.limits)
	if err != nil {
		return nil, err
	}
	// From here on, every return but the success leaves the attempt
	// counted against the address.
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, parseError(err)
	}
	sd, _, ok, err := s.take(ctx, quire.PasskeyLogin, parsed.Response.CollectedClientData.Challenge)
	if err != nil {
		return nil, err
	}
	if !ok {
		s.logger.Debug("passkey sign-in: no such ceremony", "addr", req.IP)
		return nil, errNotAccepted
	}
	pk, user, err := s.store.PasskeyByCredentialID(ctx, parsed.RawID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		s.logger.Debug("passkey sign-in: unknown credential", "addr", req.IP)
		return nil, errNotAccepted
	}
	if err != nil {
		return nil, err
	}
	userAttempt, err := s.store.BeginLogin(ctx, req.IP, user.Email, now, s.limits)
	if err != nil {
		return nil, err
	}
	if user.Status != quire.UserActive {
		return nil, s.failed(ctx, req, user, quire.LoginFailedDisabled, now)
	}
	var cred *webauthn.Credential
	if bytes.Equal(parsed.Response.UserHandle, []byte(user.ID)) {
		handler := func(rawID, userHandle []byte) (webauthn.User, error) {
			return webauthnUser{user: user, creds: []webauthn.Credential{credential(pk)}}, nil
		}
		_, cred, err = s.wa.ValidatePasskeyLogin(handler, sd, parsed)
	} else {
		err = protocol.ErrBadRequest.WithDetails("user handle is not the credential's user")
	}
	if err == nil && cred.Authenticator.CloneWarning {
		err = protocol.ErrBadRequest.WithDetails("sign count did not increase: a cloned authenticator?")
		s.logger.Warn("passkey sign-in refused: sign count did not increase", "user", user.ID, "passkey", pk.ID)
	}
	if err != nil {
		s.logger.Debug("passkey sign-in refused", "user", user.ID, "err", err)
		return nil, s.failed(ctx, req, user, quire.LoginFailedPasskey, now)
	}
	// This ceremony's own flag (not the credential's record, which keeps
	// the UV of earlier ceremonies): without user verification the
	// passkey proves only possession, one factor. It stands in for the
	// second factor of a user who has a TOTP on or whose role requires
	// one, so for them it must have verified the user.
	if !parsed.Response.AuthenticatorData.Flags.HasUserVerified() {
		if demanded, err := s.secondFactorDemanded(ctx, user); err != nil {
			return nil, err
		} else if demanded {
			s.logger.Info("passkey sign-in refused: no user verification for an account with a second factor", "user", user.ID, "passkey", pk.ID)
			for _, a := range []string{userAttempt, addrAttempt} {
				if err := s.store.WithdrawLoginAttempt(ctx, a); err != nil {
					return nil, err
				}
			}
			return nil, errNoUserVerification
		}
	}
	if err := s.store.LoginSucceeded(ctx, userAttempt, user.Email); err != nil {
		return nil, err
	}
	if err := s.store.LoginSucceeded(ctx, addrAttempt, key); err != nil {
		return nil, err
	}
	if err := s.store.PasskeyUsed(ctx, pk.ID, cred.Authenticator.SignCount, byte(cred.Flags.ProtocolValue()), now); err != nil {
		return nil, err
	}
	return s.auth.SignInVerified(ctx, req, user, Method)
}

// errNoUserVerification refuses a passkey that did not verify its user
// (no PIN, fingerprint or face) for an account that has a second factor.
// The signature verified: the person holds the user's passkey, so the
// message may say what is missing.
var errNoUserVerification = quire.Errorf(quire.EINVALIDCREDENTIALS,
	"This passkey did not verify you (with a PIN, fingerprint or face), and your account has a second factor: use a passkey that does, or sign in with your password and code.")

// secondFactorDemanded reports whether user has a TOTP on or a role that
// requires a second factor: a passkey sign-in then stands in for two
// factors.
func (s *Service) secondFactorDemanded(ctx context.Context, user *quire.User) (bool, error) {
	if user.Role.RequireMFA {
		return true, nil
	}
	return s.auth.MFA().Enabled(ctx, user.ID)
}

// failed counts a refused sign-in of user's email (the consecutive count
// and the lock) and records it, and the lock it may set, in the same
// transaction, as a refused password is. It returns the refusal to answer.
func (s *Service) failed(ctx context.Context, req quire.RequestInfo, user *quire.User, reason string, now time.Time) error {
	ev := quire.NewEvent(quire.ActionLoginFailed, now, nil, req).With("email", user.Email).With("reason", reason).
		With("method", Method).On(quire.TargetUser, user.ID, user.Name)
	locked := quire.NewEvent(quire.ActionLocked, now, nil, req).With("email", user.Email).
		With("until", now.Add(s.limits.LockDuration).Format(time.RFC3339)).On(quire.TargetUser, user.ID, user.Name)
	if err := s.recording(ev).LoginFailed(ctx, user.Email, now, s.limits, locked); err != nil {
		return err
	}
	return errNotAccepted
}
