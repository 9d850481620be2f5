package auth

import (
	"context"

	"quire"
)

// Single sign-on (product.md section 12): package sso proves who someone is
// at the identity provider and finds or creates their user; the session it
// then opens is an ordinary one (SignInVerified, signin.go).

var errPasswordLoginDisabled = quire.Errorf(quire.EPASSWORDLOGINDISABLED,
	"Sign-in with a password is turned off here: sign in with single sign-on.")

// passwordAllowed refuses, under PasswordAdminsOnly, the password sign-in
// of a user who is not an administrator. It is asked only once the
// password proved right, so that the answer tells nothing to whoever does
// not know the password; the attempt is withdrawn (a right password is no
// failure and counts towards no lock).
func (s *Service) passwordAllowed(ctx context.Context, attempt, email string, user *quire.User) error {
	if !s.cfg.PasswordAdminsOnly || user.Role.Admin {
		return nil
	}
	if err := s.store.LoginSucceeded(ctx, attempt, email); err != nil {
		return err
	}
	return errPasswordLoginDisabled
}

var errPasskeyOnly = quire.Errorf(quire.EPASSWORDLOGINDISABLED,
	"Your role requires a second factor, and yours is a passkey: sign in with your passkey.")

// passkeyOnly refuses the password sign-in of a user whose role requires a
// second factor and whose only one is a passkey (no TOTP to ask for): the
// password alone would open a full session, the factor never used. Asked,
// like passwordAllowed, only once the password proved right, and the
// attempt is withdrawn. A user without any second factor signs in, and
// every request but setting one up answers MFA_SETUP_REQUIRED (package mfa).
func (s *Service) passkeyOnly(ctx context.Context, attempt, email string, user *quire.User) error {
	if !user.Role.RequireMFA {
		return nil
	}
	err := s.cfg.MFA.SetupRequired(ctx, quire.Actor{User: *user})
	if quire.ErrorCode(err) == quire.EMFASETUPREQUIRED {
		return nil // no second factor at all
	}
	if err != nil {
		return err
	}
	if err := s.store.LoginSucceeded(ctx, attempt, email); err != nil {
		return err
	}
	return errPasskeyOnly
}

// errAccountDisabled refuses a sign-in through the identity provider to a
// user an administrator disabled: they proved who they are, so they may
// learn why.
var (
	errAccountDisabled = quire.Errorf(quire.EFORBIDDEN, "This account is disabled. Ask an administrator to enable it.")
	errNotSetUp        = quire.Errorf(quire.EFORBIDDEN, "This account is not set up yet: open the link of your invitation first.")
)

// SignInAllowed refuses, with FORBIDDEN and a message for the person, a
// user who may not open a session whatever proves who they are: disabled,
// or invited and not set up.
func SignInAllowed(user *quire.User) error {
	switch user.Status {
	case quire.UserActive:
		return nil
	case quire.UserInvited:
		return errNotSetUp
	}
	return errAccountDisabled
}
