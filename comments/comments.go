// Package comments holds the rules of comments on documents (product.md
// section 18): who may comment on, edit, delete, resolve, reopen and react
// to what, how a body and an anchor are checked, and what each change
// records in the audit log.
//
// A comment is seen exactly as its document is: the Service hands the
// store the actor's quire.Visibility (documents.VisibilityOf), and every
// comment of a document the actor cannot see, or of one in the trash, is
// NOT_FOUND, the same answer as an unknown id. A caller who can see a
// comment but may not make a change to it is refused with FORBIDDEN.
package comments

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"quire"
	"quire/anchor"
	"quire/documents"
	"quire/internal/lru"
)

// Store is what the Service reads: the comments, and the document they are
// on (its owner may delete them, its title names their events).
type Store interface {
	quire.CommentStore
	Document(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error)
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.CommentStore
}

// Config configures a Service.
type Config struct {
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time
}

// Service applies the rules of comments over a store.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	now       func() time.Time
	// versioned is the store when it offers comments versions, and cache
	// the windows of threads read through it (cache.go).
	versioned Versioned
	cache     *lru.Cache[windowKey, *cachedWindow]
}

// New returns the Service over store; quire.Store is one, with S =
// quire.Store.
func New[S Recorded](store interface {
	Store
	quire.Recorder[S]
}, cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	versioned, _ := any(store).(Versioned)
	return &Service{store: store, recording: recording, now: now, versioned: versioned, cache: newThreadCache()}
}

// Statuses of threads a list selects.
const (
	StatusOpen     = "open"
	StatusResolved = "resolved"
	StatusAll      = "all"
)

// Input is a new comment: a root (ParentID "") with or without an anchor,
// or a reply (ParentID set, no anchor).
type Input struct {
	Body     string
	ParentID string
	Anchor   *AnchorInput
}

// AnchorInput is the passage of the reading text a new root is about.
type AnchorInput struct {
	Quote, Prefix, Suffix string
}

// Page is one page of a document's threads, with its pagination.
type Page struct {
	Threads     []quire.Comment
	CurrentPage int
	Limit       int
	Total       int
	TotalPages  int
	HasMore     bool
}

// ListParams selects a page of a document's threads. The zero value is
// the first page of 20 open threads.
type ListParams struct {
	Status      string // StatusOpen ("" too), StatusResolved or StatusAll
	Page, Limit int    // 0: defaults (1, 20); Limit above 100 is clamped
}

func commentNotFound() error  { return quire.Errorf(quire.ENOTFOUND, "Comment not found") }
func documentNotFound() error { return quire.Errorf(quire.ENOTFOUND, "Document not found") }

// notFound answers every NOT_FOUND of a route as one, whatever its cause
// (an id of the wrong form, an unknown one, a document the caller cannot
// see or in the trash, one trashed meanwhile): the same body, so that a
// caller learns nothing from it.
func notFound(err error, answer func() error) error {
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return answer()
	}
	return err
}

var errReadOnlyToken = quire.Errorf(quire.EFORBIDDEN, "This API token may only read")

// canView refuses with FORBIDDEN an actor whose role lacks view on
// documents, before anything else: such a caller learns nothing about
// which documents or comments exist.
func canView(a quire.Actor) error { return documents.Require(a, quire.LevelView) }

// CanComment refuses with FORBIDDEN an actor who may not comment: a role
// without view on documents, or a personal API token of scope read. A
// comment, an edit, a reaction are writes, which a read token never makes,
// whatever the role; a viewer comments through a session or a write token.
func CanComment(a quire.Actor) error {
	if err := canView(a); err != nil {
		return err
	}
	if a.ViaToken() && a.Scope != quire.ScopeWrite {
		return errReadOnlyToken
	}
	return nil
}

// visibility is the one filter of what the actor may see: that of
// documents.
func visibility(a quire.Actor) quire.Visibility { return documents.VisibilityOf(a) }

