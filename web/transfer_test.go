package web_test

import (
	"archive/zip"
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"quire/docs"
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
	e.document(ed, docs.DocumentInput{Title: docs.Some("Gamma")})
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
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "")
	editor := e.browser()
	editor.login(ed.Email, testPassword)
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
