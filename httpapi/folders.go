package httpapi

import (
	"encoding/json"
	"net/http"

	"quire"
	"quire/documents"
	"quire/wire"
)

// folderBody is the body of a folder create or update, kept raw so that
// absent and null can be told apart.
type folderBody struct {
	Name     json.RawMessage `json:"name"`
	ParentID json.RawMessage `json:"parent_id"`
}

// input reads the members as documentBody.input does.
func (b folderBody) input() documents.FolderInput {
	errs := map[string]string{}
	in := documents.FolderInput{
		Name:     field[string](b.Name, "name", "a string", errs),
		ParentID: field[string](b.ParentID, "parent_id", "a string", errs),
		Invalid:  errs,
	}
	if _, bad := errs["name"]; bad {
		in.Name = documents.Some("x") // reported as of the wrong type, not as missing
	}
	return in
}

func handleFolderList(d *documents.Service) authedFunc {
	return handleList(d.Folders, "folders", wire.FolderOf)
}

func handleFolderCreate(d *documents.Service) authedFunc {
	return handleWrite(d, quire.ReplyCreatedFolder, func(wr documents.Writer, r *http.Request, body folderBody) (*quire.Folder, error) {
		return wr.CreateFolder(r.Context(), body.input())
	})
}

func handleFolderUpdate(d *documents.Service) authedFunc {
	return handleWrite(d, quire.ReplySavedFolder, func(wr documents.Writer, r *http.Request, body folderBody) (*quire.Folder, error) {
		return wr.UpdateFolder(r.Context(), r.PathValue("id"), body.input())
	})
}

func handleFolderDelete(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		const msg = "Folder deleted"
		if err := d.Keeping(keeping(r, quire.Reply{Kind: quire.ReplyMessage, Message: msg})).DeleteFolder(r.Context(), a, r.PathValue("id")); err != nil {
			return err
		}
		return reply(w, quire.Reply{Kind: quire.ReplyMessage, Message: msg}, nil)
	}
}
