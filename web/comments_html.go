package web

import (
	"bytes"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"quire"
)

// The threads of the comments column are written here rather than by the
// page's template: a page shows up to threadsShown threads, and
// html/template calls an escaper through reflection for every value it
// prints (some fifty per thread), which made the page with 200 threads
// cost twenty times the page without (BenchmarkDocumentPageWithThreads).
// Every value written is escaped as template.HTMLEscapeString escapes
// (htmlWriter.text: safe in text and in double-quoted attributes); the URLs are made of quire's ids
// and a status of commentFilters only; a body is the renderer's sanitised
// HTML. TestCommentsEscape holds it to that.
//
// The column is written short (full false): each comment's text and its
// reactions, and per thread a Reply link and a More link to the thread's
// page (threadURL), which writes the same thread in full, with every form
// (reply, react, edit, delete). static/comments.js opens those forms in
// the column instead: the one the Reply link names, and those of the
// buttons it adds to each comment for what its data-can lists. Resolve and
// reopen, one button each, stay in the column.

// threadsHTML writes threads as the items of a list, in full or short.
func threadsHTML(threads []threadView, full bool) template.HTML {
	var b strings.Builder
	size := 0 // what the threads take, about: one buffer, never grown
	for i := range threads {
		t := &threads[i]
		size += 2<<10 + 3*len(t.Quote) + len(t.Prefix) + len(t.Suffix) + len(t.Root.BodyHTML)
		for j := range t.Replies {
			size += 1<<10 + len(t.Replies[j].BodyHTML)
		}
		if full {
			size += 4<<10 + len(t.Root.Body)
		}
	}
	b.Grow(size)
	writeThreads(&b, threads, full)
	return template.HTML(b.String()) // escaped piece by piece below
}

// writeThreads writes threads as the items of a list into b.
func writeThreads(b textWriter, threads []threadView, full bool) {
	for i := range threads {
		writeThread(htmlWriter{b: b}, &threads[i], full)
	}
}

// textWriter is where an htmlWriter writes: a strings.Builder or a
// bufio.Writer over a response.
type textWriter interface {
	io.Writer
	io.StringWriter
}

// htmlWriter writes HTML, escaping every value. Writing a column for
// every reader (sh not nil), it leaves holes where readers differ.
type htmlWriter struct {
	b  textWriter
	sh *sharedBuilder
}

// raw writes markup as it is.
func (w htmlWriter) raw(s ...string) {
	for _, p := range s {
		w.b.WriteString(p)
	}
}

// text writes s escaped as template.HTMLEscapeString escapes it, without
// building the escaped copy (a page writes thousands of values).
func (w htmlWriter) text(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		if !mustEscape[s[i]] {
			continue
		}
		var esc string
		switch s[i] {
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '&':
			esc = "&amp;"
		case '\'':
			esc = "&#39;"
		case '"':
			esc = "&#34;"
		case 0:
			esc = "\uFFFD"
		default:
			continue
		}
		w.b.WriteString(s[last:i])
		w.b.WriteString(esc)
		last = i + 1
	}
	w.b.WriteString(s[last:])
}

// time writes a time element of t as the templates' when and whenISO show it, in loc,
// without building either string (a page writes hundreds).
func (w htmlWriter) time(t time.Time, loc *time.Location) {
	if loc == nil {
		loc = time.UTC
	}
	var scratch [64]byte
	w.raw(`<time datetime="`)
	w.b.Write(t.UTC().AppendFormat(scratch[:0], time.RFC3339))
	w.raw(`">`)
	if !t.IsZero() {
		w.b.Write(t.In(loc).AppendFormat(scratch[:0], whenLayout))
	}
	w.raw(`</time>`)
}

// mustEscape are the bytes htmlWriter.text escapes.
var mustEscape = [256]bool{'<': true, '>': true, '&': true, '\'': true, '"': true, 0: true}

// status writes the hidden field that sends the filter back with a form,
// when it is not the default.
func (w htmlWriter) status(status string) {
	if status != "open" {
		w.raw(`<input type="hidden" name="comments" value="`)
		w.text(status)
		w.raw(`">`)
	}
}