// clock is the time of a change, at the contract's precision.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// event is the audit event of a change to comment id of document d: its
// target is the document (so that a webhook receives a document's events
// in order, comments among them), its details the two ids, never the body.
func event(action string, a quire.Actor, at time.Time, d *quire.Document, id string) *quire.Event {
	return quire.NewEvent(action, at, quire.EventActorOf(a), a.Request).
		On(quire.TargetDocument, d.ID, d.Title).
		With("document_id", d.ID).With("comment_id", id)
}

// Create adds a comment to the document documentID. The body is trimmed
// and must hold 1 to quire.MaxCommentBody characters; a reply names its
// parent and has no anchor; an anchor's quote, prefix and suffix are
// normalised (white space collapsed as in the reading text), the quote
// must hold 1 to quire.MaxQuote characters and the prefix and suffix are
// cut to the quire.MaxAnchorContext characters nearest the quote. The
// store finds the anchor in the document's reading text and enforces the
// limits of threads and replies.
func (s *Service) Create(ctx context.Context, a quire.Actor, documentID string, in Input) (*quire.Comment, error) {
	if err := CanComment(a); err != nil {
		return nil, err
	}
	if !quire.ValidID(documentID) {
		return nil, documentNotFound()
	}
	vis := visibility(a)
	d, err := s.store.Document(ctx, vis, documentID)
	if err != nil {
		return nil, notFound(err, documentNotFound)
	}
	errs := map[string]string{}
	body, msg := checkBody(in.Body)
	if msg != "" {
		errs["body"] = msg
	}
	c := &quire.Comment{ID: newID(), DocumentID: d.ID, AuthorID: a.User.ID, Body: body}
	if in.ParentID != "" {
		if !quire.ValidID(in.ParentID) {
			errs["parent_id"] = "must be the id of a comment of this document"
		}
		c.ParentID = in.ParentID
	}
	if in.Anchor != nil {
		if in.ParentID != "" {
			errs["anchor"] = "only a thread's first comment has an anchor, not a reply"
		} else if an, msg := checkAnchor(*in.Anchor); msg != "" {
			errs["anchor"] = msg
		} else {
			c.Anchor = an
		}
	}
	if len(errs) > 0 {
		return nil, quire.Invalid(errs)
	}
	ev := event(quire.ActionCommentCreated, a, s.clock(), d, c.ID)
	ev.Mentions, ev.MentionsIgnored = quire.Mentions(body) // notified by the fan-out (package notify)
	if err := s.recording(ev).CreateComment(ctx, vis, c, ev.At); err != nil {
		return nil, notFound(err, documentNotFound)
	}
	return c, nil
}

// List returns a page of the threads of the document documentID, each
// with its replies, in the store's order (quire.CommentStore.Threads).
func (s *Service) List(ctx context.Context, a quire.Actor, documentID string, p ListParams) (*Page, error) {
	if err := canView(a); err != nil {
		return nil, err
	}
	if !quire.ValidID(documentID) {
		return nil, documentNotFound()
	}
	switch p.Status {
	case "":
		p.Status = StatusOpen
	case StatusOpen, StatusResolved, StatusAll:
	default:
		return nil, quire.Invalid(map[string]string{"status": "must be open, resolved or all"})
	}
	offset, limit := window(p.Page, p.Limit)
	threads, total, err := s.threads(ctx, quire.CommentFilter{Visibility: visibility(a), DocumentID: documentID,
		ViewerID: a.User.ID, Status: p.Status, Offset: offset, Limit: limit})
	if err != nil {
		return nil, notFound(err, documentNotFound)
	}
	if threads == nil {
		threads = []quire.Comment{}
	}
	page := max(p.Page, 1)
	pages := (total + limit - 1) / limit
	return &Page{Threads: threads, CurrentPage: page, Limit: limit, Total: total, TotalPages: pages,
		HasMore: page < pages}, nil
}

// Window is a window of a document's threads as one reader reads it.
type Window struct {
	// Threads are the threads, Mine for the reader; nil when the window is
	// still at the version the caller knows (Service.Window).
	Threads []quire.Comment
	// Total is how many threads the status selects.
	Total int
	// Version, when not "", names what was read: two windows of the same
	// document, status, offset, limit and version hold the same threads,
	// but for their reactions (Reactions, Mine). It is "" when the store
	// keeps no comments versions.
	Version string
	// Reactions is the reactions in the window, by comment id (Mine
	// false; comments without any left out): also when Threads is nil.
	// The caller must not change it.
	Reactions map[string][]quire.Reaction
	// Mine is the reader's reactions in the window, by comment id: also
	// when Threads is nil, for a page that shows what it made of the
	// threads to each reader with their own reactions.
	Mine map[string][]string
}

