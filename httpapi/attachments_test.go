package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

type attachmentWire struct {
	ID          string     `json:"id"`
	DocumentID  string     `json:"documentId"`
	Name        string     `json:"name"`
	ContentType string     `json:"contentType"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	CreatedAt   string     `json:"createdAt"`
	CreatedBy   personWire `json:"createdBy"`
	URL         string     `json:"url"`
}

// filePart is one part of a multipart body: a file when filename is set.
type filePart struct {
	field, filename, contentType string
	data                         []byte
}

// multipartBody sends the parts as multipart/form-data.
func multipartBody(parts ...filePart) reqOpt {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name=%q`, p.field)
		if p.filename != "" {
			cd += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			panic(err)
		}
		w.Write(p.data)
	}
	mw.Close()
	return func(c *reqConfig) {
		c.body, c.hasBody = b.Bytes(), true
		c.header.Set("Content-Type", mw.FormDataContentType())
	}
}

func fileBody(name string, data []byte) reqOpt {
	return multipartBody(filePart{field: "file", filename: name, contentType: "application/octet-stream", data: data})
}

func attachmentsPath(docID string) string { return docsPath + "/" + docID + "/attachments" }

// upload attaches data to the document as token, wanting 201.
func (fx *docsFixture) upload(token, docID, name string, data []byte, opts ...reqOpt) attachmentWire {
	fx.t.Helper()
	r := fx.do("POST", attachmentsPath(docID), append([]reqOpt{bearer(token), fileBody(name, data)}, opts...)...)
	if r.Status != http.StatusCreated {
		fx.t.Fatalf("upload %s: %d %s", name, r.Status, r.Body)
	}
	var out struct {
		Attachment attachmentWire `json:"attachment"`
	}
	strictDecode(fx.t, r.Body, &out)
	return out.Attachment
}

func (fx *docsFixture) attachmentList(token, docID string) []attachmentWire {
	fx.t.Helper()
	r := fx.do("GET", attachmentsPath(docID), bearer(token))
	if r.Status != http.StatusOK {
		fx.t.Fatalf("list attachments: %d %s", r.Status, r.Body)
	}
	var out struct {
		Attachments []attachmentWire `json:"attachments"`
	}
	strictDecode(fx.t, r.Body, &out)
	return out.Attachments
}

// Images of each inline type, made by the standard library's encoders
// (WebP, which it cannot write, by its RIFF header).
func pngBytes() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func jpegBytes() []byte {
	var b bytes.Buffer
	jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2)), nil)
	return b.Bytes()
}

func gifBytes() []byte {
	var b bytes.Buffer
	gif.Encode(&b, image.NewPaletted(image.Rect(0, 0, 2, 2), color.Palette{color.Black, color.White}), nil)
	return b.Bytes()
}

