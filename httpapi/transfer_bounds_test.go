package httpapi

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
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

// socketBuffer is what the sockets of smallBufferServer and
// smallBufferClient hold each way, instead of the megabytes Linux grows
// them to on loopback: a transfer of a few MiB is then more than the
// sockets between them hold, and a reader that pauses holds up the writer
// (without them these tests moved 20 MiB of export and 48 MiB of padding
// per import, a minute of CPU under -race).
const socketBuffer = 64 << 10

// smallBuffers sets a socket's buffers to socketBuffer before it
// connects or listens (accepted sockets inherit the listener's).
func smallBuffers(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		if err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, socketBuffer); err == nil {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, socketBuffer)
		}
	}); cerr != nil {
		return cerr
	}
	return err
}

// smallBufferServer serves h on a listener with small socket buffers,
// after configure (when not nil) changes its http.Server.
func smallBufferServer(t *testing.T, h http.Handler, configure func(*http.Server)) *httptest.Server {
	t.Helper()
	l, err := (&net.ListenConfig{Control: smallBuffers}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	if configure != nil {
		configure(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// smallBufferClient is a client whose sockets have small buffers.
func smallBufferClient() *http.Client {
	d := &net.Dialer{Control: smallBuffers}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// heldImport is an import whose body is sent in two parts: a padding part
// (read and skipped by the server) at once, the archive when released.
type heldImport struct {
	pw      *io.PipeWriter
	mw      *multipart.Writer
	archive []byte
	done    chan *http.Response
}

// startImport starts an import to a smallBufferServer, from a
// smallBufferClient.
func startImport(t *testing.T, url, token string, archive []byte) *heldImport {
	t.Helper()
	pr, pw := io.Pipe()
	h := &heldImport{pw: pw, mw: multipart.NewWriter(pw), archive: archive, done: make(chan *http.Response, 1)}
	req, _ := http.NewRequest("POST", url+importPath, pr)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", h.mw.FormDataContentType())
	client := smallBufferClient()
	go func() {
		res, err := client.Do(req)
		if err != nil {
			t.Errorf("held import: %v", err)
			res = &http.Response{StatusCode: 0, Body: io.NopCloser(strings.NewReader(err.Error()))}
		}
		h.done <- res
	}()
	// More padding than the sockets between client and server hold (four
	// of socketBuffer, which the kernel may double): once it is written,
	// the server is reading it, in the handler.
	w, _ := h.mw.CreateFormField("padding")
	pad := bytes.Repeat([]byte("p"), 1<<20)
	for range 2 {
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
	t.Parallel()
	e := newEnv(t)
	editor := e.login(e.user("ed@example.com", "editor", "").Email)
	srv := smallBufferServer(t, e.server.Config.Handler, nil)
	held := []*heldImport{
		startImport(t, srv.URL, editor, tinyZip(t, "one.md")),
		startImport(t, srv.URL, editor, tinyZip(t, "two.md")),
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
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	doc := fx.create(ada, map[string]any{"title": "Big"})
	// It does not compress, and what follows the first MiB is many times
	// what the small sockets hold.
	big := make([]byte, 4<<20)
	rand.Read(big)
	fx.upload(ada, doc.ID, "big.bin", big)
	srv := smallBufferServer(t, fx.server.Config.Handler, func(s *http.Server) {
		s.ReadTimeout, s.WriteTimeout = time.Second, time.Second
	})

	t.Run("an export read with a pause", func(t *testing.T) {
		req, _ := http.NewRequest("GET", srv.URL+"/api/documentation/export", nil)
		req.Header.Set("Authorization", "Bearer "+ada)
		res, err := smallBufferClient().Do(req)
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