// Window returns the threads offset to offset+limit of the document
// documentID that status selects (as List's Status), and how many it
// selects: List's order, visibility and answers in one read of the store,
// for a page that shows more threads at once than one page of List (limit
// at most quire.MaxThreads).
//
// A page may keep what it made of a window under its version (the web
// pages' column of threads does), for every reader, and name it as known:
// when the window is still at that version, its Threads are nil (the page
// has them) and Mine tells the reader's reactions.
func (s *Service) Window(ctx context.Context, a quire.Actor, documentID, status string, offset, limit int, known string) (Window, error) {
	if err := canView(a); err != nil {
		return Window{}, err
	}
	if !quire.ValidID(documentID) {
		return Window{}, documentNotFound()
	}
	switch status {
	case "":
		status = StatusOpen
	case StatusOpen, StatusResolved, StatusAll:
	default:
		return Window{}, quire.Invalid(map[string]string{"status": "must be open, resolved or all"})
	}
	f := quire.CommentFilter{Visibility: visibility(a), DocumentID: documentID, ViewerID: a.User.ID, Status: status,
		Offset: min(max(offset, 0), quire.MaxThreads), Limit: min(max(limit, 0), quire.MaxThreads)}
	var (
		w   Window
		err error
	)
	if s.versioned != nil {
		w, err = s.cachedWindow(ctx, s.versioned, f, known)
	} else {
		w.Threads, w.Total, err = s.store.Threads(ctx, f)
		w.Reactions, w.Mine = reactionsIn(w.Threads)
	}
	if err != nil {
		return Window{}, notFound(err, documentNotFound)
	}
	return w, nil
}

// reactionsIn is the reactions of threads by comment id, Mine false, and
// those marked Mine.
func reactionsIn(threads []quire.Comment) (map[string][]quire.Reaction, map[string][]string) {
	all, mine := map[string][]quire.Reaction{}, map[string][]string{}
	add := func(c *quire.Comment) {
		if len(c.Reactions) == 0 {
			return
		}
		counts := slices.Clone(c.Reactions)
		for i, r := range counts {
			if r.Mine {
				mine[c.ID] = append(mine[c.ID], r.Emoji)
			}
			counts[i].Mine = false
		}
		all[c.ID] = counts
	}
	for i := range threads {
		add(&threads[i])
		for j := range threads[i].Replies {
			add(&threads[i].Replies[j])
		}
	}
	return all, mine
}

// threads reads a window of a document's threads: through the cache of
// windows when the store offers comments versions (cache.go), from the
// store otherwise.
func (s *Service) threads(ctx context.Context, f quire.CommentFilter) ([]quire.Comment, int, error) {
	if s.versioned != nil {
		w, err := s.cachedWindow(ctx, s.versioned, f, "")
		return w.Threads, w.Total, err
	}
	return s.store.Threads(ctx, f)
}

// Thread returns the thread comment id belongs to (its root, with its
// replies and the reactions of all), resolved or not, as the actor reads
// it: NOT_FOUND as Get.
func (s *Service) Thread(ctx context.Context, a quire.Actor, id string) (*quire.Comment, error) {
	c, err := s.Get(ctx, a, id)
	if err != nil {
		return nil, err
	}
	root := c.ID
	if c.ParentID != "" {
		root = c.ParentID
	}
	threads, _, err := s.store.Threads(ctx, quire.CommentFilter{Visibility: visibility(a), DocumentID: c.DocumentID,
		ViewerID: a.User.ID, Status: StatusAll, ThreadID: root, Limit: 1})
	if err != nil {
		return nil, notFound(err, commentNotFound)
	}
	if len(threads) == 0 {
		return nil, commentNotFound()
	}
	return &threads[0], nil
}