var webpBytes = []byte("RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00\x30\x01\x00\x9d\x01\x2a\x01\x00\x01\x00\x02\x00\x34\x25\xa4\x00\x03\x70\x00\xfe\xfb\x94\x00\x00")

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestAttachments(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	bob := fx.person("bob@example.com", "editor", "Engineering", false)
	carol := fx.person("carol@example.com", "editor", "Sales", false)
	vic := fx.person("vic@example.com", "viewer", "Engineering", false)
	root := fx.person("root@example.com", "admin", "", false)
	private := fx.create(ada, map[string]any{"title": "Ada's diary"})
	shared := fx.create(ada, map[string]any{"title": "Eng notes", "visibility": "department"})
	big := bytes.Repeat([]byte("0123456789abcdef"), 300_000/16) // more than one chunk

	var pic, large attachmentWire
	t.Run("an upload answers 201 with the file, its type sniffed from the bytes and not from the client", func(t *testing.T) {
		fx := fx.in(t)
		data := pngBytes()
		r := fx.do("POST", attachmentsPath(shared.ID), bearer(ada),
			multipartBody(filePart{field: "note", data: []byte("ignored")},
				filePart{field: "file", filename: `C:\shots\Screen shot.png`, contentType: "text/html", data: data}))
		if r.Status != http.StatusCreated {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		var out struct {
			Attachment attachmentWire `json:"attachment"`
		}
		strictDecode(t, r.Body, &out)
		pic = out.Attachment
		want := attachmentWire{
			ID: pic.ID, DocumentID: shared.ID, Name: "Screen shot.png", ContentType: "image/png", Size: int64(len(data)),
			SHA256: sha256Hex(data), CreatedAt: formatTime(fx.clock.Now()),
			CreatedBy: personWire{ID: fx.users["ada@example.com"].ID, Name: "Ada"},
			URL:       "/api/documentation/attachments/" + pic.ID + "/content",
		}
		if diff := cmp.Diff(want, pic); diff != "" {
			t.Errorf("attachment (-want +got):\n%s", diff)
		}
		if got := r.Header.Get("Location"); got != pic.URL {
			t.Errorf("Location %q, want %q", got, pic.URL)
		}
		large = fx.upload(bob, shared.ID, "big.txt", big)
		if diff := cmp.Diff([]attachmentWire{pic, large}, fx.attachmentList(vic, shared.ID)); diff != "" {
			t.Errorf("list as a viewer of the department (-want +got):\n%s", diff)
		}
		if got := fx.attachmentList(ada, private.ID); len(got) != 0 {
			t.Errorf("a document without files lists %v", got)
		}
	})

	t.Run("a download serves the bytes with their validators, sandboxed, images inline", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("GET", pic.URL, bearer(vic))
		if r.Status != http.StatusOK || !bytes.Equal(r.Body, pngBytes()) {
			t.Fatalf("download: %d, %d bytes", r.Status, len(r.Body))
		}
		for k, v := range map[string]string{
			"Content-Type": "image/png", "ETag": `"` + pic.SHA256 + `"`, "Content-Length": fmt.Sprint(pic.Size),
			"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox", "Accept-Ranges": "bytes",
			"Content-Disposition": `inline; filename="Screen shot.png"`, "Cache-Control": "no-store",
		} {
			if got := r.Header.Get(k); got != v {
				t.Errorf("%s: %q, want %q", k, got, v)
			}
		}
		if r := fx.do("HEAD", pic.URL, bearer(vic)); r.Status != http.StatusOK || r.Header.Get("Content-Length") != fmt.Sprint(pic.Size) {
			t.Errorf("HEAD: %d, Content-Length %q", r.Status, r.Header.Get("Content-Length"))
		}
		r = fx.do("GET", large.URL, bearer(vic))
		if !bytes.Equal(r.Body, big) {
			t.Errorf("a file of several chunks reads %d bytes, not as uploaded", len(r.Body))
		}
	})

	t.Run("If-None-Match with the ETag is 304", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("GET", pic.URL, bearer(vic), header("If-None-Match", `"`+pic.SHA256+`"`))
		if r.Status != http.StatusNotModified || len(r.Body) != 0 {
			t.Errorf("status %d with %d bytes, want 304 and none", r.Status, len(r.Body))
		}
		if r := fx.do("GET", pic.URL, bearer(vic), header("If-None-Match", `"other"`)); r.Status != http.StatusOK {
			t.Errorf("another ETag: %d, want 200", r.Status)
		}
	})

	t.Run("ranges are served, across chunks too, and one outside the file is 416", func(t *testing.T) {
		fx := fx.in(t)
		const from, to = quire.AttachmentChunkSize - 5, quire.AttachmentChunkSize + 9
		r := fx.do("GET", large.URL, bearer(vic), header("Range", fmt.Sprintf("bytes=%d-%d", from, to)))
		if r.Status != http.StatusPartialContent || !bytes.Equal(r.Body, big[from:to+1]) {
			t.Errorf("range across the chunk boundary: %d %q, want 206 %q", r.Status, r.Body, big[from:to+1])
		}
		if got, want := r.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", from, to, len(big)); got != want {
			t.Errorf("Content-Range %q, want %q", got, want)
		}
		r = fx.do("GET", large.URL, bearer(vic), header("Range", "bytes=-4"))
		if r.Status != http.StatusPartialContent || !bytes.Equal(r.Body, big[len(big)-4:]) {
			t.Errorf("suffix range: %d %q", r.Status, r.Body)
		}
		r = fx.do("GET", pic.URL, bearer(vic), header("Range", fmt.Sprintf("bytes=%d-", pic.Size+10)))
		if r.Status != http.StatusRequestedRangeNotSatisfiable {
			t.Errorf("range past the end: %d, want 416", r.Status)
		}
	})

	t.Run("types are sniffed; only PNG, JPEG, GIF and WebP are inline, SVG and HTML are downloads", func(t *testing.T) {
		fx := fx.in(t)
		for _, c := range []struct {
			name        string
			data        []byte
			contentType string
			disposition string
		}{
			{"photo.png", jpegBytes(), "image/jpeg", `inline; filename="photo.png"`},
			{"anim.gif", gifBytes(), "image/gif", `inline; filename="anim.gif"`},
			{"pic.webp", webpBytes, "image/webp", `inline; filename="pic.webp"`},
			{"logo.svg", []byte(`<?xml version="1.0"?>` + "\n" + `<!-- drawn --><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
				"image/svg+xml", `attachment; filename="logo.svg"`},
			{"bare.svg", []byte(`<svg viewBox="0 0 1 1"></svg>`), "image/svg+xml", `attachment; filename="bare.svg"`},
			{"page.png", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), "text/html; charset=utf-8",
				`attachment; filename="page.png"`},
			{"notes.txt", []byte("plain words"), "text/plain; charset=utf-8", `attachment; filename="notes.txt"`},
			{"blob", []byte{0, 1, 2, 3}, "application/octet-stream", `attachment; filename="blob"`},
			{"Übersicht \"Q1\".pdf", []byte("%PDF-1.4 x"), "application/pdf",
				`attachment; filename="_bersicht _Q1_.pdf"; filename*=UTF-8''%C3%9Cbersicht%20%22Q1%22.pdf`},
		} {
			a := fx.upload(ada, shared.ID, c.name, c.data)
			if a.ContentType != c.contentType {
				t.Errorf("%s: contentType %q, want %q", c.name, a.ContentType, c.contentType)
			}
			r := fx.do("GET", a.URL, bearer(ada))
			if got := r.Header.Get("Content-Disposition"); got != c.disposition {
				t.Errorf("%s: Content-Disposition %q, want %q", c.name, got, c.disposition)
			}
			if got := r.Header.Get("Content-Type"); got != c.contentType {
				t.Errorf("%s: Content-Type %q, want %q", c.name, got, c.contentType)
			}
			if r.Header.Get("Content-Security-Policy") != "sandbox" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: CSP %q, nosniff %q", c.name, r.Header.Get("Content-Security-Policy"), r.Header.Get("X-Content-Type-Options"))
			}
		}
	})

	t.Run("someone who cannot see the document gets 404 everywhere, and nothing is written", func(t *testing.T) {
		fx := fx.in(t)
		secret := fx.upload(ada, private.ID, "secret.txt", []byte("secret"))
		fx.wantError(fx.do("GET", secret.URL, bearer(bob)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("GET", pic.URL, bearer(carol)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("GET", attachmentsPath(private.ID), bearer(bob)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("POST", attachmentsPath(private.ID), bearer(bob), fileBody("x.txt", []byte("x"))),
			http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("DELETE", "/api/documentation/attachments/"+secret.ID, bearer(bob)), http.StatusNotFound, quire.ENOTFOUND)
		for _, id := range []string{"nope", unknownUUID} {
			fx.wantError(fx.do("GET", "/api/documentation/attachments/"+id+"/content", bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
			fx.wantError(fx.do("GET", attachmentsPath(id), bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		}
		if got := fx.attachmentList(ada, private.ID); len(got) != 1 {
			t.Errorf("%d files after refused writes, want 1", len(got))
		}
	})

	t.Run("without authentication every route is 401; a viewer or a read token may not write", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("GET", pic.URL), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		fx.wantError(fx.do("GET", attachmentsPath(shared.ID)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		fx.wantError(fx.do("POST", attachmentsPath(shared.ID), fileBody("x", []byte("x"))), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		fx.wantError(fx.do("DELETE", "/api/documentation/attachments/"+pic.ID), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		fx.wantError(fx.do("POST", attachmentsPath(shared.ID), bearer(vic), fileBody("x", []byte("x"))), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("DELETE", "/api/documentation/attachments/"+pic.ID, bearer(vic)), http.StatusForbidden, quire.EFORBIDDEN)
		_, read := fx.newAPIToken(ada, "script", "read")
		fx.wantError(fx.do("POST", attachmentsPath(shared.ID), bearer(read), fileBody("x", []byte("x"))), http.StatusForbidden, quire.EFORBIDDEN)
		if r := fx.do("GET", pic.URL, bearer(read)); r.Status != http.StatusOK {
			t.Errorf("a read token downloads: %d", r.Status)
		}
	})

	t.Run("a body that is not one file is refused", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("POST", attachmentsPath(shared.ID), bearer(ada), jsonBody(map[string]string{"file": "x"})),
			http.StatusUnsupportedMediaType, quire.EUNSUPPORTEDMEDIATYPE)
		fx.wantFields(fx.do("POST", attachmentsPath(shared.ID), bearer(ada), multipartBody(filePart{field: "other", data: []byte("x")})),
			map[string]string{"file": "is required"})
		two := filePart{field: "file", filename: "a", data: []byte("a")}
		fx.wantFields(fx.do("POST", attachmentsPath(shared.ID), bearer(ada), multipartBody(two, two)),
			map[string]string{"file": "must be sent once"})
		fx.wantFields(fx.do("POST", attachmentsPath(shared.ID), bearer(ada), header("Content-Type", "multipart/form-data; boundary=x"),
			rawBody("--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nunterminated")),
			map[string]string{"file": "must be sent as multipart/form-data"})
	})

	t.Run("files follow their document into the trash and out, and go with a purge", func(t *testing.T) {
		fx := fx.in(t)
		doc := fx.create(ada, map[string]any{"title": "Short-lived", "visibility": "public"})
		a := fx.upload(ada, doc.ID, "a.png", pngBytes())
		wantMessage(t, fx.do("DELETE", docsPath+"/"+doc.ID, bearer(ada)), "Document deleted")
		fx.wantError(fx.do("GET", a.URL, bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("GET", attachmentsPath(doc.ID), bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("POST", attachmentsPath(doc.ID), bearer(ada), fileBody("b", []byte("b"))), http.StatusNotFound, quire.ENOTFOUND)
		if r := fx.do("POST", trashPath+"/"+doc.ID+"/restore", bearer(ada)); r.Status != http.StatusOK {
			t.Fatalf("restore: %d %s", r.Status, r.Body)
		}
		if r := fx.do("GET", a.URL, bearer(carol)); r.Status != http.StatusOK || !bytes.Equal(r.Body, pngBytes()) {
			t.Errorf("after the restore: %d", r.Status)
		}
		wantMessage(t, fx.do("DELETE", docsPath+"/"+doc.ID, bearer(ada)), "Document deleted")
		wantMessage(t, fx.do("DELETE", trashPath+"/"+doc.ID, bearer(ada)), "Document permanently deleted")
		fx.wantError(fx.do("GET", a.URL, bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		_, err := fx.store.Attachment(context.Background(), quire.Visibility{All: true}, a.ID)
		if quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("after the purge the store still has the file: %v", err)
		}
	})

	t.Run("a delete removes the file, and both changes are in the audit log", func(t *testing.T) {
		fx := fx.in(t)
		a := fx.upload(bob, shared.ID, "gone.txt", []byte("bye"))
		wantMessage(t, fx.do("DELETE", "/api/documentation/attachments/"+a.ID, bearer(ada)), "Attachment deleted")
		fx.wantError(fx.do("GET", a.URL, bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("DELETE", "/api/documentation/attachments/"+a.ID, bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		r := fx.do("GET", "/api/admin/audit?targetId="+a.ID, bearer(root))
		if r.Status != http.StatusOK {
			t.Fatalf("audit: %d %s", r.Status, r.Body)
		}
		var evs struct {
			Events []struct {
				Action  string         `json:"action"`
				Actor   personWire     `json:"actor"`
				Target  map[string]any `json:"target"`
				Details map[string]any `json:"details"`
			} `json:"events"`
		}
		r.decode(t, &evs)
		var got []string
		for _, e := range evs.Events {
			got = append(got, e.Action+" by "+e.Actor.Name+" of "+fmt.Sprint(e.Target["type"], " ", e.Target["name"])+
				" in "+fmt.Sprint(e.Details["documentId"]))
		}
		want := []string{"attachment.deleted by Ada of attachment gone.txt in " + shared.ID,
			"attachment.created by Bob of attachment gone.txt in " + shared.ID}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("an Idempotency-Key replays the upload of the same file and refuses another", func(t *testing.T) {
		fx := fx.in(t)
		doc := fx.create(ada, map[string]any{"title": "Retried"})
		key := header("Idempotency-Key", "upload-1")
		first := fx.do("POST", attachmentsPath(doc.ID), bearer(ada), fileBody("a.txt", []byte("same")), key)
		again := fx.do("POST", attachmentsPath(doc.ID), bearer(ada), fileBody("a.txt", []byte("same")), key)
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || !bytes.Equal(first.Body, again.Body) {
			t.Fatalf("first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		if again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Location") != first.Header.Get("Location") {
			t.Errorf("replay headers: %v", again.Header)
		}
		if got := fx.attachmentList(ada, doc.ID); len(got) != 1 {
			t.Errorf("%d files after a retried upload, want 1", len(got))
		}
		fx.wantError(fx.do("POST", attachmentsPath(doc.ID), bearer(ada), fileBody("a.txt", []byte("other")), key),
			http.StatusUnprocessableEntity, quire.EIDEMPOTENCYKEYREUSED)
	})

	t.Run("the web session cookie uploads from the same origin and not from another", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("POST", attachmentsPath(shared.ID), cookie(cookieName, ada), header("Sec-Fetch-Site", "same-origin"),
			fileBody("c.txt", []byte("c")))
		if r.Status != http.StatusCreated {
			t.Errorf("same-origin upload with the cookie: %d %s", r.Status, r.Body)
		}
		fx.wantError(fx.do("POST", attachmentsPath(shared.ID), cookie(cookieName, ada), header("Sec-Fetch-Site", "cross-site"),
			fileBody("c.txt", []byte("c"))), http.StatusForbidden, quire.ECROSSORIGIN)
	})
}

func TestAttachmentLimits(t *testing.T) {
	t.Parallel()
	const maxUpload = 1000
	fx, ada := newDocsFixtureWithAda(t, withHTTPConfig(func(c *serverConfig) { c.MaxUpload, c.MaxBody = maxUpload, 100 }))
	doc := fx.create(ada, map[string]any{"title": strings.Repeat("t", 50)})

	t.Run("a file of --max-upload bytes passes, though the body is past --max-body", func(t *testing.T) {
		fx := fx.in(t)
		a := fx.upload(ada, doc.ID, "full.bin", bytes.Repeat([]byte{7}, maxUpload))
		if a.Size != maxUpload {
			t.Errorf("size %d", a.Size)
		}
	})
	t.Run("one byte more is 413 and nothing is stored", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("POST", attachmentsPath(doc.ID), bearer(ada), fileBody("over.bin", bytes.Repeat([]byte{7}, maxUpload+1)))
		fx.wantError(r, http.StatusRequestEntityTooLarge, quire.EPAYLOADTOOLARGE)
		r = fx.do("POST", attachmentsPath(doc.ID), bearer(ada), fileBody("huge.bin", bytes.Repeat([]byte{7}, 2<<20)))
		fx.wantError(r, http.StatusRequestEntityTooLarge, quire.EPAYLOADTOOLARGE)
		if got := fx.attachmentList(ada, doc.ID); len(got) != 1 {
			t.Errorf("%d files, want only the one that fitted", len(got))
		}
	})
	t.Run("other routes keep --max-body", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("PUT", docsPath+"/"+doc.ID, bearer(ada), jsonBody(map[string]any{"content": strings.Repeat("x", 200)}))
		fx.wantError(r, http.StatusRequestEntityTooLarge, quire.EPAYLOADTOOLARGE)
	})
}

// slowReader gives n bytes, a few at a time, pausing before each piece.
type slowReader struct {
	left  int
	piece int
	pause time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.pause)
	n := min(s.piece, s.left, len(p))
	for i := range n {
		p[i] = 'x'
	}
	s.left -= n
	return n, nil
}

func TestAttachmentSlowUpload(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	doc := fx.create(ada, map[string]any{"title": "Slow"})
	// The same API behind a server with quire serve's timeouts, shortened:
	// a whole request may last 2 s.
	srv := httptest.NewUnstartedServer(fx.server.Config.Handler)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 2*time.Second, 2*time.Second
	srv.Start()
	t.Cleanup(srv.Close)

	t.Run("an upload that keeps going outlasts the server's timeouts", func(t *testing.T) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			w, _ := mw.CreateFormFile("file", "slow.txt")
			// 120 pieces 50 ms apart: 6 s in all, never 2 s without a byte.
			_, err := io.Copy(w, &slowReader{left: 1200, piece: 10, pause: 50 * time.Millisecond})
			if err == nil {
				err = mw.Close()
			}
			pw.CloseWithError(err)
		}()
		req, _ := http.NewRequest("POST", srv.URL+attachmentsPath(doc.ID), pr)
		req.Header.Set("Authorization", "Bearer "+ada)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("slow upload: %v", err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"size":1200`) {
			t.Fatalf("slow upload: %d %s", res.StatusCode, body)
		}
	})
}
