package quire

import (
	"context"
	"time"
)

// The second factor (product.md section 11): a TOTP authenticator with its
// recovery codes, and the short-lived token that carries a sign-in from its
// correct password to its second step.

// TOTP is a user's authenticator (RFC 6238). Secret is sealed with the
// server's secret key (package secretkey): a store never holds it in clear.
type TOTP struct {
	UserID      string
	Secret      []byte // sealed
	CreatedAt   time.Time
	ConfirmedAt time.Time // zero while the set-up is not confirmed
	// LastStep is the time step of the last code accepted: a code of that
	// step or an earlier one is refused, so no code is accepted twice.
	LastStep int64
}

// RecoveryCode is one single-use recovery code, stored only as a hash.
type RecoveryCode struct {
	ID       string
	CodeHash []byte
}

// MFAToken stands for a correct password waiting for its second step. The
// token itself is never stored: only TokenHash (SHA-256).
type MFAToken struct {
	ID        string
	UserID    string
	TokenHash []byte
	Timezone  string // sent with the password, stored on the user when the sign-in completes
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero while unused
	Tries     int       // codes tried with it
}

// MFAStore keeps second factors and the tokens of two-step sign-ins.
type MFAStore interface {
	// HasSecondFactor reports whether the user has a second factor: the
	// one place that says so (a role's requireMfa, the mfa of the admin
	// list): a confirmed TOTP or a passkey.
	HasSecondFactor(ctx context.Context, userID string) (bool, error)
	// TOTP returns the user's TOTP, confirmed or not (ENOTFOUND).
	TOTP(ctx context.Context, userID string) (*TOTP, error)
	// BeginTOTP stores t as the user's TOTP waiting for confirmation,
	// replacing one that waits. MFA_ALREADY_ENABLED when the user's TOTP
	// is confirmed.
	BeginTOTP(ctx context.Context, t *TOTP) error
	// ConfirmTOTP, in one transaction: confirms the user's waiting TOTP
	// when its sealed secret is still secret (a set-up begun again
	// meanwhile is not confirmed by a code of the earlier one), records
	// step as its last step, and replaces the user's recovery codes by
	// codeHashes. ENOTFOUND when no such TOTP waits.
	ConfirmTOTP(ctx context.Context, userID string, secret []byte, step int64, codeHashes [][]byte, now time.Time) error
	// UseTOTPStep records step as accepted, atomically, when the user's
	// TOTP is confirmed and step is later than its last step, and reports
	// whether it did: of two requests with the same code one wins.
	UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error)
	// RecoveryCodes returns the user's unused recovery codes.
	RecoveryCodes(ctx context.Context, userID string) ([]RecoveryCode, error)
	// UseRecoveryCode marks one unused recovery code of the user used and
	// reports whether it was unused.
	UseRecoveryCode(ctx context.Context, userID, codeID string, now time.Time) (bool, error)
	// DeleteTOTP removes the user's TOTP (confirmed or waiting), its
	// recovery codes and its unused mfa tokens, and reports whether a
	// confirmed TOTP was removed; when none was, the events recorded with
	// it are not written.
	DeleteTOTP(ctx context.Context, userID string) (bool, error)

	// CreateMFAToken inserts t, filling t.ID, and deletes the user's
	// tokens that are used or expired at t.CreatedAt.
	CreateMFAToken(ctx context.Context, t *MFAToken) error
	// MFATokenByHash returns the token with that hash (ENOTFOUND).
	MFATokenByHash(ctx context.Context, hash []byte) (*MFAToken, error)
	// TryMFAToken counts one try of the token, atomically, when it is
	// unused, not expired at now, and has had fewer than max tries, and
	// reports whether it did.
	TryMFAToken(ctx context.Context, id string, now time.Time, max int) (bool, error)
	// UseMFAToken marks the token used when it is not yet, and reports
	// whether it did: a token completes one sign-in.
	UseMFAToken(ctx context.Context, id string, now time.Time) (bool, error)
}

// SettingSecretKey holds the secret key generated at the first start when
// none is given (--secret-key), so that every node shares it.
const SettingSecretKey = "secret_key"
