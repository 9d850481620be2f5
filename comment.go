package quire

import (
	"context"
	"time"
)

// Limits of comments (product.md section 18).
const (
	MaxCommentBody   = 10000 // characters of a body after trimming
	MaxQuote         = 1000  // characters of an anchor's quote
	MaxAnchorContext = 64    // characters of an anchor's prefix and of its suffix
	MaxThreads       = 2000  // threads (root comments) per document
	MaxReplies       = 500   // replies per thread
)

// ELIMITREACHED answers a write beyond a fixed count (409): a document's
// 2,000 threads, a thread's 500 replies.
const ELIMITREACHED = "LIMIT_REACHED"

// Reactions is the fixed set of reactions, in the order they are shown.
var Reactions = []string{"👍", "👎", "😄", "🎉", "😕", "❤️", "🚀", "👀"}

// Comment states of an anchor.
const (
	AnchorAttached = "attached"
	AnchorOutdated = "outdated"
)

// Comment is a comment on a document: a root (ParentID "") that opens a
// thread, or a reply in a root's thread (one level).
type Comment struct {
	ID         string
	DocumentID string
	ParentID   string // "" for a root
	AuthorID   string
	AuthorName string
	Body       string // "" once Deleted
	// Anchor is the text a root is about; nil for a page comment and for
	// every reply.
	Anchor    *Anchor
	CreatedAt time.Time
	UpdatedAt time.Time
	Edited    bool
	// Deleted marks a root removed while it still had replies: it stays,
	// with an empty body, until they are gone.
	Deleted bool
	// ResolvedAt is zero while the thread is open.
	ResolvedAt     time.Time
	ResolvedByID   string
	ResolvedByName string
	Reactions      []Reaction // in the order of Reactions; only those with a count
	Replies        []Comment  // a root's replies, oldest first, when read as a thread
}

// Anchor ties a root comment to a passage of the document's reading text
// (its rendered content's text with runs of white space collapsed to one
// space).
type Anchor struct {
	Quote  string
	Prefix string
	Suffix string
	// State is AnchorAttached while the quote is found in the current
	// text, AnchorOutdated once a change of the content removed it.
	State string
	// Position is the byte offset of the quote in the current reading text
	// while attached (the order of threads); -1 when outdated.
	Position int
}

// Reaction is how many people reacted to a comment with Emoji, and whether
// the reader is one of them.
type Reaction struct {
	Emoji string
	Count int
	Mine  bool
}

// CommentsVersion is the version of a document's comments, for a reader
// that keeps them in memory: All moves at every write of its comments and
// at every save that moves their anchors; Threads is All as it was after
// the last of those that was not a reaction; Reacted is the comment of the
// last write when that was a reaction ("" otherwise).
type CommentsVersion struct {
	All, Threads int64
	Reacted      string
}

// CommentFilter selects a page of a document's threads.
type CommentFilter struct {
	Visibility Visibility
	DocumentID string
	ViewerID   string // who reads: Reaction.Mine
	Status     string // "open", "resolved" or "all"
	// ThreadID, when set, selects only the thread whose root it is.
	ThreadID string
	Offset   int
	Limit    int
}

// CommentStore keeps comments. Every operation sees a comment only through
// its document: visible to vis and out of the trash, else NOT_FOUND, the
// same answer as for an unknown id.
type CommentStore interface {
	// CreateComment adds c (DocumentID, ParentID, AuthorID, Body, Anchor
	// with Quote, Prefix, Suffix) at now, and fills ID (when "", as
	// CreateDocument: a service that names the comment in its event
	// chooses it), AuthorName, times
	// and the anchor's State and Position. A ParentID that is not a comment
	// of the same document is VALIDATION_ERROR on parent_id; a reply to a
	// reply joins its root's thread (ParentID becomes the root). A reply
	// has no anchor. The anchor is found in the document's reading text
	// inside the transaction, else VALIDATION_ERROR on anchor. A document's
	// MaxThreads-th thread and a thread's MaxReplies-th reply are the last:
	// beyond, LIMIT_REACHED. A Deleted root still holds its thread's place;
	// a root that goes (DeleteComment) frees it.
	CreateComment(ctx context.Context, vis Visibility, c *Comment, now time.Time) error
	// Comment returns comment id with its reactions (Mine for viewerID).
	Comment(ctx context.Context, vis Visibility, viewerID, id string) (*Comment, error)
	// Threads returns a page of a document's threads with their replies,
	// anchored threads in the order of their quotes in the current text,
	// then outdated ones, then page comments, each group oldest first; and
	// the number of threads the filter selects.
	Threads(ctx context.Context, f CommentFilter) ([]Comment, int, error)
	// EditComment sets the body of comment id, written by authorID, and
	// marks it edited.
	EditComment(ctx context.Context, vis Visibility, id, authorID, body string, now time.Time) (*Comment, error)
	// DeleteComment removes comment id. A root that still has replies stays
	// as Deleted with an empty body; a Deleted root goes with its last reply.
	DeleteComment(ctx context.Context, vis Visibility, id string, now time.Time) error
	// ResolveComment resolves (resolve true, by byUserID) or reopens root
	// id; a reply is VALIDATION_ERROR on id.
	ResolveComment(ctx context.Context, vis Visibility, id, byUserID string, resolve bool, now time.Time) (*Comment, error)
	// React adds (on true) or takes back userID's reaction emoji on comment
	// id; both are idempotent.
	React(ctx context.Context, vis Visibility, id, userID, emoji string, on bool) (*Comment, error)
	// OpenThreads returns the number of open threads of each of ids (only
	// those with at least one); the ids come from a list filtered by
	// visibility already.
	OpenThreads(ctx context.Context, ids []string) (map[string]int, error)
}
