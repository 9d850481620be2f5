package quire

import (
	"context"
	"encoding/json"
	"time"
)

// Live editing (product.md section 20). A document being edited live is its
// stored content, which includes the document's first Base live changes,
// followed by the live changes stored after them. Each change is numbered:
// the count of the document's changes once it is applied, from 1. A
// change numbered N+1 is stored once per document, whichever node
// accepted it: the database is the arbiter, and a node that loses goes on
// from the table.

// Bounds of the live changes.
const (
	// MaxLiveChange is the size in bytes of one change's JSON: a message
	// of the live connection holds at most 64 KiB.
	MaxLiveChange = 64 << 10
	// MaxLiveBatch is the number of changes one AppendLive stores.
	MaxLiveBatch = 100
	// MaxLiveClientID is the size in bytes of a change's client id.
	MaxLiveClientID = 64
	// MaxLivePage is the number of changes LiveChangesSince and LiveState
	// return at most, whatever the limit asked.
	MaxLivePage = 1000
	// MaxLivePageBytes bounds the JSON of the changes of one page: a page
	// ends before the change that would take it beyond, and holds one
	// change at least.
	MaxLivePageBytes = 1 << 20
)

// LiveChange is one stored change of a document's live text. The store
// keeps Change as the editor's change algebra wrote it (package
// live/changeset): opaque JSON, given back byte for byte.
type LiveChange struct {
	// Seq is the change's number: the document's count once it is applied.
	Seq       int64
	Change    json.RawMessage
	ClientID  string // the editor (one browser tab) that made it
	UserID    string // who made it: the authors of the version that holds it
	CreatedAt time.Time
	// ClientSeq is the client's own number of the change (the push's
	// sequence number), 0 when the client sends none. AppendLive keeps the
	// last one of each client (LiveClient); it is not read back with the
	// change.
	ClientSeq int64
}

// LiveClient is the last change a client (one editor, by its client id)
// had accepted on a document: its own number (LiveChange.ClientSeq) and
// its number in the document (LiveChange.Seq). A client that reconnects
// after its changes were trimmed is sent the whole text and this number,
// and drops the changes it pushed up to it: nothing is applied twice.
type LiveClient struct {
	Seq int64 // the client's number; 0: none accepted (or none kept)
	At  int64 // the document's count once that change was applied
}

// LiveClientTTL is how long a client's LiveClient is kept after its last
// accepted change (SaveLive deletes older ones; a purge, all of them).
const LiveClientTTL = 24 * time.Hour

// LiveState is what a node rebuilds a document's live text from: its
// stored content, which includes the changes up to Base, and the changes
// after Base (the first page of them), read in one snapshot.
type LiveState struct {
	DocumentID  string
	ContentType string
	Content     string
	Version     int
	UpdatedAt   time.Time
	// Base is the number of live changes the content includes.
	Base int64
	// Seq is the document's count: the number of its last stored change,
	// Base when none is stored after Base.
	Seq int64
	// Changes are the changes after Base, ascending, at most the limit
	// asked; when fewer than Seq-Base, LiveChangesSince gives the rest.
	Changes []LiveChange
}

// LivePresent is someone a node has on a document (presence across
// nodes): Editing when they hold an editing seat there.
type LivePresent struct {
	UserID  string
	Name    string // read by LivePresence; SetLivePresence ignores it
	Editing bool
}

// MaxLivePresence bounds the people one node lists on one document.
const MaxLivePresence = 1000

// ErrLiveBehind refuses an AppendLive whose first number is not the one
// after the document's count (another node's change took it first, or the
// caller's count is stale), and a SaveLive of fewer changes than the
// document's content already includes: the caller catches up from the
// table (LiveChangesSince, or LiveState) and tries again. It is returned
// as is: compare with errors.Is.
var ErrLiveBehind = &Error{Code: ECONFLICT, Message: "The live text has changed: catch up and try again"}

// ErrLiveRepeated refuses an AppendLive of changes numbered by their client
// (LiveChange.ClientSeq) at or below the last number accepted from that
// client on the document: they were stored already (their confirmation
// was lost), and storing them again would apply them twice. It is
// returned as is: compare with errors.Is.
var ErrLiveRepeated = &Error{Code: ECONFLICT, Message: "These live changes were accepted already"}

// ErrLiveTrimmed refuses a LiveChangesSince from a count whose next changes
// are no longer stored: they are in the stored content (trimmed by
// TrimLive, or superseded by a write of the content); the caller rebuilds
// from LiveState. It is returned as is: compare with errors.Is.
var ErrLiveTrimmed = &Error{Code: ECONFLICT, Message: "These live changes are in the stored content now: start again from it"}

