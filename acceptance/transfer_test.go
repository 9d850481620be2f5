package acceptance

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/documents"
	"quire/transfer"
)

// postFile sends the Import form as a browser does: multipart, with the
// session cookie and the page's own origin.
func (b *browser) postFile(path, field, name string, content []byte, fields map[string]string) *page {
	b.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile(field, name)
	w.Write(content)
	mw.Close()
	req, err := http.NewRequest("POST", b.e.server.URL+path, &buf)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return &page{Status: resp.StatusCode, Header: resp.Header, Body: string(raw)}
}

func TestImportPageAndExportLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "")
	vi := e.user("vi@example.com", "viewer", "")
	editor, viewer := e.browser(), e.browser()
	editor.login(ed.Email, testPassword)
	viewer.login(vi.Email, testPassword)

	if p := viewer.get("/import"); p.Status != http.StatusForbidden {
		t.Errorf("GET /import as a viewer: %d", p.Status)
	}
	p := editor.get("/import")
	if p.Status != http.StatusOK || p.byID("import-file") == nil {
		t.Fatalf("GET /import: %d", p.Status)
	}
	if l := editor.get("/documents"); l.byID("import-link") == nil || l.byID("export-all") == nil {
		t.Error("the documents list has no Import or Export link")
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range map[string]string{"a.md": "# Alpha\nsee [b](team/b.md)", "team/b.md": "# Beta", "../x.md": "x"} {
		w, _ := zw.Create(name)
		w.Write([]byte(content))
	}
	zw.Close()
	p = editor.postFile("/import", "file", "notes.zip", buf.Bytes(), nil)
	if p.Status != http.StatusOK {
		t.Fatalf("POST /import: %d %s", p.Status, p.Body)
	}
	for _, want := range []string{"2 created, 0 updated, 1 refused", "a.md", "team/b.md", "../x.md", "leaves the archive"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if p := viewer.postFile("/import", "file", "notes.zip", buf.Bytes(), nil); p.Status != http.StatusForbidden {
		t.Errorf("POST /import as a viewer: %d", p.Status)
	}
	if p := editor.postFile("/import", "file", "empty.zip", nil, nil); p.Status != http.StatusBadRequest {
		t.Errorf("POST /import without a file: %d", p.Status)
	}

	// The Export links download with the session cookie.
	e.document(ed, documents.DocumentInput{Title: documents.Some("Gamma")})
	resp := editor.get("/api/documentation/export")
	if resp.Status != http.StatusOK || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("export with the cookie: %d %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	zr, err := zip.NewReader(strings.NewReader(resp.Body), int64(len(resp.Body)))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
	}
	if !names["Alpha.md"] || !names["team/Beta.md"] || !names["Gamma.md"] {
		t.Errorf("export holds %v", names)
	}
}

// TestImportPageOptions: the Import page offers the archive's visibility
// and status; chosen, they apply to every document; a value that is not
// allowed is shown on its field.
func TestImportPageOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, editor := e.signedInUser("ed@example.com", "editor", "")
	p := editor.get("/import")
	if p.byID("import-visibility") == nil || p.byID("import-status") == nil {
		t.Fatal("the Import page has no visibility or status choice")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("a.md")
	w.Write([]byte("---\nvisibility: private\nstatus: draft\n---\nA"))
	zw.Close()
	if p := editor.postFile("/import", "file", "notes.zip", buf.Bytes(), map[string]string{"visibility": "everyone"}); p.Status != http.StatusBadRequest ||
		!strings.Contains(p.Body, "must be private, department or public") {
		t.Errorf("a bad visibility: %d", p.Status)
	}
	p = editor.postFile("/import", "file", "notes.zip", buf.Bytes(), map[string]string{"visibility": "public", "status": "review"})
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "1 created") {
		t.Fatalf("POST /import: %d %s", p.Status, p.Body)
	}
	resp := editor.get("/api/documentation/export")
	zr, err := zip.NewReader(strings.NewReader(resp.Body), int64(len(resp.Body)))
	if err != nil || len(zr.File) != 1 {
		t.Fatalf("export: %v", err)
	}
	rc, _ := zr.File[0].Open()
	b, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(b), "\nstatus: \"review\"\nvisibility: \"public\"\n") {
		t.Errorf("imported as:\n%s", b)
	}
}