// commentURL writes the path of comment id's action of document docID
// (/documents/{docID}/comments/{id}/{action}), as much of it as is not "".
func (w htmlWriter) commentURL(docID, id, action string) {
	w.raw(`/documents/`)
	w.text(docID)
	w.raw(`/comments`)
	for _, p := range [2]string{id, action} {
		if p != "" {
			w.raw(`/`)
			w.text(p)
		}
	}
}

// threadURL writes the page of thread root of document docID, its forms
// for a page that shows the threads status selects.
func (w htmlWriter) threadURL(docID, root, status string) {
	w.commentURL(docID, root, "")
	if status != "open" {
		w.raw(`?comments=`)
		w.text(status)
	}
}

// writeThread writes thread t, in full (for its reader) or short (for
// every reader: w.sh is not nil).
func writeThread(w htmlWriter, t *threadView, full bool) {
	r := &t.Root
	w.raw(`<li class="thread`)
	if t.Resolved {
		w.raw(` resolved`)
	}
	w.raw(`" id="thread-`)
	w.text(r.ID)
	w.raw(`" tabindex="-1" aria-label="Thread by `)
	w.text(r.Author)
	w.raw(`"`)
	if t.Anchored {
		w.raw(` data-quote="`)
		w.text(t.Quote)
		w.raw(`"`)
		if t.Prefix != "" { // comments.js reads a missing one as ""
			w.raw(` data-prefix="`)
			w.text(t.Prefix)
			w.raw(`"`)
		}
		if t.Suffix != "" {
			w.raw(` data-suffix="`)
			w.text(t.Suffix)
			w.raw(`"`)
		}
		w.raw(` data-state="`)
		w.text(t.State)
		w.raw(`">`, "\n", `<blockquote class="quote">`)
		w.text(t.Quote)
		w.raw(`</blockquote>`, "\n")
	} else {
		w.raw(`>`, "\n", `<p class="on-page hint">On the whole page</p>`, "\n")
	}
	writeComment(w, r, full)
	if len(t.Replies) > 0 {
		w.raw(`<ol class="replies">`)
		for i := range t.Replies {
			w.raw(`<li>`)
			writeComment(w, &t.Replies[i], full)
			w.raw(`</li>`)
		}
		w.raw(`</ol>`, "\n")
	}
	if t.Resolved {
		w.raw(`<p class="resolved-note" id="resolved-`)
		w.text(r.ID)
		w.raw(`">Resolved`)
		if t.ResolvedBy != "" {
			w.raw(` by `)
			w.text(t.ResolvedBy)
		}
		w.raw(`, `)
		w.time(t.ResolvedAt, r.Loc)
		w.raw(`</p>`, "\n")
	}
	w.raw(`<div class="thread-actions">`)
	if full {
		w.raw(`<form method="post" action="`)
		w.commentURL(r.DocID, "", "")
		w.raw(`" class="comment-form reply-form" id="reply-form-`)
		w.text(r.ID)
		w.raw(`"><input type="hidden" name="idempotency_key" value="`)
		w.text(t.ReplyKey)
		w.raw(`">`)
		w.status(r.Status)
		w.raw(`<input type="hidden" name="parent_id" value="`)
		w.text(r.ID)
		w.raw(`">`, "\n", `<label for="reply-`)
		w.text(r.ID)
		w.raw(`" class="visually-hidden">Reply to `)
		w.text(r.Author)
		w.raw(`</label>`, "\n", `<textarea id="reply-`)
		w.text(r.ID)
		w.raw(`" name="body" rows="2" required maxlength="10000" placeholder="Reply…"`)
		writeDraft(w, t.Reply)
		w.raw(`<button type="submit" class="small reply-button">Reply</button></form>`, "\n")
	} else {
		w.raw(`<a href="`)
		w.threadURL(r.DocID, r.ID, r.Status)
		w.raw(`#reply-form-`) // the form comments.js opens in place
		w.text(r.ID)
		w.raw(`" class="reply-link">Reply</a> <a href="`)
		w.threadURL(r.DocID, r.ID, r.Status)
		w.raw(`" class="thread-link" aria-label="React, edit or delete: the thread's page">More…</a>`)
	}
	switch {
	case !full:
		var form strings.Builder
		writeResolve(htmlWriter{b: &form}, t)
		w.hole(hole{kind: holeResolve, author: r.AuthorID, html: form.String()})
	case t.CanResolve:
		writeResolve(w, t)
	}
	w.raw(`</div>`, "\n", `</li>`, "\n")
}

