package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"quire"
	"quire/attachments"
	"quire/idempotency"
	"quire/wire"
)

// Files (product.md section 13).

// uploadSlack is what an upload's body may hold beyond the file itself:
// the multipart boundaries and headers, and small fields beside the file.
const uploadSlack = 1 << 20

// uploadRoutes are exempt from --max-body: their body is bounded by
// --max-upload (the file) and uploadSlack (the rest).
var uploadRoutes = map[string]bool{
	"POST /api/documentation/documents/{id}/attachments": true,
}

func handleAttachmentList(f *attachments.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		list, err := f.List(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"attachments": convertAll(list, wire.AttachmentOf)})
	}
}

// handleAttachmentCreate receives multipart/form-data with one part named
// file (other parts are read and ignored). The file is spooled before the
// store is asked, so the store's transaction never waits on the client.
// An Idempotency-Key is fingerprinted by the file's name and SHA-256 (not
// by the multipart body, whose boundary a client draws anew on a retry).
func handleAttachmentCreate(s *Server, f *attachments.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		docID := r.PathValue("id")
		keys := r.Header.Values(idempotency.Header)
		var key string
		if len(keys) > 0 {
			var err error
			if key, err = idempotencyKey(keys); err != nil {
				return err
			}
		}
		up, err := f.CheckUpload(r.Context(), a, docID) // the one check of the level
		if err != nil {
			return err
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
			return quire.Errorf(quire.EUNSUPPORTEDMEDIATYPE, "Content-Type must be multipart/form-data")
		}
		rc := http.NewResponseController(w)
		r.Body = &progressDeadline{ReadCloser: r.Body, set: rc.SetReadDeadline}
		u, err := receiveFile(r, f)
		// The answer is written after the whole upload, which may have
		// outlasted the server's write timeout.
		rc.SetWriteDeadline(time.Now().Add(transferIdle))
		if err != nil {
			return err
		}
		defer u.Close()
		create := func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
			at, err := up.Keeping(keeping(r, quire.Reply{Kind: quire.ReplyCreatedAttachment})).Create(r.Context(), u)
			if err != nil {
				return err
			}
			return reply(w, quire.Reply{Kind: quire.ReplyCreatedAttachment}, at)
		}
		if key == "" {
			return create(w, r, a)
		}
		return s.runIdempotent(w, r, a, key,
			idempotency.Fingerprint(r.Method, r.URL.RequestURI(), []byte(u.Name+"\x00"+u.SHA256)), nil, create)
	}
}

// receiveFile spools the one part named file of r's multipart body.
func receiveFile(r *http.Request, f *attachments.Service) (*attachments.Upload, error) {
	invalid := func(msg string) error { return quire.Invalid(map[string]string{"file": msg}) }
	bodyErr := func(err error) error {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return f.ErrTooLarge()
		}
		return invalid("must be sent as multipart/form-data")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, invalid("must be sent as multipart/form-data")
	}
	var u *attachments.Upload
	for {
		// NextPart reads past the rest of the part before (a field other
		// than file, ignored), within the body limit.
		part, err := mr.NextPart()
		if err == io.EOF && u != nil {
			return u, nil
		}
		if u != nil && (err != nil || part.FormName() == "file") {
			u.Close()
		}
		switch {
		case err == io.EOF:
			return nil, invalid("is required")
		case err != nil:
			return nil, bodyErr(err)
		case part.FormName() != "file":
			continue
		case u != nil:
			return nil, invalid("must be sent once")
		}
		src := &readErr{r: part}
		if u, err = f.Spool(src, part.FileName()); err != nil {
			if src.err != nil {
				return nil, bodyErr(src.err)
			}
			return nil, err
		}
	}
}

// readErr remembers the error of its reader other than io.EOF: the
// client's (a body cut short, past the limit) rather than the server's.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

func handleAttachmentDelete(f *attachments.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		const msg = "Attachment deleted"
		if err := f.Keeping(keeping(r, quire.Reply{Kind: quire.ReplyMessage, Message: msg})).Delete(r.Context(), a, r.PathValue("id")); err != nil {
			return err
		}
		return reply(w, quire.Reply{Kind: quire.ReplyMessage, Message: msg}, nil)
	}
}

// handleAttachmentContent serves a file's bytes to whoever sees its
// document, through http.ServeContent (ranges, HEAD, If-None-Match,
// If-Modified-Since) over a reader that reads one chunk per query. The
// answer may be kept by the browser but is checked again each time
// (no-cache: a document's visibility may change), and is sandboxed: a file
// opened in the browser runs nothing and reaches nothing of the site.
func handleAttachmentContent(f *attachments.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		at, err := f.Get(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		attachments.PrepareDownload(w, r, at)
		rc := http.NewResponseController(w)
		out := noStore{ResponseWriter: w, progress: &progressDeadline{set: rc.SetWriteDeadline}}
		http.ServeContent(out, r, "", at.CreatedAt, f.Open(r.Context(), a, at))
		return nil
	}
}

// transferIdle is how long a transfer of a file may go without progress.
// The server's read and write timeouts (60 s in quire serve) bound a whole
// request; a file of 25 MiB over a slow link takes longer, so each piece
// received or sent moves the deadline of its direction this far ahead:
// a slow client is served, a stalled one is cut off. Neither holds a
// database connection meanwhile.
const transferIdle = 60 * time.Second

// progressDeadline moves a deadline (set) transferIdle ahead of each read
// or write, at most once a second. As a body it reads through ReadCloser.
type progressDeadline struct {
	io.ReadCloser
	set   func(time.Time) error
	moved time.Time
}

func (p *progressDeadline) touch() {
	if now := time.Now(); now.Sub(p.moved) >= time.Second {
		p.moved = now
		p.set(now.Add(transferIdle)) // ErrNotSupported: the server's own deadline holds
	}
}

func (p *progressDeadline) Read(b []byte) (int, error) {
	p.touch()
	return p.ReadCloser.Read(b)
}

// noStore puts back the Cache-Control of every /api answer, which
// http.ServeContent takes off the errors it writes itself (416), and
// moves the write deadline as the bytes go out.
type noStore struct {
	http.ResponseWriter
	progress *progressDeadline
}

func (w noStore) Write(b []byte) (int, error) {
	w.progress.touch()
	return w.ResponseWriter.Write(b)
}

func (w noStore) WriteHeader(code int) {
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w noStore) Unwrap() http.ResponseWriter { return w.ResponseWriter }
