package web

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/comments"
	"quire/documents"
)

// Comments are the threads beside a document's text (product.md section
// 18). The document page lists a page of them (commentsOf); every action is
// a plain form posted to /documents/{id}/comments..., answered with a 303
// back to the page at the thread, so that nothing needs JavaScript;
// static/comments.js adds the highlights of the quotes in the text and the
// "Comment" button of a selection.

// OpenThreadCounter counts the open threads of documents
// (quire.CommentStore.OpenThreads): the documents list asks it once per page,
// for documents the reader's list has shown already, so it filters nothing.
type OpenThreadCounter interface {
	OpenThreads(ctx context.Context, ids []string) (map[string]int, error)
}

// threadsShown is how many threads the document page lists at once (two
// pages of the service's largest); the others are on further pages of its
// comments.
const threadsShown = 2 * documents.MaxLimit

// commentFilters are the values of the page's comments parameter, first
// the default.
var commentFilters = []struct{ Value, Label string }{
	{"open", "Open"}, {"resolved", "Resolved"}, {"all", "All"},
}

// commentsView is the comments column of the document page. It and the
// views of its threads hold strings ready to show, in flat structs: the
// template does no more per comment than print them (a page holds up to
// threadsShown threads, and a template's field lookups through embedded
// structs and its function calls cost more than the rest of the page).
type commentsView struct {
	DocID   string
	Status  string // open, resolved or all
	Filters []filterLink
	// column is the threads written out (comments_html.go): those on the
	// text, in the order of their quotes, then those on the whole page;
	// and the outdated, whose quote the text lost, shown apart.
	// ThreadsHTML and OutdatedHTML mark where each goes ("" when there
	// are none); they are written straight into the response
	// (viewPage.streamed).
	column                    *column
	reader                    *columnReader
	ThreadsHTML, OutdatedHTML template.HTML
	Total                     int // threads the filter selects
	Prev, Next                string
	NewKey                    string // the idempotency key of the new comment form
	// Error is why the last form was refused. New is the new comment
	// form's text and error after a refusal, with the quote it had.
	Error                 string
	New                   draft
	AnchorError           string
	Quote, Prefix, Suffix string
}

// draft is a comment form's text and error after a refusal.
type draft struct {
	Body  string
	Error string // the body's error
	Here  bool   // the refused form is this one
}

// commentRefusal is a refused comment form, to show again: which form
// (refusedNew, "reply-" or "edit-" and a comment id), its text and its
// errors.
type commentRefusal struct {
	Form, Body, Message   string
	Fields                map[string]string
	Quote, Prefix, Suffix string
}

const refusedNew = "new"

// draftFor is the draft of form when it is the refused one.
func (r *commentRefusal) draftFor(form string) draft {
	return r.draftOf(form, "")
}

// draftOf is draftFor(prefix + id), without building that name for every
// comment of a page.
func (r *commentRefusal) draftOf(prefix, id string) draft {
	if r == nil || len(r.Form) != len(prefix)+len(id) || !strings.HasPrefix(r.Form, prefix) || r.Form[len(prefix):] != id {
		return draft{}
	}
	return draft{Body: r.Body, Error: r.Fields["body"], Here: true}
}

// filterLink is one choice of the status filter.
type filterLink struct {
	Value, Label, URL string
	Current           bool
}

// threadView is a root comment with its replies, as the page shows it.
type threadView struct {
	Root    commentView
	Replies []commentView
	// Anchored threads have their quote and its context (for
	// comments.js) and its state.
	Anchored                     bool
	Quote, Prefix, Suffix, State string
	Resolved                     bool
	ResolvedBy                   string
	ResolvedAt                   time.Time
	CanResolve                   bool
	ReplyKey                     string
	Reply                        draft
}

// commentView is one comment with what the reader may do to it.
type commentView struct {
	ID, DocID, Status string // Status: the filter, sent back by its forms
	Thread            string // the id of its thread's root
	Author, AuthorID  string
	At                time.Time
	Loc               *time.Location // the reader's, for At and its thread's ResolvedAt
	Edited, Deleted   bool
	BodyHTML          template.HTML
	Body              string // for the edit form, when CanEdit
	CanEdit           bool
	CanDelete         bool
	FormKey           string         // with ID, the idempotency key of its delete form
	Reactions         []reactionView // those with a count
	Edit              draft
}

// reactionView is a reaction a comment has, as a button that adds the
// reader's or takes it back.
type reactionView struct {
	Emoji string
	Count int
	Mine  bool
}

