package quire

import (
	"context"
	"time"
)

// Single sign-on with OpenID Connect (product.md section 12). Package sso
// holds the rules; a store keeps who is linked to which account of a
// provider, and the sign-ins begun at the provider and not yet back.

// Identity links an account at an OpenID provider, named by its issuer and
// subject ("sub"), to a quire user.
type Identity struct {
	Issuer    string
	Subject   string
	UserID    string
	Email     string // the provider's email when the link was made, for the record
	CreatedAt time.Time
}

// SSOFlow is a sign-in sent to the provider and not yet back. It is found
// by the SHA-256 of its state parameter (the state itself is never stored),
// taken once, and lives a few minutes.
type SSOFlow struct {
	StateHash []byte
	Nonce     string // the nonce the ID token must carry
	Verifier  string // the PKCE code verifier
	Next      string // the page to open after signing in, "" for the default
	CreatedAt time.Time
	ExpiresAt time.Time
}

// SSOStore keeps identities and flows of single sign-on. Every node of a
// database sees the same flows, so that the provider may send the browser
// back to any of them.
type SSOStore interface {
	// CreateSSOFlow inserts f and deletes, on the way, some flows that
	// expired before f.CreatedAt (so that abandoned sign-ins do not pile
	// up) and, when max > 0 and max flows or more are kept still, the
	// oldest of them (by expiry, the expired first), so that at most max
	// are kept. ECONFLICT when a flow has the same state hash.
	CreateSSOFlow(ctx context.Context, f *SSOFlow, max int) error
	// TakeSSOFlow deletes the flow with that state hash and returns it when
	// it had not expired at now. ENOTFOUND when there is none or it had
	// expired. Of parallel calls with the same hash, at most one gets it.
	TakeSSOFlow(ctx context.Context, stateHash []byte, now time.Time) (*SSOFlow, error)
	// IdentityUser returns the user linked to (issuer, subject), with role
	// and department as they are now. ENOTFOUND when none is.
	IdentityUser(ctx context.Context, issuer, subject string) (*User, error)
	// LinkIdentity inserts id. ECONFLICT when (issuer, subject) is linked
	// already; ENOTFOUND when no user has id.UserID.
	LinkIdentity(ctx context.Context, id *Identity) error
	// CreateUserWithIdentity creates u as CreateUser does and links id to
	// it (filling id.UserID) in the same transaction: ECONFLICT with the
	// field email when the email is taken, ECONFLICT without fields when
	// (issuer, subject) is linked already, EVALIDATION as CreateUser.
	CreateUserWithIdentity(ctx context.Context, u *User, id *Identity) error
	// AcceptInvitationWithIdentity, in one transaction, makes the invited
	// user userID active, marks every unused one-time token of the user
	// used (the invitation's link is void) and, when id is not nil, links
	// id to it (filling id.UserID). ENOTFOUND when no user has userID;
	// ECONFLICT when the user is not invited (any more) or (issuer,
	// subject) is linked already.
	AcceptInvitationWithIdentity(ctx context.Context, userID string, id *Identity, now time.Time) error
}
