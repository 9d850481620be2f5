package httpapi

import (
	"context"
	"net/http"

	"quire"
	"quire/comments"
	"quire/documents"
	"quire/wire"
)

// commentOut is COMMENT of product.md section 18.
type commentOut struct {
	ID         string        `json:"id"`
	DocumentID string        `json:"document_id"`
	ParentID   *string       `json:"parent_id"`
	Author     personJSON    `json:"author"`
	Body       string        `json:"body"`
	BodyHTML   string        `json:"body_html"`
	Anchor     *anchorOut    `json:"anchor"`
	CreatedAt  string        `json:"created_at"`
	UpdatedAt  string        `json:"updated_at"`
	Edited     bool          `json:"edited"`
	Deleted    bool          `json:"deleted"`
	ResolvedAt *string       `json:"resolved_at"`
	ResolvedBy *personJSON   `json:"resolved_by"`
	Reactions  []reactionOut `json:"reactions"`
}

type anchorOut struct {
	Quote  string `json:"quote"`
	Prefix string `json:"prefix"`
	Suffix string `json:"suffix"`
	State  string `json:"state"`
}

type reactionOut struct {
	Emoji string `json:"emoji"`
	Count int    `json:"count"`
	Mine  bool   `json:"mine"`
}

// threadOut is a thread of a list: its root's COMMENT and its replies.
type threadOut struct {
	commentOut
	Replies []commentOut `json:"replies"`
}

// commentJSON renders c as COMMENT, its body as HTML too.
func commentJSON(ctx context.Context, c *quire.Comment) (commentOut, error) {
	html, err := comments.BodyHTML(ctx, c.Body)
	if err != nil {
		return commentOut{}, err
	}
	out := commentOut{
		ID: c.ID, DocumentID: c.DocumentID, ParentID: wire.Nullable(c.ParentID),
		Author: personJSON{ID: c.AuthorID, Name: c.AuthorName}, Body: c.Body, BodyHTML: html,
		CreatedAt: wire.Time(c.CreatedAt), UpdatedAt: wire.Time(c.UpdatedAt), Edited: c.Edited, Deleted: c.Deleted,
		Reactions: make([]reactionOut, 0, len(c.Reactions)),
	}
	if a := c.Anchor; a != nil {
		out.Anchor = &anchorOut{Quote: a.Quote, Prefix: a.Prefix, Suffix: a.Suffix, State: a.State}
	}
	if !c.ResolvedAt.IsZero() {
		at := wire.Time(c.ResolvedAt)
		out.ResolvedAt = &at
		out.ResolvedBy = &personJSON{ID: c.ResolvedByID, Name: c.ResolvedByName}
	}
	for _, r := range c.Reactions {
		out.Reactions = append(out.Reactions, reactionOut{Emoji: r.Emoji, Count: r.Count, Mine: r.Mine})
	}
	return out, nil
}

// writeComment answers {"comment": COMMENT} with status.
func writeComment(w http.ResponseWriter, r *http.Request, status int, c *quire.Comment) error {
	out, err := commentJSON(r.Context(), c)
	if err != nil {
		return err
	}
	return writeJSON(w, status, map[string]any{"comment": out})
}

// commentAction is a change to the comment of the path's id by a caller
// who may comment (checked before any body is read, so that a caller
// without the right learns nothing else), answered 200 {"comment"}.
func commentAction(change func(w http.ResponseWriter, r *http.Request, a quire.Actor, id string) (*quire.Comment, error)) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := comments.CanComment(a); err != nil {
			return err
		}
		c, err := change(w, r, a, r.PathValue("id"))
		if err != nil {
			return err
		}
		return writeComment(w, r, http.StatusOK, c)
	}
}

func handleCommentCreate(cs *comments.Service) authedFunc {
	type anchorIn struct {
		Quote  *string `json:"quote"`
		Prefix *string `json:"prefix"`
		Suffix *string `json:"suffix"`
	}
	type request struct {
		Body     *string   `json:"body"`
		ParentID *string   `json:"parent_id"`
		Anchor   *anchorIn `json:"anchor"`
	}
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := comments.CanComment(a); err != nil {
			return err
		}
		body, err := decode[request](w, r)
		if err != nil {
			return err
		}
		in := comments.Input{Body: deref(body.Body), ParentID: deref(body.ParentID)}
		if an := body.Anchor; an != nil {
			in.Anchor = &comments.AnchorInput{Quote: deref(an.Quote), Prefix: deref(an.Prefix), Suffix: deref(an.Suffix)}
		}
		c, err := cs.Create(r.Context(), a, r.PathValue("id"), in)
		if err != nil {
			return err
		}
		return writeComment(w, r, http.StatusCreated, c)
	}
}

// handleCommentList answers a page of a document's threads: status open
// (the default), resolved or all; page and limit as for lists, counting
// threads.
func handleCommentList(cs *comments.Service) authedFunc {
	type response struct {
		Threads    []threadOut    `json:"threads"`
		Pagination paginationJSON `json:"pagination"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q, err := viewQuery(a, r)
		if err != nil {
			return err
		}
		p, err := documents.ParsePageQuery(q)
		if err != nil {
			return err
		}
		page, err := cs.List(r.Context(), a, r.PathValue("id"),
			comments.ListParams{Status: q.Get("status"), Page: p.Page, Limit: p.Limit})
		if err != nil {
			return err
		}
		out := response{Threads: make([]threadOut, 0, len(page.Threads)), Pagination: paginationJSON{
			CurrentPage: page.CurrentPage, Limit: page.Limit, Total: page.Total, TotalPages: page.TotalPages,
			HasMore: page.HasMore}}
		for i := range page.Threads {
			t := &page.Threads[i]
			root, err := commentJSON(r.Context(), t)
			if err != nil {
				return err
			}
			th := threadOut{commentOut: root, Replies: make([]commentOut, 0, len(t.Replies))}
			for j := range t.Replies {
				reply, err := commentJSON(r.Context(), &t.Replies[j])
				if err != nil {
					return err
				}
				th.Replies = append(th.Replies, reply)
			}
			out.Threads = append(out.Threads, th)
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

func handleCommentEdit(cs *comments.Service) authedFunc {
	type request struct {
		Body *string `json:"body"`
	}
	return commentAction(func(w http.ResponseWriter, r *http.Request, a quire.Actor, id string) (*quire.Comment, error) {
		body, err := decode[request](w, r)
		if err != nil {
			return nil, err
		}
		if body.Body == nil {
			return nil, quire.Invalid(map[string]string{"body": "is required"})
		}
		return cs.Edit(r.Context(), a, id, *body.Body)
	})
}

func handleCommentDelete(cs *comments.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := cs.Delete(r.Context(), a, r.PathValue("id")); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"message": "Comment deleted"})
	}
}

// handleCommentResolve resolves (resolve true) or reopens a thread. No
// body is needed.
func handleCommentResolve(cs *comments.Service, resolve bool) authedFunc {
	return commentAction(func(w http.ResponseWriter, r *http.Request, a quire.Actor, id string) (*quire.Comment, error) {
		return cs.Resolve(r.Context(), a, id, resolve)
	})
}

// handleCommentReact adds (on true) or takes back the caller's reaction
// of the path's emoji (URL-encoded).
func handleCommentReact(cs *comments.Service, on bool) authedFunc {
	return commentAction(func(w http.ResponseWriter, r *http.Request, a quire.Actor, id string) (*quire.Comment, error) {
		return cs.React(r.Context(), a, id, r.PathValue("emoji"), on)
	})
}
