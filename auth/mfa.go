package auth

import (
	"context"
	"time"

	"quire"
	"quire/mfa"
)

// The two-step sign-in (product.md section 11). A correct password for a
// user with a TOTP on answers an mfaToken instead of a session; the second
// step (LoginMFA) trades it and a code for the session. The mfaToken is
// single-use, lives mfaTokenTTL and takes at most mfaTokenTries codes.
// Each code is a sign-in attempt of the user's email under the same limits
// and locks as a password: a wrong one is a failed sign-in (reason mfa).
//
// A correct password whose second step has not come yet is neither a
// failure nor a success: it withdraws the failure BeginLogin recorded in
// advance but does not reset the lock's consecutive count, so that someone
// who knows the password cannot keep resetting it while guessing codes.

const (
	mfaTokenTTL   = 5 * time.Minute
	mfaTokenTries = 5
)

var (
	errInvalidMFAToken = quire.Errorf(quire.EINVALIDMFATOKEN, "The sign-in has expired: sign in again with your password")
	errInvalidMFACode  = quire.Errorf(quire.EINVALIDMFACODE, "The code is not right")
)

// MFA returns the second factor service the sign-in uses.
func (s *Service) MFA() *mfa.Service { return s.cfg.MFA }

// challenge answers a correct password of a user with a TOTP on: the
// attempt is withdrawn (not a failure), a stale hash replaced, and an
// mfaToken issued, which carries the timezone to the second step.
func (s *Service) challenge(ctx context.Context, attempt string, user *quire.User, rehash, timezone string, now time.Time) (*Session, error) {
	if err := s.store.WithdrawLoginAttempt(ctx, attempt); err != nil {
		return nil, err
	}
	if rehash != "" {
		if err := s.store.ReplacePasswordHash(ctx, user.ID, user.PasswordHash, rehash); err != nil {
			s.logger.Warn("store rehashed password", "user", user.ID, "err", err)
		}
	}
	token := newToken()
	t := &quire.MFAToken{UserID: user.ID, TokenHash: hashToken(token), Timezone: timezone,
		CreatedAt: now, ExpiresAt: now.Add(mfaTokenTTL)}
	if err := s.store.CreateMFAToken(ctx, t); err != nil {
		return nil, err
	}
	return &Session{User: user, MFAToken: token, ExpiresAt: t.ExpiresAt}, nil
}

// LoginMFA is the second step of a sign-in: mfaToken from Login and a code
// of the user's authenticator or one of its recovery codes. It answers as
// Login does. An unknown, expired, used or exhausted mfaToken (or one whose
// user is no longer active or has no TOTP on any more) is
// INVALID_MFA_TOKEN and counts nothing; past the limit or the lock of the
// email the answer is 429 and the code is not checked; a wrong or reused
// code is INVALID_MFA_CODE, a failed sign-in, and the mfaToken stays usable
// for its remaining tries.
func (s *Service) LoginMFA(ctx context.Context, req quire.RequestInfo, mfaToken, code string) (*Session, error) {
	if mfaToken == "" || len(mfaToken) > maxTokenLength {
		return nil, errInvalidMFAToken
	}
	now := s.now()
	t, err := s.store.MFATokenByHash(ctx, hashToken(mfaToken))
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, errInvalidMFAToken
	}
	if err != nil {
		return nil, err
	}
	if !t.UsedAt.IsZero() || !now.Before(t.ExpiresAt) || t.Tries >= mfaTokenTries {
		return nil, errInvalidMFAToken
	}
	user, err := s.store.UserByID(ctx, t.UserID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, errInvalidMFAToken
	}
	if err != nil {
		return nil, err
	}
	if on, err := s.cfg.MFA.Enabled(ctx, user.ID); err != nil {
		return nil, err
	} else if !on || user.Status != quire.UserActive {
		return nil, errInvalidMFAToken
	}
	attempt, err := s.store.BeginLogin(ctx, req.IP, user.Email, now, s.cfg.Limits)
	if err != nil {
		return nil, err
	}
	tried, err := s.store.TryMFAToken(ctx, t.ID, now, mfaTokenTries)
	if err == nil && !tried {
		err = errInvalidMFAToken // used or exhausted by a request beside this one
	}
	if err != nil {
		if werr := s.store.WithdrawLoginAttempt(ctx, attempt); werr != nil {
			s.logger.Warn("withdraw login attempt", "err", werr)
		}
		return nil, err
	}
	ok, err := s.cfg.MFA.Check(ctx, user.ID, code)
	if err != nil {
		if werr := s.store.WithdrawLoginAttempt(ctx, attempt); werr != nil {
			s.logger.Warn("withdraw login attempt", "err", werr)
		}
		return nil, err
	}
	if !ok {
		if err := s.recordFailure(ctx, req, user.Email, user, now, quire.LoginFailedMFA); err != nil {
			return nil, err
		}
		return nil, errInvalidMFACode
	}
	if used, err := s.store.UseMFAToken(ctx, t.ID, now); err != nil {
		return nil, err
	} else if !used {
		// Another request completed this sign-in a moment ago.
		if err := s.store.WithdrawLoginAttempt(ctx, attempt); err != nil {
			return nil, err
		}
		return nil, errInvalidMFAToken
	}
	if err := s.store.LoginSucceeded(ctx, attempt, user.Email); err != nil {
		return nil, err
	}
	return s.startSession(ctx, req, user, t.Timezone, "", now)
}

// DisableTOTP switches the actor's TOTP off (its recovery codes with it)
// once its password is checked as ChangePassword checks the current one:
// limits and locks apply, and a wrong password is INVALID_CURRENT_PASSWORD
// counted as a failed sign-in. Records auth.mfa_disabled when a TOTP was
// on; switching off what is not on is no error. An actor with an API token
// is FORBIDDEN.
func (s *Service) DisableTOTP(ctx context.Context, actor quire.Actor, password string) error {
	if err := RequireSession(actor); err != nil {
		return err
	}
	if _, err := s.checkCurrentPassword(ctx, actor, actor.Request.IP, password, s.now()); err != nil {
		return err
	}
	ev := quire.NewEvent(quire.ActionMFADisabled, s.now(), quire.EventActorOf(actor), actor.Request).
		On(quire.TargetUser, actor.User.ID, actor.User.Name).With("method", "totp")
	_, err := s.cfg.MFA.Remove(ctx, actor.User.ID, ev)
	return err
}