// writeResolve writes the form that resolves or reopens thread t.
func writeResolve(w htmlWriter, t *threadView) {
	r := &t.Root
	action, label := "resolve", "Resolve"
	if t.Resolved {
		action, label = "reopen", "Reopen"
	}
	w.raw(`<form method="post" action="`)
	w.commentURL(r.DocID, r.ID, action)
	w.raw(`" class="inline resolve-form">`)
	w.status(r.Status)
	w.raw(`<button class="small `, action, `-button" aria-label="`, label, ` the thread by `)
	w.text(r.Author)
	w.raw(`">`, label, `</button></form>`)
}

// writeDraft ends a textarea's start tag, then writes its text: the draft
// of a refused form, with its error after the textarea.
func writeDraft(w htmlWriter, d draft) {
	if d.Error != "" {
		w.raw(` aria-invalid="true" aria-describedby="err-body"`)
	}
	w.raw(`>`)
	w.text(d.Body)
	w.raw(`</textarea>`, "\n")
	if d.Error != "" {
		w.raw(`<p class="field-error" id="err-body">`)
		w.text(d.Error)
		w.raw(`</p>`, "\n")
	}
}

func writeComment(w htmlWriter, c *commentView, full bool) {
	w.raw(`<article class="comment`)
	if c.Deleted {
		w.raw(` deleted`)
	}
	w.raw(`" id="comment-`)
	w.text(c.ID)
	w.raw(`" aria-label="Comment by `)
	w.text(c.Author)
	w.raw(`"`)
	if !full && !c.Deleted {
		// What comments.js offers as buttons, which open the forms of
		// the thread's page in place (writeCan).
		w.hole(hole{kind: holeCan, author: c.AuthorID})
	}
	w.raw(`>`, "\n", `<p class="comment-head"><strong class="author">`)
	w.text(c.Author)
	w.raw(`</strong> `)
	w.time(c.At, c.Loc)
	if c.Edited {
		w.raw(` <span class="hint">(edited)</span>`)
	}
	w.raw(`</p>`, "\n")
	if c.Deleted {
		w.raw(`<p class="hint">This comment was deleted.</p>`, "\n</article>\n")
		return
	}
	w.raw(`<div class="comment-body content">`, string(c.BodyHTML), `</div>`, "\n")
	if !full {
		// Its reactions, which may change without the rest of the column.
		w.hole(hole{kind: holeReactions, comment: c.ID, docID: c.DocID, status: c.Status})
		w.raw(`</article>`, "\n")
		return
	}
	w.raw(`<form method="post" action="`)
	w.commentURL(c.DocID, c.ID, "reactions")
	w.raw(`" class="reactions" id="react-`)
	w.text(c.ID)
	w.raw(`">`)
	w.status(c.Status)
	for _, r := range c.Reactions {
		writeReaction(w, r.Emoji, r.Count, r.Mine)
	}
	w.raw(string(reactionPicker), `</form>`, "\n")
	if c.CanEdit || c.CanDelete {
		w.raw(`<div class="comment-actions">`)
		if c.CanEdit {
			w.raw(`<details class="edit-comment" id="edit-form-`)
			w.text(c.ID)
			w.raw(`"`)
			if c.Edit.Here {
				w.raw(` open`)
			}
			w.raw(`><summary>Edit</summary><form method="post" action="`)
			w.commentURL(c.DocID, c.ID, "edit")
			w.raw(`" class="comment-form">`)
			w.status(c.Status)
			w.raw(`<label for="edit-`)
			w.text(c.ID)
			w.raw(`" class="visually-hidden">Your comment</label><textarea id="edit-`)
			w.text(c.ID)
			w.raw(`" name="body" rows="3" required maxlength="10000"`)
			d := c.Edit
			if !d.Here {
				d.Body = c.Body
			}
			writeDraft(w, d)
			w.raw(`<button type="submit" class="small">Save</button></form></details>`)
		}
		if c.CanDelete {
			w.raw(`<form method="post" action="`)
			w.commentURL(c.DocID, c.ID, "delete")
			w.raw(`" class="inline delete-comment" id="delete-`)
			w.text(c.ID)
			w.raw(`">`)
			w.status(c.Status)
			w.raw(`<input type="hidden" name="idempotency_key" value="`)
			w.text(c.FormKey)
			w.text(c.ID)
			w.raw(`"><button type="submit" class="link small danger" aria-label="Delete the comment by `)
			w.text(c.Author)
			w.raw(`">Delete</button></form>`)
		}
		w.raw(`</div>`, "\n")
	}
	w.raw(`</article>`, "\n")
}