// The Import page counts against the node's limit of imports at once,
// the same as the API's (one transfer service for both, as quire serve
// builds them): with every slot taken, the page answers 503 with its
// advice and imports nothing, and the API does too.
func TestImportPageIsUnderTheNodesImportLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, editor := e.signedInUser("ed@example.com", "editor", "")
	archive := zipOf(t, map[string]string{"busy.md": "# Busy\n"})

	var releases []func()
	for range transfer.MaxImports {
		release, ok := e.xfer.TryImport()
		if !ok {
			t.Fatal("a slot was taken before the test")
		}
		releases = append(releases, release)
	}
	p := editor.postFile("/import", "file", "notes.zip", archive, nil)
	if p.Status != http.StatusServiceUnavailable || p.Header.Get("Retry-After") != "30" ||
		!strings.Contains(p.Body, "imports already, so nothing was imported") || !strings.Contains(p.Body, "Try again in half a minute") {
		t.Errorf("POST /import while busy: %d, Retry-After %q\n%s", p.Status, p.Header.Get("Retry-After"), p.Body)
	}
	if p := editor.postFile("/api/documentation/import", "file", "notes.zip", archive, nil); p.Status != http.StatusServiceUnavailable {
		t.Errorf("POST /api/documentation/import while busy: %d %s", p.Status, p.Body)
	}
	if _, n, err := e.store.ListDocuments(t.Context(), quire.DocumentFilter{Visibility: quire.Visibility{All: true}}); err != nil || n != 0 {
		t.Fatalf("documents after the refusals: %d %v", n, err)
	}

	releases[0]()
	if p := editor.postFile("/import", "file", "notes.zip", archive, nil); p.Status != http.StatusOK || !strings.Contains(p.Body, "1 created") {
		t.Errorf("POST /import with a slot free: %d\n%s", p.Status, p.Body)
	}
	releases[1]()
}

// The page spools the uploaded archive in the process's spool folder
// (transfer.SpoolDir), and removes it when the request ends. Not parallel:
// no other test spools meanwhile.
func TestImportPageSpoolsInTheSpoolFolder(t *testing.T) {
	e := newEnv(t)
	_, editor := e.signedInUser("ed@example.com", "editor", "")
	spool, err := transfer.SpoolDir()
	if err != nil {
		t.Fatal(err)
	}
	spooled := func() []string {
		names, _ := filepath.Glob(filepath.Join(spool, "archive-*"))
		return names
	}
	if names := spooled(); len(names) != 0 {
		t.Fatalf("spooled before the test: %v", names)
	}

	// The archive is sent in two pieces: the page has spooled the first
	// while it waits for the second.
	archive := zipOf(t, map[string]string{"spooled.md": "# Spooled\n" + strings.Repeat("x", 64<<10)})
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, _ := http.NewRequest("POST", e.server.URL+"/import", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range editor.header {
		req.Header[k] = v
	}
	done := make(chan *http.Response, 1)
	go func() {
		res, err := editor.client.Do(req)
		if err != nil {
			t.Errorf("import: %v", err)
		}
		done <- res
	}()
	fw, _ := mw.CreateFormFile("file", "notes.zip")
	fw.Write(archive[:len(archive)/2])
	// A wait, not a measure: how long the server takes is not asserted.
	var during []string
	for giveUp := time.Now().Add(20 * time.Second); len(during) == 0; during = spooled() {
		if time.Now().After(giveUp) {
			pw.CloseWithError(errors.New("given up"))
			t.Fatalf("nothing in the spool folder %s while the archive was uploaded", spool)
		}
		time.Sleep(5 * time.Millisecond)
	}
	fw.Write(archive[len(archive)/2:])
	mw.Close()
	pw.Close()
	res := <-done
	if res == nil {
		t.FailNow()
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "1 created") {
		t.Errorf("import: %d\n%s", res.StatusCode, body)
	}
	if len(during) != 1 {
		t.Errorf("spooled while uploading: %v", during)
	}
	if names := spooled(); len(names) != 0 {
		t.Errorf("left in the spool folder: %v", names)
	}
}

// zipOf is an archive of the files named.
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
