package web

import (
	"html/template"
	"strconv"
	"strings"
)

// The threads of the comments column are written here rather than by the
// page's template: a page shows up to threadsShown threads, and
// html/template calls an escaper through reflection for every value it
// prints (some fifty per thread), which made the page with 200 threads
// cost twenty times the page without (BenchmarkDocumentPageWithThreads).
// Every value written is escaped with template.HTMLEscapeString (safe in
// text and in double-quoted attributes); the URLs are made of quire's ids
// only; a body is the renderer's sanitised HTML. TestCommentsEscape holds
// it to that.

// threadsHTML writes threads as the items of a list.
func threadsHTML(threads []threadView) template.HTML {
	var b strings.Builder
	b.Grow(len(threads) * 6 << 10) // what a thread with a reply takes
	for i := range threads {
		writeThread(&b, &threads[i])
	}
	return template.HTML(b.String()) // escaped piece by piece below
}

// htmlWriter writes HTML, escaping every value.
type htmlWriter struct{ b *strings.Builder }

// raw writes markup as it is.
func (w htmlWriter) raw(s ...string) {
	for _, p := range s {
		w.b.WriteString(p)
	}
}

// text writes s escaped.
func (w htmlWriter) text(s string) { w.b.WriteString(template.HTMLEscapeString(s)) }

func writeThread(b *strings.Builder, t *threadView) {
	w := htmlWriter{b}
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
		w.raw(`" data-prefix="`)
		w.text(t.Prefix)
		w.raw(`" data-suffix="`)
		w.text(t.Suffix)
		w.raw(`" data-state="`)
		w.text(t.State)
		w.raw(`">`, "\n", `<blockquote class="quote">`)
		w.text(t.Quote)
		w.raw(`</blockquote>`, "\n", `<button type="button" class="link small show-in-text" hidden aria-label="Show the quoted text in the document">Show in text</button>`, "\n")
	} else {
		w.raw(`>`, "\n", `<p class="on-page hint">On the whole page</p>`, "\n")
	}
	writeComment(w, r)
	if len(t.Replies) > 0 {
		w.raw(`<ol class="replies">`)
		for i := range t.Replies {
			w.raw(`<li>`)
			writeComment(w, &t.Replies[i])
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
		w.raw(`, <time datetime="`)
		w.text(t.ResolvedISO)
		w.raw(`">`)
		w.text(t.ResolvedAt)
		w.raw(`</time></p>`, "\n")
	}
	base := "/documents/" + r.DocID + "/comments"
	w.raw(`<form method="post" action="`)
	w.text(base)
	w.raw(`" class="comment-form reply-form"><input type="hidden" name="idempotency_key" value="`)
	w.text(t.ReplyKey)
	w.raw(`"><input type="hidden" name="comments" value="`)
	w.text(r.Status)
	w.raw(`"><input type="hidden" name="parent_id" value="`)
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
	if t.CanResolve {
		action, label := "resolve", "Resolve"
		if t.Resolved {
			action, label = "reopen", "Reopen"
		}
		w.raw(`<form method="post" action="`)
		w.text(base + "/" + r.ID + "/" + action)
		w.raw(`" class="inline resolve-form"><input type="hidden" name="comments" value="`)
		w.text(r.Status)
		w.raw(`"><button type="submit" class="small `, action, `-button" aria-label="`, label, ` the thread by `)
		w.text(r.Author)
		w.raw(`">`, label, `</button></form>`, "\n")
	}
	w.raw(`</li>`, "\n")
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

func writeComment(w htmlWriter, c *commentView) {
	w.raw(`<article class="comment`)
	if c.Deleted {
		w.raw(` deleted`)
	}
	w.raw(`" id="comment-`)
	w.text(c.ID)
	w.raw(`" aria-label="Comment by `)
	w.text(c.Author)
	w.raw(`">`, "\n", `<p class="comment-head"><strong class="author">`)
	w.text(c.Author)
	w.raw(`</strong> <time datetime="`)
	w.text(c.AtISO)
	w.raw(`">`)
	w.text(c.At)
	w.raw(`</time>`)
	if c.Edited {
		w.raw(` <span class="hint">(edited)</span>`)
	}
	w.raw(`</p>`, "\n")
	if c.Deleted {
		w.raw(`<p class="hint">This comment was deleted.</p>`, "\n</article>\n")
		return
	}
	w.raw(`<div class="comment-body content">`, string(c.BodyHTML), `</div>`, "\n")
	base := "/documents/" + c.DocID + "/comments/" + c.ID
	w.raw(`<form method="post" action="`)
	w.text(base + "/reactions")
	w.raw(`" class="reactions"><input type="hidden" name="comments" value="`)
	w.text(c.Status)
	w.raw(`">`)
	for _, r := range c.Reactions {
		w.raw(`<button type="submit" class="reaction small" name="react" value="`)
		w.text(r.Value)
		w.raw(`" aria-pressed="`, strconv.FormatBool(r.Mine), `" aria-label="`)
		w.text(r.Label)
		w.raw(`">`)
		w.text(r.Emoji)
		w.raw(` <span class="count">`, strconv.Itoa(r.Count), `</span></button>`)
	}
	w.raw(string(reactionPicker), `</form>`, "\n")
	if c.CanEdit || c.CanDelete {
		w.raw(`<div class="comment-actions">`)
		if c.CanEdit {
			w.raw(`<details class="edit-comment"`)
			if c.Edit.Here {
				w.raw(` open`)
			}
			w.raw(`><summary>Edit</summary><form method="post" action="`)
			w.text(base + "/edit")
			w.raw(`" class="comment-form"><input type="hidden" name="comments" value="`)
			w.text(c.Status)
			w.raw(`"><label for="edit-`)
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
			w.text(base + "/delete")
			w.raw(`" class="inline delete-comment"><input type="hidden" name="comments" value="`)
			w.text(c.Status)
			w.raw(`"><input type="hidden" name="idempotency_key" value="`)
			w.text(c.DeleteKey)
			w.raw(`"><button type="submit" class="link small danger" aria-label="Delete the comment by `)
			w.text(c.Author)
			w.raw(`">Delete</button></form>`)
		}
		w.raw(`</div>`, "\n")
	}
	w.raw(`</article>`, "\n")
}
