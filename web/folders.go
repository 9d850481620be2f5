package web

import (
	"net/http"

	"quire"
	"quire/docs"
)

// foldersPage shows the folder tree, with forms to add, rename, move and
// delete folders for writers.
type foldersPage struct {
	layout
	Folders []folderOption
	Parents map[string]string // folder → parent, for the move selects
	// Name and Parent refill the new-folder form after an error.
	Name, Parent string
	// EditID is the folder whose form failed, to show its error there.
	EditID string
}

func (s *server) foldersPage(r *http.Request, d *docs.Service, a quire.Actor) (foldersPage, error) {
	folders, err := d.Folders(r.Context(), a)
	if err != nil {
		return foldersPage{}, err
	}
	p := foldersPage{layout: s.layout(r, &a, "Folders"), Folders: folderOptions(folders), Parents: map[string]string{}}
	for _, f := range folders {
		p.Parents[f.ID] = f.ParentID
	}
	p.Nav = "folders"
	return p, nil
}

func handleFolderList(s *server, d *docs.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		p, err := s.foldersPage(r, d, a)
		if err != nil {
			return err
		}
		s.views.render(w, r, http.StatusOK, "folders.html", p, s.logger)
		return nil
	}
}

// folderFailed shows the folders page again with the error of one form, for
// the errors a reader can fix; others are answered as errors.
func (s *server) folderFailed(w http.ResponseWriter, r *http.Request, d *docs.Service, a quire.Actor, err error, editID string) error {
	code := quire.ErrorCode(err)
	if code != quire.EVALIDATION && code != quire.EFOLDERNOTEMPTY && code != quire.ECONFLICT {
		return err
	}
	p, perr := s.foldersPage(r, d, a)
	if perr != nil {
		return perr
	}
	p.Fields = validationFields(err)
	p.Error = quire.ErrorMessage(err)
	if code == quire.EFOLDERNOTEMPTY {
		p.Error = "This folder still holds documents or folders. Move or delete them first."
	}
	p.EditID = editID
	if editID == "" {
		p.Name, p.Parent = r.PostForm.Get("name"), r.PostForm.Get("parent_id")
	}
	status, _ := statusOf(code)
	s.views.render(w, r, status, "folders.html", p, s.logger)
	return nil
}

func handleFolderCreate(s *server, d *docs.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := docs.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		if err := parseForm(r); err != nil {
			return err
		}
		in := docs.FolderInput{Name: docs.Some(r.PostForm.Get("name")), ParentID: docs.Some(r.PostForm.Get("parent_id"))}
		if _, err := d.CreateFolder(r.Context(), a, in); err != nil {
			return s.folderFailed(w, r, d, a, err, "")
		}
		http.Redirect(w, r, "/folders?m=folder-created", http.StatusSeeOther)
		return nil
	}
}

// handleFolderUpdate renames and moves a folder (both fields are sent).
func handleFolderUpdate(s *server, d *docs.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := docs.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		if err := parseForm(r); err != nil {
			return err
		}
		id := r.PathValue("id")
		in := docs.FolderInput{Name: docs.Some(r.PostForm.Get("name")), ParentID: docs.Some(r.PostForm.Get("parent_id"))}
		if _, err := d.UpdateFolder(r.Context(), a, id, in); err != nil {
			return s.folderFailed(w, r, d, a, err, id)
		}
		http.Redirect(w, r, "/folders?m=folder-saved", http.StatusSeeOther)
		return nil
	}
}

func handleFolderDelete(s *server, d *docs.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		id := r.PathValue("id")
		if err := d.DeleteFolder(r.Context(), a, id); err != nil {
			return s.folderFailed(w, r, d, a, err, id)
		}
		http.Redirect(w, r, "/folders?m=folder-deleted", http.StatusSeeOther)
		return nil
	}
}