// reactionPicker is the menu of every reaction, the same in every comment's
// reactions form: built once, and short (it is repeated for every comment
// of the page; its summary names what its buttons do, and an emoji is its
// own accessible name).
var reactionPicker = func() template.HTML {
	var b strings.Builder
	b.WriteString(`<details class="add-reaction"><summary aria-label="Add a reaction">+ React</summary>`)
	for _, e := range quire.Reactions {
		e = template.HTMLEscapeString(e)
		b.WriteString(`<button name="react" value="on:` + e + `">` + e + `</button>`)
	}
	b.WriteString(`</details>`)
	return template.HTML(b.String()) // fixed text, escaped above
}()

// commentsOf builds the comments column of doc for a: the page of threads
// the query's comments and cpage parameters select, with the form refused
// (nil for none) shown again.
func (s *server) commentsOf(ctx context.Context, a quire.Actor, doc *quire.Document, q url.Values, loc *time.Location,
	refused *commentRefusal) (*commentsView, error) {
	cs := s.cfg.Comments
	if cs == nil {
		return nil, nil
	}
	v := &commentsView{DocID: doc.ID, Status: "open", NewKey: newFormKey()}
	for _, f := range commentFilters {
		if q.Get("comments") == f.Value {
			v.Status = f.Value
		}
	}
	page := 1
	if n, err := strconv.Atoi(q.Get("cpage")); err == nil && n > 1 && n <= quire.MaxThreads {
		page = n
	}
	for _, f := range commentFilters {
		v.Filters = append(v.Filters, filterLink{Value: f.Value, Label: f.Label, URL: threadsURL(doc.ID, f.Value, 1), Current: f.Value == v.Status})
	}
	if refused != nil {
		v.Error, v.New = refused.Message, refused.draftFor(refusedNew)
		if v.New.Here {
			v.AnchorError = refused.Fields["anchor"]
			v.Quote, v.Prefix, v.Suffix = refused.Quote, refused.Prefix, refused.Suffix
		}
	}
	key := columnKey{doc: doc.ID, status: v.Status, page: page, loc: loc.String()}
	col, _ := s.columns.Get(key)
	known := ""
	if col != nil {
		known = col.version
	}
	win, err := cs.Window(ctx, a, doc.ID, v.Status, (page-1)*threadsShown, threadsShown, known)
	if err != nil {
		return nil, err
	}
	v.Total = win.Total
	if page > 1 {
		v.Prev = threadsURL(doc.ID, v.Status, page-1)
	}
	if page*threadsShown < win.Total {
		v.Next = threadsURL(doc.ID, v.Status, page+1)
	}
	if known == "" || win.Version != known {
		var threadViews, outdated []threadView
		for i := range win.Threads {
			tv, err := s.threadView(ctx, a, doc, v, loc, nil, &win.Threads[i])
			if err != nil {
				return nil, err
			}
			if tv.State == quire.AnchorOutdated {
				outdated = append(outdated, tv)
			} else {
				threadViews = append(threadViews, tv)
			}
		}
		col = &column{version: win.Version, threads: writeColumn(threadViews), outdated: writeColumn(outdated)}
		if win.Version != "" {
			s.columns.Put(key, col, col.threads.size()+col.outdated.size()+256)
		}
	}
	v.reader = &columnReader{id: a.User.ID, owner: doc.OwnerID, admin: a.User.Role.Admin,
		mayWrite: a.Can(quire.LevelWrite) || a.User.Role.Admin, reactions: win.Reactions, mine: win.Mine}
	v.column = col
	if len(col.threads.text) > 0 {
		v.ThreadsHTML = partMarker(0) // streamed (viewPage.streamed)
	}
	if len(col.outdated.text) > 0 {
		v.OutdatedHTML = partMarker(1)
	}
	return v, nil
}

// Bounds of the columns a server keeps: 16 MiB in all, 2 MiB for one (a
// column of threadsShown threads is about 450 kB).
const (
	columnsBytes = 16 << 20
	columnsEntry = 2 << 20
)

// columnKey names a comments column as written for every reader
// (comments_html.go): a window of a document's threads (its filter and
// page) and the time zone of its times.
type columnKey struct {
	doc, status string
	page        int
	loc         string
}

// column is a comments column as written: the threads on the text and
// the outdated ones, each the items of a list with holes for what
// differs by reader, at a version of the comments service's window
// (which covers the threads, their anchors and their people's names). A
// server keeps the last one of each key, and shows it again only at the
// same version.
type column struct {
	version           string
	threads, outdated sharedHTML
}

