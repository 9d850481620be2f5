package httpapi

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"quire"
)

// tinyZip is an archive of one Markdown file.
func tinyZip(t *testing.T, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create(name)
	w.Write([]byte("# " + name))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// heldImport is an import whose body is sent in two parts: a padding part
// (read and skipped by the server) at once, the archive when released.
type heldImport struct {
	pw      *io.PipeWriter
	mw      *multipart.Writer
	archive []byte
	done    chan *http.Response
}

func startImport(t *testing.T, url, token string, archive []byte) *heldImport {
	t.Helper()
	pr, pw := io.Pipe()
	h := &heldImport{pw: pw, mw: multipart.NewWriter(pw), archive: archive, done: make(chan *http.Response, 1)}
	req, _ := http.NewRequest("POST", url+importPath, pr)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", h.mw.FormDataContentType())
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("held import: %v", err)
			res = &http.Response{StatusCode: 0, Body: io.NopCloser(strings.NewReader(err.Error()))}
		}
		h.done <- res
	}()
	// More padding than the sockets between client and server hold: once
	// it is written, the server is reading it, in the handler.
	w, _ := h.mw.CreateFormField("padding")
	pad := bytes.Repeat([]byte("p"), 1<<20)
	for range 48 {
		w.Write(pad)
	}
	return h
}

// release sends the archive and returns the answer.
func (h *heldImport) release() (int, string) {
	w, _ := h.mw.CreateFormFile("file", "docs.zip")
	w.Write(h.archive)
	h.mw.Close()
	h.pw.Close()
	res := <-h.done
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestImportsOverTheLimitAreTurnedAway(t *testing.T) {
	e := newEnv(t)
	editor := e.login(e.user("ed@example.com", "editor", "").Email)
	held := []*heldImport{
		startImport(t, e.server.URL, editor, tinyZip(t, "one.md")),
		startImport(t, e.server.URL, editor, tinyZip(t, "two.md")),
	}
	// Both hold their slot: a third import is turned away before its body
	// is read.
	body, ct := multipartFile(t, "file", "docs.zip", tinyZip(t, "probe.md"))
	r := e.do("POST", importPath, bearer(editor), rawBody(string(body)), header("Content-Type", ct))
	if r.Status != http.StatusServiceUnavailable {
		for _, h := range held {
			h.release()
		}
	}
	e.wantError(r, http.StatusServiceUnavailable, quire.EUNAVAILABLE)
	if got := r.Header.Get("Retry-After"); got != "30" {
		t.Errorf("Retry-After %q, want 30", got)
	}
	for _, h := range held {
		if status, body := h.release(); status != http.StatusOK || !strings.Contains(body, `"created":[{`) {
			t.Errorf("held import: %d %s", status, body)
		}
	}
	// The slots are free again.
	if r := e.do("POST", importPath, bearer(editor), rawBody(string(body)), header("Content-Type", ct)); r.Status != http.StatusOK {
		t.Errorf("import after the others: %d %s", r.Status, r.Body)
	}
}

// The export and the import behind a server with quire serve's timeouts
// shortened to 1 s: each lasts longer, with pauses shorter than the idle
// limit (transferIdle), and is whole.
func TestLongExportAndImportOutlastTheServerTimeouts(t *testing.T) {
	fx, ada := newDocsFixtureWithAda(t)
	doc := fx.create(ada, map[string]any{"title": "Big"})
	big := make([]byte, 20<<20) // does not compress: more than the socket buffers hold
	rand.Read(big)
	fx.upload(ada, doc.ID, "big.bin", big)
	srv := httptest.NewUnstartedServer(fx.server.Config.Handler)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = time.Second, time.Second
	srv.Start()
	t.Cleanup(srv.Close)

	t.Run("an export read with a pause", func(t *testing.T) {
		req, _ := http.NewRequest("GET", srv.URL+"/api/documentation/export", nil)
		req.Header.Set("Authorization", "Bearer "+ada)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		first := make([]byte, 1<<20)
		if _, err := io.ReadFull(res.Body, first); err != nil {
			t.Fatalf("first MiB: %v", err)
		}
		time.Sleep(1500 * time.Millisecond) // the server's writes wait meanwhile
		rest, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("the export was cut after %d bytes: %v", len(first)+len(rest), err)
		}
		files := unzip(t, append(first, rest...))
		if got := files["Big.files/big.bin"]; got != string(big) {
			t.Errorf("the exported file has %d bytes, want %d (files %d)", len(got), len(big), len(files))
		}
	})

	t.Run("an import sent with a pause", func(t *testing.T) {
		h := startImport(t, srv.URL, ada, tinyZip(t, "late.md"))
		time.Sleep(1500 * time.Millisecond)
		if status, body := h.release(); status != http.StatusOK || !strings.Contains(body, `"path":"late.md"`) {
			t.Errorf("slow import: %d %s", status, body)
		}
	})
}
