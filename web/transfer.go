package web

import (
	"errors"
	"io"
	"net/http"
	"os"

	"quire"
	"quire/docs"
	"quire/transfer"
)

// The Import page, and the Export links of the documents list and of a
// folder page (product.md section 16): the export itself is the API's
// GET /api/documentation/export, which the session cookie opens.

type importPage struct {
	layout
	Folders  []folderOption
	FolderID string
	Report   *transfer.Report
}

func (s *server) transferRoutes() {
	m := s.mux
	m.Handle("GET /import", s.signedIn(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		return s.renderImport(w, r, a, http.StatusOK, r.URL.Query().Get("folderId"), nil)
	}))
	m.Handle("POST /import", s.signedIn(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := docs.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		mr, err := r.MultipartReader()
		if err != nil {
			return errBadForm
		}
		var (
			spool  *os.File
			size   int64
			folder string
		)
		defer func() {
			if spool != nil {
				spool.Close()
				os.Remove(spool.Name())
			}
		}()
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return formError(err)
			}
			switch {
			case part.FormName() == "folderId":
				b, err := io.ReadAll(io.LimitReader(part, 100))
				if err != nil {
					return formError(err)
				}
				folder = string(b)
			case part.FormName() == "file" && spool == nil:
				if spool, err = os.CreateTemp("", "quire-import-*.zip"); err != nil {
					return err
				}
				if size, err = io.Copy(spool, io.LimitReader(part, transfer.MaxArchive+1)); err != nil {
					return formError(err)
				}
				if size > transfer.MaxArchive {
					return errTooLarge
				}
			}
			part.Close()
		}
		if spool == nil || size == 0 {
			s.renderImport(w, r, a, http.StatusBadRequest, folder, quire.Invalid(map[string]string{"file": "choose a zip archive of Markdown files"}))
			return nil
		}
		rep, err := s.cfg.Transfer.ImportZip(r.Context(), a, spool, size, folder)
		if err != nil {
			if st, ok := statusOf(errorCode(err)); ok && st < 500 {
				return s.renderImport(w, r, a, st, folder, err)
			}
			return err
		}
		p, err := s.importPage(r, a, folder)
		if err != nil {
			return err
		}
		p.Report = rep
		s.views.render(w, r, http.StatusOK, "import.html", p, s.logger)
		return nil
	}))
}

func formError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errTooLarge
	}
	return errBadForm
}

func (s *server) importPage(r *http.Request, a quire.Actor, folder string) (importPage, error) {
	p := importPage{layout: s.layout(r, &a, "Import"), FolderID: folder}
	p.Nav = "import"
	folders, err := s.docs.Folders(r.Context(), a)
	if err != nil {
		return p, err
	}
	p.Folders = folderOptions(folders)
	return p, nil
}

func (s *server) renderImport(w http.ResponseWriter, r *http.Request, a quire.Actor, status int, folder string, refusal error) error {
	if err := docs.Require(a, quire.LevelWrite); err != nil {
		return err
	}
	p, err := s.importPage(r, a, folder)
	if err != nil {
		return err
	}
	if refusal != nil {
		p.Error = quire.ErrorMessage(refusal)
		var e *quire.Error
		if errors.As(refusal, &e) {
			for k, v := range e.Fields {
				p.Fields[k] = v
			}
		}
	}
	s.views.render(w, r, status, "import.html", p, s.logger)
	return nil
}
