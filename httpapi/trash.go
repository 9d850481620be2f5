package httpapi

import (
	"net/http"

	"quire"
	"quire/documents"
)

// trashedOut is a document of the trash list: DOCUMENT without content,
// plus when and by whom it was deleted (product.md section 7).
type trashedOut struct {
	documentOut
	DeletedAt string     `json:"deleted_at"`
	DeletedBy personJSON `json:"deleted_by"`
}

func handleTrashList(d *documents.Service) authedFunc {
	type response struct {
		Documents  []trashedOut   `json:"documents"`
		Pagination paginationJSON `json:"pagination"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelView); err != nil {
			return err
		}
		q, err := strictQuery(r)
		if err != nil {
			return err
		}
		p, err := documents.ParseTrashQuery(q)
		if err != nil {
			return err
		}
		page, err := d.Trash(r.Context(), a, p)
		if err != nil {
			return err
		}
		out := response{
			Documents:  make([]trashedOut, len(page.Documents)),
			Pagination: paginationOf(page),
		}
		for i := range page.Documents {
			doc := &page.Documents[i]
			out.Documents[i] = trashedOut{
				documentOut: documentJSON(doc, false).(documentOut),
				DeletedAt:   formatTime(doc.DeletedAt),
				DeletedBy:   personJSON{ID: doc.DeletedByID, Name: doc.DeletedByName},
			}
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

// handleTrashRestore takes no body; one sent is ignored, as by a delete.
func handleTrashRestore(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		doc, err := d.Keeping(keeping(r, quire.Reply{Kind: quire.ReplySavedDocument})).RestoreFromTrash(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		return reply(w, quire.Reply{Kind: quire.ReplySavedDocument}, doc)
	}
}

func handleTrashPurge(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		const msg = "Document permanently deleted"
		if err := d.Keeping(keeping(r, quire.Reply{Kind: quire.ReplyMessage, Message: msg})).Purge(r.Context(), a, r.PathValue("id")); err != nil {
			return err
		}
		return reply(w, quire.Reply{Kind: quire.ReplyMessage, Message: msg}, nil)
	}
}
