package quire

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Error codes of the contract (section 3). The code is for machines; the
// message is safe to show to the client.
const (
	EINVALIDJSON          = "INVALID_JSON"
	EVALIDATION           = "VALIDATION_ERROR"
	EINVALIDTOKEN         = "INVALID_TOKEN"
	EWEAKPASSWORD         = "WEAK_PASSWORD"
	EINVALIDCURRENT       = "INVALID_CURRENT_PASSWORD"
	EINVALIDCREDENTIALS   = "INVALID_CREDENTIALS"
	EUNAUTHORIZED         = "UNAUTHORIZED"
	EFORBIDDEN            = "FORBIDDEN"
	ECROSSORIGIN          = "CROSS_ORIGIN"
	ENOTFOUND             = "NOT_FOUND"
	EMETHODNOTALLOWED     = "METHOD_NOT_ALLOWED"
	EDOCUMENTCONFLICT     = "DOCUMENT_CONFLICT"
	EFOLDERNOTEMPTY       = "FOLDER_NOT_EMPTY"
	ELASTADMIN            = "LAST_ADMIN"
	EINUSE                = "IN_USE"      // a department or project still used (product.md section 9)
	ENOTINVITED           = "NOT_INVITED" // resending the invitation of a user who is not invited
	EPAYLOADTOOLARGE      = "PAYLOAD_TOO_LARGE"
	EUNSUPPORTEDMEDIATYPE = "UNSUPPORTED_MEDIA_TYPE"
	ETOOMANYATTEMPTS      = "TOO_MANY_ATTEMPTS"
	EACCOUNTLOCKED        = "ACCOUNT_LOCKED"
	EUNAVAILABLE          = "UNAVAILABLE"
	EINTERNAL             = "INTERNAL"

	// Idempotency-Key answers (product section 17).
	EIDEMPOTENCYKEYREUSED  = "IDEMPOTENCY_KEY_REUSED"
	EIDEMPOTENCYINPROGRESS = "IDEMPOTENCY_IN_PROGRESS"

	// EPASSWORDLOGINDISABLED refuses a password sign-in under --oidc-only
	// to anyone but an administrator (product.md section 12).
	EPASSWORDLOGINDISABLED = "PASSWORD_LOGIN_DISABLED"
	// Second factor (product.md section 11).
	EMFASETUPREQUIRED = "MFA_SETUP_REQUIRED"  // the role requires a second factor the user has not set up
	EINVALIDMFACODE   = "INVALID_MFA_CODE"    // a wrong or reused code at the second step
	EINVALIDMFATOKEN  = "INVALID_MFA_TOKEN"   // an unknown, expired, used or exhausted mfaToken
	EMFAENABLED       = "MFA_ALREADY_ENABLED" // setting up a TOTP while one is on

	// ECONFLICT is a uniqueness violation in a store (an email or a name
	// already taken). The API answers it as a VALIDATION_ERROR naming the
	// field; the CLI prints its message.
	ECONFLICT = "CONFLICT"
)

// Error is the one error type of quire. An error that is not (and does not
// wrap) an *Error is internal: it is logged and shown as "Internal server error".
type Error struct {
	Code    string
	Message string
	// Fields names each invalid field for VALIDATION_ERROR.
	Fields map[string]string
	// RetryAfter is sent as the Retry-After header (429, 503, and 409
	// IDEMPOTENCY_IN_PROGRESS).
	RetryAfter time.Duration
	// UpdatedAt and Document carry the current state for DOCUMENT_CONFLICT.
	UpdatedAt time.Time
	Document  *Document
}

// Error reads as a person would write it: the code, the message, and each
// invalid field followed by its reason, in the order of their names
// ("VALIDATION_ERROR: Validation failed: email must be an email address;
// role is not a known role").
func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return e.Code + ": " + e.Message
	}
	names := make([]string, 0, len(e.Fields))
	for name := range e.Fields {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(e.Code + ": " + e.Message + ": ")
	for i, name := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(name + " " + e.Fields[name])
	}
	return b.String()
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a VALIDATION_ERROR naming the given fields.
func Invalid(fields map[string]string) *Error {
	return &Error{Code: EVALIDATION, Message: "Validation failed", Fields: fields}
}

// LastAdmin is the refusal of a change that would leave no active
// administrator (product.md section 9).
func LastAdmin() *Error {
	return &Error{Code: ELASTADMIN, Message: "This would leave no active administrator"}
}

// InUse is the refusal to delete a department or project that users or
// documents still use.
func InUse(what string) *Error {
	return &Error{Code: EINUSE, Message: "The " + what + " is still in use"}
}

// ErrorCode returns the code of err, or EINTERNAL when err carries none.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal server error"
}

// ErrUnavailable is wrapped by store errors when the database cannot be
// reached; the API answers them 503 UNAVAILABLE.
var ErrUnavailable = errors.New("database unavailable")

// InvalidToken is the refusal of a one-time link (an invitation, a password
// reset) that is unknown, used or expired: one answer for all three, so that
// a link tells nothing about why it fails. auth and its store both give it.
func InvalidToken() *Error {
	return Errorf(EINVALIDTOKEN, "The link is invalid or has expired")
}