// LiveStore keeps the live changes of documents (product.md section 20).
// Every method taking vis finds a document only when it exists, is not in
// the trash and vis sees it, else ENOTFOUND; who may write it is the
// service's to decide. A purge deletes a document's live changes with it;
// a trash keeps them for its restore.
//
// A write of a document's content that is not a SaveLive (a save through
// the API or the form, a version restore, an import) of a document that
// was ever opened live (a live server marks it, with a SaveLive at count
// 0, when it loads it) is applied to its live text as one change, in that
// write's transaction: the change from the live text (the content it
// replaces followed by the changes after Base) to the new content is
// stored as the next change (client "quire", by the writer), and Base
// becomes its number, so that no stored change is superseded and every
// node's editors receive the write as an update. The changes up to the
// Base as it was before the write are deleted with it. Only when the live
// text cannot be rebuilt (a stored change does not apply) does the write
// supersede the changes stored until then: Base becomes the count, and
// LiveClientKey is the key of a client's numbers (the rows AppendLive
// keeps): its person's id and its client id. A client id is the client's
// to choose and everyone on the document sees it, so keyed by it alone,
// anyone could take another person's id and number a change past all of
// theirs, which then refused every push of theirs as a repeat.
func LiveClientKey(userID, clientID string) string { return userID + "/" + clientID }

// the stored content is again the whole live text at that count.
type LiveStore interface {
	// AppendLive stores changes, in one transaction at now, as the
	// document's changes numbered after+1, after+2, ..., setting their Seq
	// and CreatedAt (ClientID, UserID and Change are the caller's). It
	// stores them only on top of the document's count: when after is not
	// the count it returns ErrLiveBehind and stores nothing; of two
	// AppendLive with the same after, on any nodes, exactly one succeeds.
	// VALIDATION_ERROR names changes (none, more than MaxLiveBatch, one
	// that is not JSON in UTF-8 or is over MaxLiveChange bytes), client_id
	// (over MaxLiveClientID bytes, not UTF-8, or holding U+0000) or
	// user_id (not a user).
	//
	// Changes numbered by their client (ClientSeq above 0: all of one
	// client id, ascending, else VALIDATION_ERROR on client_seq) are
	// stored only when the first number is above the last one accepted
	// from that client on the document (ErrLiveRepeated otherwise, and
	// nothing stored), and the last of them becomes that client's
	// LiveClient, in the same transaction.
	AppendLive(ctx context.Context, vis Visibility, id string, after int64, changes []LiveChange, now time.Time) error
	// LiveChangesSince returns the document's changes numbered after
	// after, ascending, at most limit (at most MaxLivePage, and
	// MaxLivePageBytes of JSON): none when after is the count or beyond
	// it. ErrLiveTrimmed when the change
	// after+1 is no longer stored.
	LiveChangesSince(ctx context.Context, vis Visibility, id string, after int64, limit int) ([]LiveChange, error)
	// LiveState reads the document's content, Base, count and the first
	// page of changes after Base (as LiveChangesSince's) in one snapshot.
	LiveState(ctx context.Context, vis Visibility, id string, limit int) (*LiveState, error)
	// SaveLive writes content, the live text at count upto, as the
	// document's content, and upto as its Base, in one transaction: the
	// content as UpdateDocument writes it (guard, byUserID, now, a new
	// version when the content changed; none when it did not, and Base
	// still moves). A new version records its authors: the people whose
	// changes after the Base and up to upto it holds (VersionAuthors). It
	// returns the document as written. ErrLiveBehind
	// when the document's Base is already beyond upto (a save of more
	// changes came first); VALIDATION_ERROR on upto when it is beyond the
	// count; DOCUMENT_CONFLICT as UpdateDocument. In the same transaction
	// it deletes the document's LiveClient rows whose last change is
	// older than LiveClientTTL before now.
	SaveLive(ctx context.Context, vis Visibility, id string, guard time.Time, byUserID string, upto int64, content string,
		now time.Time) (*Document, error)
	// LiveClient returns the last change of client clientID of the person
	// userID that AppendLive accepted on document id (the zero LiveClient
	// when none is kept). A client's numbers are its person's own
	// (LiveClientKey): everyone on the document sees its client id.
	LiveClient(ctx context.Context, id, userID, clientID string) (LiveClient, error)
	// LiveAuthors returns the ids of the people whose changes are numbered
	// after after and up to upto, in the order of their first change
	// there, at most MaxLivePage: the authors of the version that saves
	// them.
	LiveAuthors(ctx context.Context, id string, after, upto int64) ([]string, error)
	// VersionAuthors returns the authors of the document's versions
	// numbered from to to that SaveLive made (everyone whose changes a
	// version holds, in the order of their first change there, as named
	// now), by version number; versions not made from the live text are
	// not in the map.
	VersionAuthors(ctx context.Context, vis Visibility, id string, from, to int) (map[int][]Named, error)
	// SetLivePresence replaces the people node lists on document id with
	// people (none: the node has nobody there), seen at now. At most
	// MaxLivePresence are kept.
	SetLivePresence(ctx context.Context, id, node string, people []LivePresent, now time.Time) error
	// LivePresence returns the people the nodes other than node listed on
	// document id and saw at since or later, in each node's order, the
	// nodes in the order of their names, with their names as they are now
	// (a person may be listed by several nodes).
	LivePresence(ctx context.Context, id, node string, since time.Time) ([]LivePresent, error)
	// TrimLive deletes the document's changes numbered up to upto that
	// its content includes (never one after Base), the oldest first and
	// at most limit of them, and returns how many it deleted: a caller
	// trims a long history in bounded steps until it gets 0. The count
	// never goes back: the next change is numbered after it still.
	TrimLive(ctx context.Context, id string, upto int64, limit int) (int, error)
}
