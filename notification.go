package quire

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// Kinds of notification (product.md section 19).
const (
	NotifyMention         = "mention"          // a new mention of the reader in a comment or added by a save
	NotifyComment         = "comment"          // a new thread on a document the reader watches
	NotifyReply           = "reply"            // a reply in a thread the reader started or replied to
	NotifyResolved        = "resolved"         // a thread the reader started, resolved by someone else
	NotifyDocumentUpdated = "document_updated" // a watched document changed; one unread per document
)

// Email settings of notifications.
const (
	NotifyEmailInstant = "instant" // mentions and replies, within two minutes (the default)
	NotifyEmailDigest  = "digest"  // one mail a day at 08:00 in the person's time zone
	NotifyEmailOff     = "off"
)

// Bounds of notifications.
const (
	// MaxMentions is how many distinct people one comment or one save
	// notifies at most: the first MaxMentions distinct mentions in the text
	// count, the rest are ignored (and logged).
	MaxMentions = 50
	// MaxNotificationIDs is how many ids one mark-as-read names at most.
	MaxNotificationIDs = 100
	// MaxExcerpt is the length in characters of a notification's excerpt.
	MaxExcerpt = 200
)

// NotifyActions are the audit actions whose events are queued, in their
// transaction, for the notifications worker to fan out.
var NotifyActions = []string{ActionDocumentCreated, ActionDocumentUpdated, ActionVersionRestored,
	ActionCommentCreated, ActionCommentResolved}

// Notifies reports whether events of action are fanned out to notifications.
func Notifies(action string) bool {
	for _, a := range NotifyActions {
		if a == action {
			return true
		}
	}
	return false
}

// A mention is [@Name](mention:USER-ID), its Name at most maxMentionName
// characters, none of them "]" or a line break.
const (
	mentionMark    = "](mention:"
	maxMentionName = 200
	uuidLen        = 36
)

// eachMention calls fn with the id of each mention of text, in order, as
// the expression
//
//	\[@[^\]\n]{0,200}\]\(mention:([0-9a-fA-F]{8}-...-[0-9a-fA-F]{12})\)
//
// would find them (non-overlapping, leftmost first), in one pass: each
// mentionMark is checked for its id after it and a "[@" before it. Go's
// expression is linear in the text too, but it kept a hundred partial
// matches alive at every byte of "[@[@[@...": 3.4 s for 2 MB, inside the
// save's transaction. Here the look back from a mark stops at a "]" at the
// latest, and every mark starts with one, so no byte is looked at more
// than twice.
func eachMention(text string, fn func(id string)) {
	from := 0 // the end of the last mention: mentions do not overlap
	for i := 0; ; {
		j := strings.Index(text[i:], mentionMark)
		if j < 0 {
			return
		}
		at := i + j // its "]"
		id := at + len(mentionMark)
		i = at + 1
		if id+uuidLen >= len(text) || text[id+uuidLen] != ')' || !isUUID(text[id:id+uuidLen]) || !endsWithName(text[from:at]) {
			continue
		}
		fn(text[id : id+uuidLen])
		from = id + uuidLen + 1
		i = from
	}
}

// endsWithName reports whether s ends with "[@" and a name: at most
// maxMentionName characters, none of them "]" or a line break.
func endsWithName(s string) bool {
	for k, n := len(s), 0; ; n++ {
		if strings.HasSuffix(s[:k], "[@") {
			return true
		}
		r, size := utf8.DecodeLastRuneInString(s[:k])
		if size == 0 || r == ']' || r == '\n' || n == maxMentionName {
			return false
		}
		k -= size
	}
}

// isUUID reports whether s is a UUID in its text form, in either case.
func isUUID(s string) bool { return len(s) == uuidLen && ValidID(strings.ToLower(s)) }

// Mentions returns the distinct user ids text mentions, in the order of
// their first mention, at most MaxMentions of them, and how many more
// distinct ones it ignored.
func Mentions(text string) (ids []string, ignored int) { return mentionsExcept(text, nil) }

// AddedMentions returns the people after mentions that before did not (a
// save notifies a mention once, when it is added), bounded as Mentions.
func AddedMentions(before, after string) (ids []string, ignored int) {
	had := map[string]bool{}
	eachMention(before, func(id string) { had[strings.ToLower(id)] = true })
	return mentionsExcept(after, had)
}

// mentionsExcept is Mentions of text leaving out the ids of had.
func mentionsExcept(text string, had map[string]bool) (ids []string, ignored int) {
	seen := map[string]bool{}
	eachMention(text, func(id string) {
		id = strings.ToLower(id)
		if had[id] || seen[id] {
			return
		}
		seen[id] = true
		if len(ids) == MaxMentions {
			ignored++
			return
		}
		ids = append(ids, id)
	})
	return ids, ignored
}

