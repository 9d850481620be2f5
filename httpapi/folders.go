package httpapi

import (
	"encoding/json"
	"net/http"

	"quire"
	"quire/documents"
)

// folderOut is a folder on the wire; parent_id is null at the top.
type folderOut struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	ParentID  *string `json:"parent_id"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

func newFolderOut(f *quire.Folder) folderOut {
	return folderOut{
		ID:        f.ID,
		Name:      f.Name,
		ParentID:  nullable(f.ParentID),
		CreatedAt: formatTime(f.CreatedAt),
		UpdatedAt: formatTime(f.UpdatedAt),
	}
}

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
	return handleList(d.Folders, "folders", newFolderOut)
}

func handleFolderCreate(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		body, err := decode[folderBody](w, r)
		if err != nil {
			return err
		}
		in := body.input()
		f, err := d.CreateFolder(keep(r, folderReply(http.StatusCreated)), a, in)
		if err != nil {
			return err
		}
		return folderReply(http.StatusCreated)(f).write(w)
	}
}

func handleFolderUpdate(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		body, err := decode[folderBody](w, r)
		if err != nil {
			return err
		}
		in := body.input()
		f, err := d.UpdateFolder(keep(r, folderReply(http.StatusOK)), a, r.PathValue("id"), in)
		if err != nil {
			return err
		}
		return folderReply(http.StatusOK)(f).write(w)
	}
}

func handleFolderDelete(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := d.DeleteFolder(keep(r, messageReply("Folder deleted")), a, r.PathValue("id")); err != nil {
			return err
		}
		return messageReply("Folder deleted")(nil).write(w)
	}
}

// folderReply renders a folder written with status.
func folderReply(status int) func(*quire.Folder) reply {
	return func(f *quire.Folder) reply {
		return reply{status: status, body: map[string]any{"folder": newFolderOut(f)}}
	}
}

// messageReply renders the answer of a delete.
func messageReply(message string) func(any) reply {
	return func(any) reply {
		return reply{status: http.StatusOK, body: map[string]string{"message": message}}
	}
}
