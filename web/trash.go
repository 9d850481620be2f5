package web

import (
	"net/http"
	"net/url"
	"strconv"

	"quire"
	"quire/documents"
)

// The trash (product.md section 7) in the pages: the trash list with
// restore and delete-forever, the Undo after a delete, and the page a save
// meets when its document was deleted meanwhile, which keeps the typed
// text and offers to save it as a new document or to restore the document
// first.

// trashPage lists the trash.
type trashPage struct {
	layout
	Result     *documents.Page
	CanPurge   map[string]bool // by document id
	Prev, Next string
}

func handleTrashList(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelView); err != nil {
			return err
		}
		p := trashPage{layout: s.section(r, &a, "trash", "Trash"), CanPurge: map[string]bool{}}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			q = url.Values{}
		}
		params, err := documents.ParsePageQuery(q)
		if err != nil {
			params = documents.TrashParams{} // a bad page number shows the first page
		}
		if p.Result, err = d.Trash(r.Context(), a, params); err != nil {
			return err
		}
		for i := range p.Result.Documents {
			doc := &p.Result.Documents[i]
			p.CanPurge[doc.ID] = documents.CanPurge(a, doc)
		}
		page := func(n int) string {
			if n <= 1 {
				return "/trash"
			}
			return "/trash?page=" + strconv.Itoa(n)
		}
		if p.Result.CurrentPage > 1 {
			p.Prev = page(p.Result.CurrentPage - 1)
		}
		if p.Result.HasMore {
			p.Next = page(p.Result.CurrentPage + 1)
		}
		return s.show(w, r, http.StatusOK, "trash.html", p)
	}
}

// handleTrashRestore takes a document out of the trash and shows it. When
// the form is the page of an edit that met the deleted document (resume is
// "edit"), it carries the typed text: the editor is shown again with it,
// over the restored document, so that one more save keeps the changes.
func handleTrashRestore(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		id := r.PathValue("id")
		resume := r.PostForm.Get("resume") == "edit"
		doc, err := d.RestoreFromTrash(r.Context(), a, id)
		if resume {
			return s.editAgain(w, r, d, a, id, doc, err, readDocForm(r), http.StatusOK, func(p *editPage) {
				p.Flash = "The document is restored from the trash. Your text below is not saved yet: save it to keep your changes."
			})
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, "/documents/"+doc.ID+"?m=untrashed", http.StatusSeeOther)
		return nil
	}
}

// handlePurgeForm asks before deleting for good.
func handlePurgeForm(s *server, d *documents.Service) actorFunc {
	return handleConfirm(s, d.Trashed, mayPurge, "Delete for good: ", "trash", "purge.html")
}

func mayPurge(a quire.Actor, doc *quire.Document) error {
	if !documents.CanPurge(a, doc) {
		return quire.Errorf(quire.EFORBIDDEN, "Only the owner of the document or an administrator may delete it for good.")
	}
	return nil
}

func handlePurge(d *documents.Service) actorFunc {
	return handleByID(d.Purge, to("/trash?m=purged"))
}

// goneView is what the edit page says when the document it saves to is
// gone: deleted, or never visible to the editor.
type goneView struct {
	ID string
	// InTrash is set when the document is in the trash and the editor
	// may restore it.
	InTrash   bool
	DeletedBy string
}

// editAgain shows the editor again with the typed form f over doc, the
// document id as just read (err the read's error), answered with status
// once adjust has changed the page. A document that is gone is answered by
// documentGone, any other error is returned.
func (s *server) editAgain(w http.ResponseWriter, r *http.Request, d *documents.Service, a quire.Actor, id string, doc *quire.Document, err error, f docForm, status int, adjust func(p *editPage)) error {
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return s.documentGone(w, r, d, a, id, f)
	}
	if err != nil {
		return err
	}
	p, err := s.editPage(r, d, a, doc, f)
	if err != nil {
		return err
	}
	adjust(&p)
	return s.show(w, r, status, "edit.html", p)
}

// documentGone answers a save whose document is gone (404 from the
// service): the editor again, with the text as typed, as the form of a new
// document, and, when the document is in the trash for this editor, a way
// to restore it first. The typed text is never lost.
func (s *server) documentGone(w http.ResponseWriter, r *http.Request, d *documents.Service, a quire.Actor, id string, f docForm) error {
	gone := &goneView{ID: id}
	if doc, err := d.Trashed(r.Context(), a, id); err == nil {
		gone.InTrash, gone.DeletedBy = true, doc.DeletedByName
	} else if quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	p, err := s.editPage(r, d, a, nil, f)
	if err != nil {
		return err
	}
	p.Gone = gone
	p.Nav = "documents"
	p.Title = "Not saved: " + f.Title
	return s.show(w, r, http.StatusNotFound, "edit.html", p)
}