// writeColumn writes threads short, as the column shows them, for every
// reader.
func writeColumn(threads []threadView) sharedHTML {
	if len(threads) == 0 {
		return sharedHTML{}
	}
	sb := &sharedBuilder{}
	sb.buf.Grow(len(threads) * 2 << 10)
	for i := range threads {
		writeThread(htmlWriter{b: &sb.buf, sh: sb}, &threads[i], false)
	}
	return sharedHTML{text: sb.buf.Bytes(), holes: sb.holes}
}

// threadView is thread t as a reads it on doc's page (or its thread page),
// with the form refused (nil for none) shown again.
func (s *server) threadView(ctx context.Context, a quire.Actor, doc *quire.Document, v *commentsView, loc *time.Location,
	refused *commentRefusal, t *quire.Comment) (threadView, error) {
	mayWrite := a.Can(quire.LevelWrite) || a.User.Role.Admin
	tv := threadView{Resolved: !t.ResolvedAt.IsZero(), Reply: refused.draftOf("reply-", t.ID),
		CanResolve: t.AuthorID == a.User.ID || mayWrite}
	if tv.Resolved {
		tv.ResolvedBy, tv.ResolvedAt = t.ResolvedByName, t.ResolvedAt
	}
	if an := t.Anchor; an != nil {
		tv.Anchored, tv.Quote, tv.Prefix, tv.Suffix, tv.State = true, an.Quote, an.Prefix, an.Suffix, an.State
	}
	var err error
	if tv.Root, err = s.commentView(ctx, a, doc, v, loc, refused, t, t.ID); err != nil {
		return tv, err
	}
	for j := range t.Replies {
		rv, err := s.commentView(ctx, a, doc, v, loc, refused, &t.Replies[j], t.ID)
		if err != nil {
			return tv, err
		}
		tv.Replies = append(tv.Replies, rv)
	}
	return tv, nil
}

// threadPage is the page of one thread (threadURL): the document's title,
// the thread in full with every form the reader may use, and the form
// refused (nil for none) shown again.
type threadPage struct {
	layout
	Doc        *quire.Document
	ThreadID   string
	Status     string
	Error      string
	ThreadHTML template.HTML
	BackURL    string
}

// handleCommentThread shows the thread of comment cid of the path's
// document: NOT_FOUND (404) for a caller who cannot see the document, for
// an unknown comment and for one of another document.
func handleCommentThread(s *server, d *documents.Service, cs *comments.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		return s.showThread(w, r, d, cs, a, r.PathValue("cid"), http.StatusOK, nil)
	}
}

// showThread answers the page of the thread comment cid belongs to.
func (s *server) showThread(w http.ResponseWriter, r *http.Request, d *documents.Service, cs *comments.Service, a quire.Actor,
	cid string, status int, refused *commentRefusal) error {
	doc, err := d.Get(r.Context(), a, r.PathValue("id"))
	if err != nil {
		return err
	}
	t, err := cs.Thread(r.Context(), a, cid)
	if err != nil {
		return err
	}
	if t.DocumentID != doc.ID {
		return quire.Errorf(quire.ENOTFOUND, "Comment not found")
	}
	st := r.URL.Query().Get("comments")
	if r.Method == http.MethodPost {
		st = r.PostForm.Get("comments")
	}
	p := threadPage{layout: s.layout(r, &a, doc.Title), Doc: doc, ThreadID: t.ID, Status: "open"}
	for _, f := range commentFilters {
		if st == f.Value {
			p.Status = f.Value
		}
	}
	p.Nav = "documents"
	if refused != nil {
		p.Error = refused.Message
	}
	v := &commentsView{DocID: doc.ID, Status: p.Status, NewKey: newFormKey()}
	tv, err := s.threadView(r.Context(), a, doc, v, p.Loc, refused, t)
	if err != nil {
		return err
	}
	tv.ReplyKey = newFormKey() // the reply form is written in full only
	p.ThreadHTML = threadsHTML([]threadView{tv}, true)
	p.BackURL = threadsURL(doc.ID, p.Status, 1)
	p.BackURL = strings.TrimSuffix(p.BackURL, "#comments") + "#thread-" + t.ID
	return s.show(w, r, status, "comment_thread.html", p)
}

