package httpapi

import (
	"net/http"

	"quire"
	"quire/documents"
	"quire/wire"
)

// trashedOut is a document of the trash list: DOCUMENT without content,
// plus when and by whom it was deleted (product.md section 7).
type trashedOut struct {
	documentOut
	DeletedAt string     `json:"deleted_at"`
	DeletedBy personJSON `json:"deleted_by"`
}

func handleTrashList(d *documents.Service) authedFunc {
	return handlePage(documents.ParsePageQuery,
		func(r *http.Request, a quire.Actor, p documents.TrashParams) (*documents.Page, error) {
			return d.Trash(r.Context(), a, p)
		},
		func(page *documents.Page, i int, _ documents.TrashParams) any {
			doc := &page.Documents[i]
			return trashedOut{
				documentOut: wire.DocumentOf(doc, false),
				DeletedAt:   formatTime(doc.DeletedAt),
				DeletedBy:   personJSON{ID: doc.DeletedByID, Name: doc.DeletedByName},
			}
		})
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