// OpenThreads returns the number of open threads of each of the documents
// ids (only those with one at least), for a list of documents: ids must
// come from a list the store filtered by the actor's visibility already.
func (s *Service) OpenThreads(ctx context.Context, a quire.Actor, ids []string) (map[string]int, error) {
	if err := canView(a); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return map[string]int{}, nil
	}
	return s.store.OpenThreads(ctx, ids)
}

// Get returns the comment id, as its reader sees it (Reaction.Mine).
func (s *Service) Get(ctx context.Context, a quire.Actor, id string) (*quire.Comment, error) {
	if err := canView(a); err != nil {
		return nil, err
	}
	return s.comment(ctx, a, id)
}

// comment reads comment id for the actor: NOT_FOUND when it does not
// exist or is on a document the actor cannot see.
func (s *Service) comment(ctx context.Context, a quire.Actor, id string) (*quire.Comment, error) {
	if !quire.ValidID(id) {
		return nil, commentNotFound()
	}
	c, err := s.store.Comment(ctx, visibility(a), a.User.ID, id)
	return c, notFound(err, commentNotFound)
}

// target reads, for a change by the actor, comment id and its document:
// NOT_FOUND for a comment the actor cannot see, and for the placeholder a
// deleted root leaves (nothing of it is left to change but its thread).
func (s *Service) target(ctx context.Context, a quire.Actor, id string) (*quire.Comment, *quire.Document, error) {
	if err := CanComment(a); err != nil {
		return nil, nil, err
	}
	c, err := s.comment(ctx, a, id)
	if err != nil {
		return nil, nil, err
	}
	d, err := s.store.Document(ctx, visibility(a), c.DocumentID)
	if err != nil {
		return nil, nil, notFound(err, commentNotFound)
	}
	return c, d, nil
}

// Edit replaces the body of comment id; only its author may.
func (s *Service) Edit(ctx context.Context, a quire.Actor, id, body string) (*quire.Comment, error) {
	c, d, err := s.target(ctx, a, id)
	if err != nil {
		return nil, err
	}
	if c.Deleted {
		return nil, commentNotFound()
	}
	if c.AuthorID != a.User.ID {
		return nil, quire.Errorf(quire.EFORBIDDEN, "Only its author may edit a comment")
	}
	body, msg := checkBody(body)
	if msg != "" {
		return nil, quire.Invalid(map[string]string{"body": msg})
	}
	now := s.clock()
	c, err = s.recording(event(quire.ActionCommentUpdated, a, now, d, c.ID)).
		EditComment(ctx, visibility(a), c.ID, a.User.ID, body, now)
	return c, notFound(err, commentNotFound)
}

// Delete removes comment id: its author, the document's owner or an
// administrator may. A root that still has replies stays as a deleted
// placeholder (quire.CommentStore.DeleteComment).
func (s *Service) Delete(ctx context.Context, a quire.Actor, id string) error {
	c, d, err := s.target(ctx, a, id)
	if err != nil {
		return err
	}
	if c.Deleted {
		return commentNotFound()
	}
	if c.AuthorID != a.User.ID && d.OwnerID != a.User.ID && !a.User.Role.Admin {
		return quire.Errorf(quire.EFORBIDDEN, "Only its author, the document's owner or an administrator may delete a comment")
	}
	now := s.clock()
	err = s.recording(event(quire.ActionCommentDeleted, a, now, d, c.ID)).DeleteComment(ctx, visibility(a), c.ID, now)
	return notFound(err, commentNotFound)
}

// Resolve resolves the thread whose root is id (resolve true) or reopens
// it: its author, anyone with write on the document (a role with write
// who can see it) or an administrator may. A thread already in that state
// is returned as it is, and nothing is recorded.
func (s *Service) Resolve(ctx context.Context, a quire.Actor, id string, resolve bool) (*quire.Comment, error) {
	c, d, err := s.target(ctx, a, id)
	if err != nil {
		return nil, err
	}
	if c.ParentID != "" {
		return nil, quire.Invalid(map[string]string{"id": "is a reply: a thread is resolved and reopened by its first comment"})
	}
	if c.AuthorID != a.User.ID && !a.Can(quire.LevelWrite) && !a.User.Role.Admin {
		return nil, quire.Errorf(quire.EFORBIDDEN, "Only the thread's author, someone who may edit the document or an administrator may resolve or reopen it")
	}
	if resolve == !c.ResolvedAt.IsZero() {
		return c, nil
	}
	action := quire.ActionCommentReopened
	if resolve {
		action = quire.ActionCommentResolved
	}
	now := s.clock()
	c, err = s.recording(event(action, a, now, d, c.ID)).ResolveComment(ctx, visibility(a), c.ID, a.User.ID, resolve, now)
	return c, notFound(err, commentNotFound)
}