// commentView is c as a reads it on doc's page. The body is rendered as
// the service renders it (comments.BodyHTML: the documents' renderer and
// sanitiser) through the page's cache of renders: a page shows up to
// hundreds of bodies, which change rarely.
func (s *server) commentView(ctx context.Context, a quire.Actor, doc *quire.Document, page *commentsView, loc *time.Location,
	refused *commentRefusal, c *quire.Comment, thread string) (commentView, error) {
	v := commentView{ID: c.ID, DocID: c.DocumentID, Thread: thread, Status: page.Status, Author: c.AuthorName,
		AuthorID: c.AuthorID, At: c.CreatedAt, Loc: loc, Edited: c.Edited, Deleted: c.Deleted}
	if c.Deleted {
		return v, nil
	}
	h, err := s.bodies.Render(ctx, "markdown", c.Body)
	if err != nil {
		return v, err
	}
	v.BodyHTML = h
	v.CanEdit = c.AuthorID == a.User.ID
	v.CanDelete = v.CanEdit || doc.OwnerID == a.User.ID || a.User.Role.Admin
	if v.CanEdit {
		v.Body, v.Edit = c.Body, refused.draftOf("edit-", c.ID)
	}
	if v.CanDelete {
		v.FormKey = page.NewKey
	}
	for _, r := range c.Reactions {
		if r.Count <= 0 {
			continue
		}
		v.Reactions = append(v.Reactions, reactionView{Emoji: r.Emoji, Count: r.Count, Mine: r.Mine})
	}
	return v, nil
}

// threadsURL is the document page showing page n of the threads status
// selects.
func threadsURL(docID, status string, n int) string {
	q := url.Values{}
	if status != "open" {
		q.Set("comments", status)
	}
	if n > 1 {
		q.Set("cpage", strconv.Itoa(n))
	}
	u := "/documents/" + docID
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u + "#comments"
}

// backToThread is where a comment form sends the browser: the document
// page, with the status filter the form was sent from, at the thread.
func backToThread(r *http.Request, docID, threadID, flash string) string {
	q := url.Values{}
	if st := r.PostForm.Get("comments"); st == "resolved" || st == "all" {
		q.Set("comments", st)
	}
	if flash != "" {
		q.Set("m", flash)
	}
	u := "/documents/" + docID
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	if threadID != "" {
		return u + "#thread-" + threadID
	}
	return u + "#comments"
}

// commentForm reads a comment form: writes need view only (whoever may
// read a document may comment on it), the service decides the rest.
func commentForm(r *http.Request, a quire.Actor) error {
	if err := documents.Require(a, quire.LevelView); err != nil {
		return err
	}
	return parseForm(r)
}

// commentBody is a posted body with the browser's CRLF line breaks as LF.
func commentBody(r *http.Request) string {
	return strings.ReplaceAll(r.PostForm.Get("body"), "\r\n", "\n")
}

// handleCommentCreate adds a thread (with a quote from the text or on the
// whole page) or, with parent_id, a reply.
func handleCommentCreate(s *server, d *documents.Service, cs *comments.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := commentForm(r, a); err != nil {
			return err
		}
		docID := r.PathValue("id")
		f := r.PostForm
		in := comments.Input{ParentID: f.Get("parent_id"), Body: commentBody(r)}
		if q := f.Get("quote"); q != "" && in.ParentID == "" {
			in.Anchor = &comments.AnchorInput{Quote: q, Prefix: f.Get("prefix"), Suffix: f.Get("suffix")}
		}
		save, replayed, err := s.beginForm(w, r, a, quire.Reply{Kind: quire.ReplyNone})
		if err != nil || replayed {
			return err
		}
		c, err := cs.Create(r.Context(), a, docID, in)
		if err != nil {
			save.failed()
			draftFor := refusedNew
			if in.ParentID != "" {
				draftFor = "reply-" + in.ParentID
			}
			return s.commentRefused(w, r, d, a, docID, err, draftFor)
		}
		where := backToThread(r, docID, threadOf(c), "comment-added")
		save.redirected(where)
		http.Redirect(w, r, where, http.StatusSeeOther)
		return nil
	}
}

// commentOfPage returns comment cid of the path's document: a comment of
// another document is not found here, as an unknown one.
func commentOfPage(r *http.Request, cs *comments.Service, a quire.Actor) (*quire.Comment, error) {
	c, err := cs.Get(r.Context(), a, r.PathValue("cid"))
	if err != nil {
		return nil, err
	}
	if c.DocumentID != r.PathValue("id") {
		return nil, quire.Errorf(quire.ENOTFOUND, "Comment not found")
	}
	return c, nil
}

// threadOf is the thread c belongs to.
func threadOf(c *quire.Comment) string {
	if c.ParentID != "" {
		return c.ParentID
	}
	return c.ID
}

