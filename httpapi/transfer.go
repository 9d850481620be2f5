package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"quire"
	"quire/documents"
	"quire/idempotency"
	"quire/transfer"
)

// Export and import (product.md section 16).

// importPath is the one route whose body may exceed --max-body: an
// archive, spooled to a temporary file, up to transfer.MaxArchive.
const importPath = "/api/documentation/import"

// importBusy is how long a client turned away because transfer.MaxImports
// imports are running is told to wait.
const importBusy = 30 * time.Second

// errImportsBusy turns an import away: the node runs transfer.MaxImports
// already (the API's and the Import page's together).
var errImportsBusy = &quire.Error{Code: quire.EUNAVAILABLE, RetryAfter: importBusy,
	Message: "This server is running " + strconv.Itoa(transfer.MaxImports) + " imports already; try again later"}

// handleExport streams the export. Each piece written moves the write
// deadline transferIdle ahead (as downloads do): an export that keeps
// going outlasts the server's write timeout; one cut midway is logged.
func handleExport(s *Server, x *transfer.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q, err := strictQuery(r)
		if err != nil {
			return err
		}
		if err := documents.Require(a, quire.LevelView); err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", "application/zip")
		h.Set("Content-Disposition", `attachment; filename="quire-export-`+time.Now().UTC().Format("2006-01-02")+`.zip"`)
		rc := http.NewResponseController(w)
		sw := &startedWriter{w: w, progress: &progressDeadline{set: rc.SetWriteDeadline}}
		if err := x.Export(r.Context(), a, q.Get("folderId"), sw); err != nil {
			if !sw.started {
				h.Del("Content-Type")
				h.Del("Content-Disposition")
				return err
			}
			s.logger.Warn("export cut", "request_id", requestID(r.Context()), "bytes", sw.n, "err", err)
			// Half a zip is sent: end the connection so that the client
			// sees a broken transfer, never a short archive that looks whole.
			panic(http.ErrAbortHandler)
		}
		return nil
	}
}

// startedWriter notes whether anything was written, and how much, and
// moves the write deadline as it goes.
type startedWriter struct {
	w        io.Writer
	progress *progressDeadline
	started  bool
	n        int64
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = true
	s.progress.touch()
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

// handleImport spools the archive and imports it. At most
// transfer.MaxImports run at once (x.TryImport, shared with the Import
// page): over it, 503 UNAVAILABLE with Retry-After, before the body is
// read. The upload moves the read deadline as bytes arrive, and the write
// deadline is moved when the import is done: an import longer than the
// server's timeouts still gets its answer.
func handleImport(s *Server, x *transfer.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q, err := strictQuery(r)
		if err != nil {
			return err
		}
		// Refused before the body is read.
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		opts := transfer.Options{FolderID: q.Get("folderId"), Visibility: q.Get("visibility"), Status: q.Get("status")}
		if err := opts.Check(); err != nil {
			return err
		}
		var key string
		if keys := r.Header.Values(idempotency.Header); len(keys) > 0 {
			if key, err = idempotencyKey(keys); err != nil {
				return err
			}
		}
		rc := http.NewResponseController(w)
		r.Body = &progressDeadline{ReadCloser: r.Body, set: rc.SetReadDeadline}
		mr, err := r.MultipartReader()
		if err != nil {
			return quire.Errorf(quire.EUNSUPPORTEDMEDIATYPE, "Content-Type must be multipart/form-data with one file")
		}
		release, ok := x.TryImport()
		if !ok {
			return errImportsBusy
		}
		defer release()
		// The archive is spooled to a file first: a slow client holds no
		// database connection, and the zip is read from the file.
		var spool *os.File
		defer func() {
			if spool != nil {
				spool.Close()
				os.Remove(spool.Name())
			}
		}()
		var size int64
		sum := sha256.New()
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return bodyError(err, "Request body is not valid multipart/form-data")
			}
			if part.FormName() != "file" || spool != nil {
				part.Close()
				continue
			}
			dir, err := transfer.SpoolDir()
			if err != nil {
				return err
			}
			if spool, err = os.CreateTemp(dir, "archive-*.zip"); err != nil {
				return err
			}
			size, err = io.Copy(io.MultiWriter(spool, sum), io.LimitReader(part, transfer.MaxArchive+1))
			if err != nil {
				return bodyError(err, "Request body could not be read")
			}
			if size > transfer.MaxArchive {
				return errTooLarge
			}
		}
		if spool == nil {
			return quire.Invalid(map[string]string{"file": "is required: a zip archive"})
		}
		run := func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
			rep, err := x.ImportZip(r.Context(), a, spool, size, opts)
			// The answer comes after the whole import, which may have
			// outlasted the server's write timeout.
			rc.SetWriteDeadline(time.Now().Add(transferIdle))
			if err != nil {
				return err
			}
			return writeJSON(w, http.StatusOK, rep)
		}
		if key == "" {
			return run(w, r, a)
		}
		// An Idempotency-Key is fingerprinted by the archive's SHA-256, not
		// by the multipart body, whose boundary a client draws anew on a
		// retry; the archive is never held in memory for it.
		return s.runIdempotent(w, r, a, key,
			idempotency.Fingerprint(r.Method, r.URL.RequestURI(), []byte(hex.EncodeToString(sum.Sum(nil)))), nil, run)
	}
}

// bodyError is a failure to read a request body: too large, or malformed.
func bodyError(err error, msg string) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errTooLarge
	}
	return quire.Invalid(map[string]string{"file": msg})
}