// React adds (on true) or takes back the actor's reaction emoji on
// comment id; both are idempotent and record no event. emoji is one of
// quire.Reactions (Emoji reads it).
func (s *Service) React(ctx context.Context, a quire.Actor, id, emoji string, on bool) (*quire.Comment, error) {
	if err := CanComment(a); err != nil {
		return nil, err
	}
	e, ok := Emoji(emoji)
	if !ok {
		return nil, quire.Invalid(map[string]string{"emoji": "must be one of " + strings.Join(quire.Reactions, " ")})
	}
	c, err := s.comment(ctx, a, id)
	if err != nil {
		return nil, err
	}
	if c.Deleted {
		return nil, commentNotFound()
	}
	c, err = s.store.React(ctx, visibility(a), c.ID, a.User.ID, e, on)
	return c, notFound(err, commentNotFound)
}

// Emoji returns the reaction of quire.Reactions that s names: exactly one
// of them, or one written without its emoji presentation selector (U+FE0F:
// "❤" for "❤️", as many keyboards and URL encoders write it).
func Emoji(s string) (string, bool) {
	for _, r := range quire.Reactions {
		if s == r || s == strings.TrimSuffix(r, "\uFE0F") {
			return r, true
		}
	}
	return "", false
}

// checkBody trims body and checks its length in characters; it returns
// the body to store, or why it is refused.
func checkBody(body string) (string, string) {
	body = strings.TrimSpace(body)
	switch {
	case !utf8.ValidString(body) || strings.ContainsRune(body, 0):
		return "", "must be text without NUL characters"
	case body == "":
		return "", "is required"
	case utf8.RuneCountInString(body) > quire.MaxCommentBody:
		return "", "must be at most " + strconv.Itoa(quire.MaxCommentBody) + " characters"
	}
	return body, ""
}

// checkAnchor normalises an anchor as the reading text is written (runs
// of white space collapsed; the quote trimmed, while the prefix and the
// suffix keep the space next to the quote, which is text they match) and
// checks it; it returns the anchor to store, or why it is refused.
func checkAnchor(in AnchorInput) (*quire.Anchor, string) {
	for _, s := range []string{in.Quote, in.Prefix, in.Suffix} {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return nil, "must be text without NUL characters"
		}
	}
	quote := strings.TrimSpace(anchor.Normalize(in.Quote))
	switch n := utf8.RuneCountInString(quote); {
	case n == 0:
		return nil, "quote is required: the text the comment is about"
	case n > quire.MaxQuote:
		return nil, "quote must be at most " + strconv.Itoa(quire.MaxQuote) + " characters"
	}
	return &quire.Anchor{
		Quote:  quote,
		Prefix: lastRunes(anchor.Normalize(in.Prefix), quire.MaxAnchorContext),
		Suffix: firstRunes(anchor.Normalize(in.Suffix), quire.MaxAnchorContext),
	}, ""
}

// firstRunes is s cut to its first n characters.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// lastRunes is s cut to its last n characters.
func lastRunes(s string, n int) string {
	i := len(s)
	for ; i > 0 && n > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// window turns a page and a limit (0: defaults) into the store's offset
// and limit, as the lists of documents do.
func window(page, limit int) (offset, lim int) {
	page = max(page, 1)
	if limit < 1 {
		limit = documents.DefaultLimit
	}
	lim = min(limit, documents.MaxLimit)
	// A thread count past MaxThreads is never reached: every page past
	// it is empty, and no page number overflows the offset.
	offset = min(page-1, quire.MaxThreads) * lim
	return offset, lim
}

// newID is the id of a new comment, known before the write so that its
// event names it.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
