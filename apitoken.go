package quire

import "time"

// TokenScope is what a personal API token may do on the documents API:
// read, or also write (never more than its user's role allows).
type TokenScope string

const (
	ScopeRead  TokenScope = "read"
	ScopeWrite TokenScope = "write"
)

// APITokenPrefix starts every personal API token, so that secret scanners
// can find a leaked one.
const APITokenPrefix = "quire_pat_"

// APIToken is a personal API token. The secret itself is never stored: only
// TokenHash (SHA-256 of the secret).
type APIToken struct {
	ID         string
	UserID     string
	Name       string
	Scope      TokenScope
	TokenHash  []byte
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastUsedAt time.Time // zero until first used; written at most once a minute
	RevokedAt  time.Time // zero while valid
	IP         string    // client address at creation
	UserAgent  string    // User-Agent at creation, bounded
}