// handleCommentEdit sets a comment's body (its author only).
func handleCommentEdit(s *server, d *documents.Service, cs *comments.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := commentForm(r, a); err != nil {
			return err
		}
		c, err := commentOfPage(r, cs, a)
		if err != nil {
			return err
		}
		if _, err := cs.Edit(r.Context(), a, c.ID, commentBody(r)); err != nil {
			return s.commentRefused(w, r, d, a, c.DocumentID, err, "edit-"+c.ID)
		}
		http.Redirect(w, r, backToThread(r, c.DocumentID, threadOf(c), "comment-saved"), http.StatusSeeOther)
		return nil
	}
}

// handleCommentDelete removes a comment (its author, the document's owner
// or an administrator). Sent twice, the second finds it gone and goes back
// to the page all the same.
func handleCommentDelete(s *server, cs *comments.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := commentForm(r, a); err != nil {
			return err
		}
		save, replayed, err := s.beginForm(w, r, a, quire.Reply{Kind: quire.ReplyNone})
		if err != nil || replayed {
			return err
		}
		c, err := commentOfPage(r, cs, a)
		if err == nil {
			err = cs.Delete(r.Context(), a, c.ID)
		}
		if err != nil {
			save.failed()
			return err
		}
		thread := ""
		if c.ParentID != "" {
			thread = c.ParentID
		}
		where := backToThread(r, c.DocumentID, thread, "comment-deleted")
		save.redirected(where)
		http.Redirect(w, r, where, http.StatusSeeOther)
		return nil
	}
}

// handleCommentResolve resolves (resolve true) or reopens a thread.
func handleCommentResolve(cs *comments.Service, resolve bool) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := commentForm(r, a); err != nil {
			return err
		}
		c, err := commentOfPage(r, cs, a)
		if err != nil {
			return err
		}
		if _, err := cs.Resolve(r.Context(), a, c.ID, resolve); err != nil {
			return err
		}
		flash := "thread-reopened"
		if resolve {
			flash = "thread-resolved"
		}
		http.Redirect(w, r, backToThread(r, c.DocumentID, c.ID, flash), http.StatusSeeOther)
		return nil
	}
}

// handleCommentReact adds or takes back the reader's reaction: the form's
// react field is "on:" or "off:" followed by the emoji, one button each.
func handleCommentReact(cs *comments.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := commentForm(r, a); err != nil {
			return err
		}
		c, err := commentOfPage(r, cs, a)
		if err != nil {
			return err
		}
		v := r.PostForm.Get("react")
		emoji, on := strings.CutPrefix(v, "on:")
		if !on {
			var off bool
			if emoji, off = strings.CutPrefix(v, "off:"); !off {
				return quire.Errorf(quire.EVALIDATION, "The form does not say which reaction to add or take back.")
			}
		}
		if _, err := cs.React(r.Context(), a, c.ID, emoji, on); err != nil {
			return err
		}
		http.Redirect(w, r, backToThread(r, c.DocumentID, threadOf(c), ""), http.StatusSeeOther)
		return nil
	}
}

// commentRefused answers a comment form the service refused: a
// validation error (or a limit reached) shows the document page again,
// 400 (409), with the message and the typed text in the form it was typed
// in; anything else is an error page.
func (s *server) commentRefused(w http.ResponseWriter, r *http.Request, d *documents.Service, a quire.Actor,
	docID string, refusal error, form string) error {
	code := errorCode(refusal)
	if code != quire.EVALIDATION && code != quire.ELIMITREACHED {
		return refusal
	}
	e, _ := asError(refusal)
	status := http.StatusBadRequest
	rf := &commentRefusal{Form: form, Body: commentBody(r), Message: e.Message, Fields: map[string]string{}}
	if code == quire.ELIMITREACHED {
		status = http.StatusConflict
	} else {
		rf.Fields = validationFields(refusal)
		rf.Message = "The comment was not saved: correct what is marked below."
	}
	if form != refusedNew {
		// A reply or an edit was typed on the thread's page (or opened
		// from it): shown again there.
		_, cid, _ := strings.Cut(form, "-")
		return s.showThread(w, r, d, s.cfg.Comments, a, cid, status, rf)
	}
	rf.Quote, rf.Prefix, rf.Suffix = r.PostForm.Get("quote"), r.PostForm.Get("prefix"), r.PostForm.Get("suffix")
	return s.documentPage(w, r, d, a, docID, status, rf)
}

// openThreads counts the open threads of docs, a page of a list the reader
// may see: one query for the page.
func (s *server) openThreads(ctx context.Context, docs []quire.Document) (map[string]int, error) {
	if s.cfg.OpenThreads == nil || s.cfg.Comments == nil || len(docs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(docs))
	for i := range docs {
		ids[i] = docs[i].ID
	}
	return s.cfg.OpenThreads.OpenThreads(ctx, ids)
}
