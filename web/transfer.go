package web

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"quire"
	"quire/documents"
	"quire/transfer"
)

// The Import page, and the Export links of the documents list and of a
// folder page (product.md section 16): the export itself is the API's
// GET /api/documentation/export, which the session cookie opens.

type importPage struct {
	layout
	Folders  []folderOption
	FolderID string
	// The archive's visibility and status ("" for what each file's front
	// matter says, else the defaults) and the choices.
	Visibility, Status string
	Visibilities       []string
	Statuses           []string
	Report             *transfer.Report
}

func (s *server) transferRoutes() {
	m := s.mux
	m.Handle("GET /import", s.signedIn(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		return s.renderImport(w, r, a, http.StatusOK, transfer.Options{FolderID: r.URL.Query().Get("folderId")}, nil)
	}))
	m.Handle("POST /import", s.signedIn(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		mr, err := r.MultipartReader()
		if err != nil {
			return errBadForm
		}
		// The node's limit of imports at once, shared with the API's
		// (transfer.MaxImports), taken before the archive is read.
		release, ok := s.cfg.Transfer.TryImport()
		if !ok {
			setRetryAfter(w, errImportsBusy)
			return s.renderImport(w, r, a, http.StatusServiceUnavailable, transfer.Options{}, errImportsBusy)
		}
		defer release()
		var (
			spool *os.File
			size  int64
			opts  transfer.Options
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
			case part.FormName() == "folderId" || part.FormName() == "visibility" || part.FormName() == "status":
				b, err := io.ReadAll(io.LimitReader(part, 100))
				if err != nil {
					return formError(err)
				}
				switch part.FormName() {
				case "folderId":
					opts.FolderID = string(b)
				case "visibility":
					opts.Visibility = string(b)
				default:
					opts.Status = string(b)
				}
			case part.FormName() == "file" && spool == nil:
				// In the process's spool folder (swept at the next start
				// after a crash), removed when the request ends.
				dir, err := transfer.SpoolDir()
				if err != nil {
					return err
				}
				if spool, err = os.CreateTemp(dir, "archive-*.zip"); err != nil {
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
			s.renderImport(w, r, a, http.StatusBadRequest, opts, quire.Invalid(map[string]string{"file": "choose a zip archive of Markdown files"}))
			return nil
		}
		rep, err := s.cfg.Transfer.ImportZip(r.Context(), a, spool, size, opts)
		if err != nil {
			if st, ok := statusOf(errorCode(err)); ok && st < 500 {
				return s.renderImport(w, r, a, st, opts, err)
			}
			return err
		}
		p, err := s.importPage(r, a, opts)
		if err != nil {
			return err
		}
		p.Report = rep
		return s.show(w, r, http.StatusOK, "import.html", p)
	}))
}

// errImportsBusy turns an import away while the node runs
// transfer.MaxImports already; the API answers the same (503, Retry-After).
var errImportsBusy = &quire.Error{Code: quire.EUNAVAILABLE, RetryAfter: 30 * time.Second,
	Message: "This server is running " + strconv.Itoa(transfer.MaxImports) + " imports already, so nothing was imported. " +
		"Try again in half a minute."}

func formError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errTooLarge
	}
	return errBadForm
}

func (s *server) importPage(r *http.Request, a quire.Actor, opts transfer.Options) (importPage, error) {
	p := importPage{layout: s.section(r, &a, "import", "Import"), FolderID: opts.FolderID, Visibility: opts.Visibility, Status: opts.Status,
		Visibilities: []string{"private", "department", "public"}, Statuses: quire.Statuses}
	folders, err := s.docs.Folders(r.Context(), a)
	if err != nil {
		return p, err
	}
	p.Folders = folderOptions(folders)
	return p, nil
}

func (s *server) renderImport(w http.ResponseWriter, r *http.Request, a quire.Actor, status int, opts transfer.Options, refusal error) error {
	if err := documents.Require(a, quire.LevelWrite); err != nil {
		return err
	}
	p, err := s.importPage(r, a, opts)
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
	return s.show(w, r, status, "import.html", p)
}
