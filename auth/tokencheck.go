package auth

import (
	"context"
	"time"

	"quire"
)

// CheckResetToken reports whether ResetPassword would accept token now,
// without using it: nil when it would, INVALID_TOKEN when the token is
// unknown, used or expired, or its account is no longer active. The page a
// mailed link opens asks first, so that a dead link says so before anyone
// types a password.
//
// It answers "valid or not" and nothing else (no email, no name, not which
// of the reasons). It is no faster an oracle than ResetPassword, which
// answers the same for any password, and it needs no limit of its own:
// tokens are 256 bits from crypto/rand, looked up by their SHA-256, so
// guessing one by asking is hopeless at any rate.
func (s *Service) CheckResetToken(ctx context.Context, token string) error {
	_, err := s.usableToken(ctx, quire.PurposeReset, quire.UserActive, token, s.now())
	return err
}

// CheckSetupToken is CheckResetToken for an invitation's setup link: nil
// when SetupPassword would accept token now (its user is still invited).
func (s *Service) CheckSetupToken(ctx context.Context, token string) error {
	_, err := s.usableToken(ctx, quire.PurposeSetup, quire.UserInvited, token, s.now())
	return err
}

// usableToken returns the user of a token for purpose that is neither used
// nor expired at now and whose user has status; INVALID_TOKEN otherwise.
// These are the checks redeem makes before it looks at the password.
func (s *Service) usableToken(ctx context.Context, purpose quire.TokenPurpose, status quire.UserStatus, token string, now time.Time) (*quire.User, error) {
	if token == "" || len(token) > maxTokenLength {
		return nil, errInvalidToken
	}
	t, err := s.store.TokenByHash(ctx, purpose, hashToken(token))
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, errInvalidToken
	}
	if err != nil {
		return nil, err
	}
	if !t.UsedAt.IsZero() || !now.Before(t.ExpiresAt) {
		return nil, errInvalidToken
	}
	u, err := s.store.UserByID(ctx, t.UserID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, errInvalidToken
	}
	if err != nil {
		return nil, err
	}
	if u.Status != status {
		return nil, errInvalidToken
	}
	return u, nil
}