// Notification is one thing a person hears about.
type Notification struct {
	ID            string
	UserID        string
	Kind          string
	DocumentID    string
	DocumentTitle string
	CommentID     string // "" for document_updated and a mention in a document
	ActorID       string
	ActorName     string
	Excerpt       string
	CreatedAt     time.Time
	ReadAt        time.Time // zero while unread
}

// NotificationFilter selects a page of a person's notifications, newest
// first (by CreatedAt, then ID).
type NotificationFilter struct {
	// Visibility is the reader's: a notification about a document it does
	// not see now (or one in the trash) is neither listed nor counted.
	Visibility Visibility
	UserID     string
	UnreadOnly bool
	// Before is the id of the last notification of the previous page:
	// only older ones. VALIDATION_ERROR on before when it is not one of
	// the reader's listed notifications.
	Before string
	Limit  int
}

// Watched is what a person watches, by name.
type Watched struct {
	Documents []Named // ordered by title, at most MaxWatched
	Folders   []Named // ordered by name, at most MaxWatched
	// More is true when either list was cut at MaxWatched: others can
	// make a person watch documents without end (a mention makes its
	// person watch the document).
	More bool
}

// MaxWatched is how many documents, and how many folders, Watching lists.
const MaxWatched = 500

// Named is a record's id and name (a document's title).
type Named struct {
	ID   string
	Name string
}

// NotificationStore keeps watches, notifications and the queue of events
// to fan out. The events of NotifyActions are queued in the transaction
// that records them (Event.Mentions with them); FanOut turns them into
// notifications later.
type NotificationStore interface {
	// Watch makes userID watch (on) or stop watching the document or the
	// folder id (folder true); both are idempotent. The caller has checked
	// that userID may see it; an unknown id is NOT_FOUND.
	Watch(ctx context.Context, userID string, folder bool, id string, on bool, now time.Time) error
	// Watching returns what userID watches: the documents vis sees (out of
	// the trash) and the folders, the first MaxWatched of each.
	Watching(ctx context.Context, vis Visibility, userID string) (*Watched, error)
	// FanOut claims up to n queued events, oldest first, and writes their
	// notifications and automatic watches in the claim's transaction: each
	// event is fanned out once across nodes. It returns how many events it
	// took, and the mentions each ignored beyond MaxMentions.
	FanOut(ctx context.Context, now time.Time, n int) (events, ignored int, err error)
	// Notifications returns a page of f.UserID's notifications and the
	// number of its unread ones, both only about documents f.Visibility
	// sees now.
	Notifications(ctx context.Context, f NotificationFilter) ([]Notification, int, error)
	// MarkRead marks ids (or, with all, every one) of userID's
	// notifications read at now, and returns the number still unread that
	// vis sees. An id that is not one of userID's notifications about a
	// document vis sees is VALIDATION_ERROR on ids, and nothing is marked.
	MarkRead(ctx context.Context, vis Visibility, userID string, ids []string, all bool, now time.Time) (int, error)
	// Mentionable returns up to limit active users who can see document id
	// whose name (or, not shown, email) starts a word with prefix q, by
	// name. The caller has checked that it sees the document.
	Mentionable(ctx context.Context, documentID, q string, limit int) ([]Named, error)
	// NotificationEmail returns userID's email setting (NotifyEmailInstant
	// when never set).
	NotificationEmail(ctx context.Context, userID string) (string, error)
	// SetNotificationEmail sets it; NOT_FOUND for an unknown user. Setting
	// digest starts the days of digests at now: the first goes at the next
	// digest time.
	SetNotificationEmail(ctx context.Context, userID, email string, now time.Time) error
	// MailNotifications queues the notification mails that are due (m),
	// each in the outbox in the transaction that claims it, so that a mail
	// goes once across nodes: one instant mail per person with every
	// pending mention and reply when the oldest is from m.InstantBefore or
	// earlier, and one digest per person whose digest time has come, with
	// at most MaxDigest unread notifications. Only notifications about
	// documents the person sees at that moment, and only to people whose
	// setting is still that kind of mail, are mailed. It returns how many
	// mails it queued.
	MailNotifications(ctx context.Context, now time.Time, m NotificationMailer) (int, error)
}

// MaxDigest is how many notifications one digest lists at most (the
// newest).
const MaxDigest = 50

// NotificationMailer is what MailNotifications needs of the rules.
type NotificationMailer struct {
	InstantBefore time.Time
	// DigestDue is the latest digest time at or before now of a person in
	// the IANA zone timezone ("" for UTC).
	DigestDue func(timezone string) time.Time
	// Render builds the mail to u of ns (newest first); it does no I/O.
	Render func(u *User, digest bool, ns []Notification) (*Mail, error)
	// Limit bounds the people of one call, for each kind.
	Limit int
}
