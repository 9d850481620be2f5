package auth

import (
	"context"

	"quire"
)

// MethodSSO is the method of a sign-in through the identity provider.
const MethodSSO = "sso"

var errLocalSignInDisabled = quire.Errorf(quire.EPASSWORDLOGINDISABLED,
	"Sign-in with a passkey is turned off here: sign in with single sign-on.")

// SignInVerified opens an ordinary session (same token, same lifetime,
// same revocation as a password sign-in) for user, whom a caller has
// verified by another means than a password: method names it in the
// auth.login event ("passkey"). The caller has judged the user's status
// and the sign-in limits; it must not call this for a user that is not
// active.
func (s *Service) SignInVerified(ctx context.Context, req quire.RequestInfo, user *quire.User, method string) (*Session, error) {
	if user.Status != quire.UserActive {
		return nil, errInvalidCredentials
	}
	// Under --oidc-only every sign-in but the identity provider's is an
	// administrator's way in: a passkey must not let someone the provider
	// has removed go on signing in.
	if s.cfg.PasswordAdminsOnly && method != MethodSSO && !user.Role.Admin {
		return nil, errLocalSignInDisabled
	}
	return s.startSession(ctx, req, user, "", method, s.now())
}
