package quire

import (
	"strings"
	"time"
)

// Level is a role's level on a permission key such as docs.documents.
type Level int

const (
	LevelNone Level = iota
	LevelView
	LevelWrite
)

// ParseLevel reads "none", "view" or "write".
func ParseLevel(s string) (Level, bool) {
	switch s {
	case "none":
		return LevelNone, true
	case "view":
		return LevelView, true
	case "write":
		return LevelWrite, true
	}
	return LevelNone, false
}

func (l Level) String() string {
	switch l {
	case LevelView:
		return "view"
	case LevelWrite:
		return "write"
	}
	return "none"
}

// PermDocuments is the permission key of the documents API.
const PermDocuments = "docs.documents"

// Role is a named set of permissions. Admin roles see every document.
type Role struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Docs  Level  `json:"-"`
	Admin bool   `json:"admin"`
	// RequireMFA: users of the role without a second factor may sign in,
	// but do nothing else until they set one up (package mfa).
	RequireMFA bool `json:"-"`
}

// UserStatus is where an account stands.
type UserStatus string

const (
	UserActive   UserStatus = "active"
	UserInvited  UserStatus = "invited" // created, password not yet set
	UserDisabled UserStatus = "disabled"
)

// User is an account. PasswordHash is empty for invited users.
type User struct {
	ID             string
	Email          string // stored normalised: trimmed, lower case
	Name           string
	Role           Role
	DepartmentID   string // "" when none
	DepartmentName string
	Timezone       string // IANA name, "" when unknown
	Status         UserStatus
	PasswordHash   string
	// MustChangePassword is set on the first administrator that quire serve
	// creates with a printed password: the web application lets it do
	// nothing else until it chose its own. Any new password clears it.
	MustChangePassword bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// AdminUser is a user as the administration sees it: whether its email is
// locked now and when it last signed in (zero for never).
type AdminUser struct {
	User
	Locked      bool
	LastLoginAt time.Time
	MFA         bool // has a second factor (MFAStore.HasSecondFactor)
}

// NormalizeEmail is the form in which emails are stored and compared.
func NormalizeEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// Department groups users; department visibility is by department.
type Department struct {
	ID   string
	Name string
}

// Project groups users across departments; project visibility is by membership.
type Project struct {
	ID        string
	Name      string
	MemberIDs []string // ascending
}

// Session is a signed-in token. The token itself is never stored: only
// TokenHash (SHA-256 of the token).
type Session struct {
	ID         string
	UserID     string
	TokenHash  []byte
	CreatedAt  time.Time
	ExpiresAt  time.Time // absolute lifetime
	LastUsedAt time.Time // for the idle timeout; written at most once a minute
	RevokedAt  time.Time // zero while valid
	IP         string    // client address at sign-in
	UserAgent  string    // User-Agent at sign-in, bounded
}

// Actor is who is calling: the user as of this request (role and department
// read fresh) and the session or the personal API token they used (exactly
// one of SessionID and TokenID is set for a signed-in caller). Project
// membership is not carried here (it would cost a query on every request):
// ask the store with UserStore.IsProjectMember where it matters.
type Actor struct {
	User      User
	SessionID string
	TokenID   string
	Scope     TokenScope // the token's scope; "" for a session
	// Request is where the call came from, recorded with every change the
	// actor makes.
	Request RequestInfo
}

// ViaToken reports whether the actor called with a personal API token.
func (a Actor) ViaToken() bool { return a.TokenID != "" }

// Can reports whether the actor's role holds at least level on documents,
// capped by the scope of the token it called with: a read token never
// writes, whatever the role.
func (a Actor) Can(level Level) bool {
	if a.ViaToken() && a.Scope != ScopeWrite && level > LevelView {
		return false
	}
	return a.User.Role.Docs >= level
}

// TokenPurpose says what a one-time mailed token is for.
type TokenPurpose string

const (
	PurposeReset TokenPurpose = "reset"
	PurposeSetup TokenPurpose = "setup"
)

// OneTimeToken is a reset or setup token, stored only as a hash.
type OneTimeToken struct {
	ID        string
	UserID    string
	Purpose   TokenPurpose
	TokenHash []byte
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time
}

// Mail is one message in the outbox.
type Mail struct {
	ID        string
	To        string
	Subject   string
	Text      string
	HTML      string
	CreatedAt time.Time
	Attempts  int
	NextTryAt time.Time
	SentAt    time.Time
	LastError string
	// Unsubscribe is the one-click unsubscribe address of a mail about
	// notifications (RFC 8058: List-Unsubscribe and List-Unsubscribe-Post);
	// "" for the account mails, which a person cannot switch off.
	Unsubscribe string
}
