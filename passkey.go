package quire

import (
	"context"
	"time"
)

// Actions and target of the passkey events (product.md sections 8, 11).
// auth.login records a passkey sign-in with "method": "passkey" in its
// details; a refused assertion is auth.login_failed with reason passkey.
const (
	ActionPasskeyRegistered = "passkey.registered"
	ActionPasskeyRenamed    = "passkey.renamed"
	ActionPasskeyRemoved    = "passkey.removed"
	TargetPasskey           = "passkey"
	LoginFailedPasskey      = "passkey"
)

// Passkey is a WebAuthn credential registered by a user: the authenticator
// keeps the private key, quire the public one.
type Passkey struct {
	ID           string // quire's id (UUID v7), in URLs
	UserID       string
	CredentialID []byte // the authenticator's id of the credential, unique
	Name         string
	PublicKey    []byte // COSE key
	SignCount    uint32
	Transports   []string // "internal", "usb", "hybrid", ...
	AAGUID       []byte
	// Flags are the credential's flags as the authenticator last reported
	// them (WebAuthn's UP, UV, BE, BS bits): an assertion whose backup
	// eligibility differs is refused.
	Flags      byte
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never used to sign in
}

// PasskeyCeremony is the state of one WebAuthn ceremony (a registration or
// a sign-in) between its begin and its finish: single-use, short-lived,
// kept in the database so that the finish may reach another node.
type PasskeyCeremony struct {
	// ChallengeHash is the SHA-256 of the challenge: the finish names its
	// ceremony by the challenge the authenticator signed.
	ChallengeHash []byte
	Kind          string // PasskeyRegister or PasskeyLogin
	UserID        string // the user registering; "" for a sign-in
	Addr          string // the client address that began it
	Data          []byte // the WebAuthn library's session data
	ExpiresAt     time.Time
}

// Kinds of PasskeyCeremony.
const (
	PasskeyRegister = "register"
	PasskeyLogin    = "login"
)

// PasskeyStore keeps passkeys and their ceremonies.
type PasskeyStore interface {
	// CreatePasskey inserts p, filling p.ID. ECONFLICT when a passkey with
	// that credential id exists (of any user).
	CreatePasskey(ctx context.Context, p *Passkey) error
	// Passkeys lists the user's passkeys, oldest first (ties by id).
	Passkeys(ctx context.Context, userID string) ([]Passkey, error)
	// PasskeyByCredentialID returns the passkey with that credential id and
	// its user (role and department as they are now). ENOTFOUND when none.
	PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*Passkey, *User, error)
	// RenamePasskey renames one passkey of the user. ENOTFOUND when the user
	// has no passkey with that id.
	RenamePasskey(ctx context.Context, userID, id, name string) error
	// DeletePasskey removes one passkey of the user (ENOTFOUND as above).
	DeletePasskey(ctx context.Context, userID, id string) error
	// PasskeyUsed records a sign-in with the passkey: its sign count and
	// flags as the authenticator reported them, and the time. ENOTFOUND for
	// an unknown passkey.
	PasskeyUsed(ctx context.Context, id string, signCount uint32, flags byte, at time.Time) error
	// HasPasskey reports whether the user has at least one passkey (a
	// second factor for a role's requireMfa).
	HasPasskey(ctx context.Context, userID string) (bool, error)

	// BeginPasskeyCeremony stores c. It deletes ceremonies expired at now
	// (a bounded batch) on the way and, when c.Addr already holds perAddr
	// or more ceremonies not expired at now, the ones of c.Addr closest to
	// expiry, so that the address holds at most perAddr: nobody fills the
	// table, and nobody behind a shared address is locked out by others'
	// begins (an old ceremony of theirs may need beginning again).
	BeginPasskeyCeremony(ctx context.Context, c *PasskeyCeremony, now time.Time, perAddr int) error
	// TakePasskeyCeremony deletes and returns the ceremony of kind with
	// that challenge hash, in one atomic step, so that of two finishes of
	// one ceremony (two nodes) one at most gets it. ENOTFOUND when there
	// is none of that kind, or it expired at now (deleted all the same).
	TakePasskeyCeremony(ctx context.Context, kind string, challengeHash []byte, now time.Time) (*PasskeyCeremony, error)
}
