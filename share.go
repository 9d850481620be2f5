package quire

import (
	"context"
	"time"
)

// ESHARINGDISABLED refuses a new share link while an administrator has
// switched sharing off (403, product.md section 21).
const ESHARINGDISABLED = "SHARING_DISABLED"

// SettingSharing is the setting of the switch of share links: "off" turns
// every share off; absent or anything else leaves them on.
const SettingSharing = "sharing"

// Share is a read-only link to one document for people without an account
// (product.md section 21). The token itself is never stored: TokenHash
// finds the share, and TokenSealed (the token sealed with the server's
// secret key, bound to the share's id) lets whoever may manage it copy the
// link again.
type Share struct {
	ID            string
	DocumentID    string
	DocumentTitle string // filled by the reads
	OwnerID       string // the document's owner, filled by the reads
	CreatedByID   string
	CreatedByName string // filled by the reads
	TokenHash     []byte // SHA-256 of the token
	TokenSealed   []byte
	CreatedAt     time.Time
	ExpiresAt     time.Time // zero: never
	Views         int64
	LastViewedAt  time.Time // zero: never viewed
}

// ShareViews is what a node counted of one share's views since it last
// wrote them: how many, and the latest.
type ShareViews struct {
	Count int64
	Last  time.Time
}

// MaxSharesPerDocument is how many shares a document has at most, so that
// its list (which its owner sees whole, to revoke any) stays short: a
// creation past it is LIMIT_REACHED. Expired ones count until revoked.
const MaxSharesPerDocument = 100

// MaxSharesOf is how many of a document's working shares
// ShareStore.WorkingSharesOf reads: a shared page that links to it costs
// the same however many shares an editor made of it.
const MaxSharesOf = 3

// ShareStore keeps share links. A revoked share is deleted; a purged
// document takes its shares with it. The rules of who may create, see and
// revoke a share live in package share.
type ShareStore interface {
	// CreateShare inserts sh (DocumentID, CreatedByID, TokenHash,
	// TokenSealed, ExpiresAt) at now, filling CreatedAt, under sh.ID (a new
	// id when ""). ENOTFOUND, and nothing written, unless the document is
	// outside the trash and visible to vis, checked in the insert.
	CreateShare(ctx context.Context, vis Visibility, sh *Share, now time.Time) error
	// DocumentShares lists the shares of a document, oldest first; with
	// createdBy set, only those that user created.
	DocumentShares(ctx context.Context, documentID, createdBy string) ([]Share, error)
	// ShareByID returns one share (ENOTFOUND).
	ShareByID(ctx context.Context, id string) (*Share, error)
	// DeleteShare revokes a share: it is gone (ENOTFOUND when it was not
	// there).
	DeleteShare(ctx context.Context, id string) error
	// Shares returns one page of every share, newest first (ties by id),
	// and how many there are.
	Shares(ctx context.Context, offset, limit int) ([]Share, int, error)
	// WorkingShare returns the share whose TokenHash is hash and its
	// creator, when at now it works as far as one query can tell: it is
	// not expired, its document is outside the trash, sharing is not
	// switched off (SettingSharing) and its creator is active. Whether the
	// creator still sees the document is the caller's to check, with the
	// creator's visibility. ENOTFOUND otherwise, the same for every cause.
	WorkingShare(ctx context.Context, hash []byte, now time.Time) (*Share, *User, error)
	// WorkingSharesOf returns, for those of the documents ids that vis
	// may see, their shares that work at now as WorkingShare tells, with
	// their creators, oldest first: at most MaxSharesOf a document, the
	// oldest ones, whatever the number of its shares.
	WorkingSharesOf(ctx context.Context, vis Visibility, ids []string, now time.Time) ([]Share, []User, error)
	// AddShareViews adds the counted views to each share (one UPDATE per
	// share; LastViewedAt never moves back). Unknown shares are skipped.
	AddShareViews(ctx context.Context, views map[string]ShareViews) error
}