// writeReaction writes the button of a reaction, mine when it is the
// reader's: its value adds the reader's reaction or takes it back.
func writeReaction(w htmlWriter, emoji string, n int, mine bool) {
	on, yours := "on:", ""
	if mine {
		on, yours = "off:", ", yours: take it back"
	}
	count := strconv.Itoa(n)
	w.raw(`<button class="reaction small" name="react" value="`, on)
	w.text(emoji)
	w.raw(`" aria-pressed="`, strconv.FormatBool(mine), `" aria-label="`)
	w.text(emoji)
	w.raw(` `, count, yours, `">`)
	w.text(emoji)
	w.raw(` <span class="count">`, count, `</span></button>`)
}

// The comments column is written once for every reader of a window of
// threads at one version (column), with holes where what it shows
// differs by reader; each reader's page fills them in as it is written
// (sharedHTML.writeFor). What differs: what the reader may do to each
// comment (data-can), which reactions are theirs, and whether they may
// resolve each thread. The rest (names, times in the page's time zone,
// bodies, the filter in links) is the same for every reader of the
// window, its version and time zone.

// sharedHTML is HTML written for every reader, with its holes in order.
type sharedHTML struct {
	text  []byte
	holes []hole
}

// holeKind is what a hole of a sharedHTML shows.
type holeKind uint8

const (
	// holeCan is a comment's data-can attribute: what the reader may do
	// to it.
	holeCan holeKind = iota
	// holeReactions is a comment's reactions form, when it has any: its
	// counts as they are now, the reader's pressed.
	holeReactions
	// holeResolve is a thread's resolve or reopen form, for its author
	// and those who may write.
	holeResolve
)

// hole is a place in a sharedHTML's text where readers differ.
type hole struct {
	at                     int
	kind                   holeKind
	author                 string // the comment's author (holeCan), the thread's (holeResolve)
	comment, docID, status string // holeReactions: the comment, its document, the column's filter
	html                   string // holeResolve: the form
}

// size is about what h holds in memory.
func (h *sharedHTML) size() int {
	n := len(h.text) + 64
	for i := range h.holes {
		x := &h.holes[i]
		n += 96 + len(x.author) + len(x.comment) + len(x.html)
	}
	return n
}

// sharedBuilder writes a sharedHTML.
type sharedBuilder struct {
	buf   bytes.Buffer
	holes []hole
}

// hole leaves a hole at the end of what w has written for every reader.
func (w htmlWriter) hole(h hole) {
	h.at = w.sh.buf.Len()
	w.sh.holes = append(w.sh.holes, h)
}

// columnReader is what a column shows differently by reader.
type columnReader struct {
	id, owner       string // the reader, the document's owner
	admin, mayWrite bool
	reactions       map[string][]quire.Reaction // the reactions now, by comment id
	mine            map[string][]string         // the reader's, by comment id
}

// writeFor writes h with its holes filled for r.
func (h *sharedHTML) writeFor(b textWriter, r *columnReader) {
	w := htmlWriter{b: b}
	last := 0
	for i := range h.holes {
		x := &h.holes[i]
		b.Write(h.text[last:x.at])
		last = x.at
		switch x.kind {
		case holeCan:
			w.raw(` data-can="react`)
			if x.author == r.id {
				w.raw(` edit`)
			}
			if x.author == r.id || r.owner == r.id || r.admin {
				w.raw(` delete`)
			}
			w.raw(`"`)
		case holeReactions:
			rs := r.reactions[x.comment]
			if len(rs) == 0 {
				continue
			}
			mine := r.mine[x.comment]
			w.raw(`<form method="post" action="`)
			w.commentURL(x.docID, x.comment, "reactions")
			w.raw(`" class="reactions">`)
			w.status(x.status)
			for _, re := range rs {
				writeReaction(w, re.Emoji, re.Count, slices.Contains(mine, re.Emoji))
			}
			w.raw(`</form>`, "\n")
		case holeResolve:
			if x.author == r.id || r.mayWrite {
				w.raw(x.html)
			}
		}
	}
	b.Write(h.text[last:])
}
