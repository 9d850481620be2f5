package httpapi

import (
	"archive/zip"
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
)

// multipartFile is a multipart/form-data body with one part named field.
func multipartFile(t *testing.T, field, name string, content []byte) (body []byte, contentType string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, err := mw.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(content)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func unzip(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a zip (%d bytes): %v", len(b), err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		c, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(c)
	}
	return out
}

func TestExportAndImportOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor := e.login(e.user("ed@example.com", "editor", "").Email)
	viewer := e.login(e.user("vi@example.com", "viewer", "").Email)

	b := decodeDoc(t, e.do("POST", "/api/documentation/documents", bearer(editor), jsonBody(map[string]any{"title": "B", "content": "b"})))
	e.do("POST", "/api/documentation/documents", bearer(editor), jsonBody(map[string]any{"title": "A", "content": "see [B](/documents/" + b.ID + ")"}))

	r := e.do("GET", "/api/documentation/export", bearer(editor))
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/zip" ||
		!strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="quire-export-`) {
		t.Fatalf("export: %d %v", r.Status, r.Header)
	}
	files := unzip(t, r.Body)
	if !strings.Contains(files["A.md"], "see [B](B.md)") || !strings.Contains(files["B.md"], `title: "B"`) {
		t.Fatalf("export files %v", files)
	}
	// A viewer sees nothing of the editor's private drafts.
	if r := e.do("GET", "/api/documentation/export", bearer(viewer)); r.Status != http.StatusOK || len(unzip(t, r.Body)) != 0 {
		t.Errorf("viewer export: %d, %d files", r.Status, len(unzip(t, r.Body)))
	}
	e.wantError(e.do("GET", "/api/documentation/export?folderId=0190b2a4-0000-7000-8000-000000000000", bearer(editor)),
		http.StatusNotFound, quire.ENOTFOUND)
	e.wantError(e.do("GET", "/api/documentation/export"), http.StatusUnauthorized, quire.EUNAUTHORIZED)

	// The archive imported again updates both; a new file is created and
	// its link to A resolved; a hostile entry is refused alone.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(content))
	}
	w, _ := zw.Create("sub/C.md")
	w.Write([]byte("# C\nback to [A](../A.md)"))
	w, _ = zw.Create("../evil.md")
	w.Write([]byte("x"))
	zw.Close()
	body, ct := multipartFile(t, "file", "docs.zip", buf.Bytes())
	r = e.do("POST", "/api/documentation/import", bearer(editor), rawBody(string(body)), header("Content-Type", ct))
	if r.Status != http.StatusOK {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	var rep struct {
		Created, Updated []struct{ Path, ID string }
		Refused          []struct{ Path, Reason string }
	}
	r.decode(t, &rep)
	if len(rep.Updated) != 2 || len(rep.Created) != 1 || rep.Created[0].Path != "sub/C.md" ||
		len(rep.Refused) != 1 || rep.Refused[0].Path != "../evil.md" {
		t.Fatalf("report %s", r.Body)
	}
	c := decodeDoc(t, e.do("GET", "/api/documentation/documents/"+rep.Created[0].ID, bearer(editor)))
	var aID string
	for _, u := range rep.Updated {
		if u.Path == "A.md" {
			aID = u.ID
		}
	}
	// Its first heading is its title, shown above the content: not twice.
	if c.Content == nil || *c.Content != "back to [A](/documents/"+aID+")" || c.Title != "C" {
		t.Errorf("C's content %v", c.Content)
	}

	// Refusals.
	e.wantError(e.do("POST", "/api/documentation/import", bearer(viewer), rawBody(string(body)), header("Content-Type", ct)),
		http.StatusForbidden, quire.EFORBIDDEN)
	e.wantError(e.do("POST", "/api/documentation/import", bearer(editor), jsonBody(map[string]any{"file": "x"})),
		http.StatusUnsupportedMediaType, quire.EUNSUPPORTEDMEDIATYPE)
	other, otherCT := multipartFile(t, "attachment", "docs.zip", buf.Bytes())
	e.wantError(e.do("POST", "/api/documentation/import", bearer(editor), rawBody(string(other)), header("Content-Type", otherCT)),
		http.StatusBadRequest, quire.EVALIDATION)
	notZip, notZipCT := multipartFile(t, "file", "docs.zip", []byte("not a zip at all"))
	e.wantError(e.do("POST", "/api/documentation/import", bearer(editor), rawBody(string(notZip)), header("Content-Type", notZipCT)),
		http.StatusBadRequest, quire.EVALIDATION)
	e.wantError(e.do("POST", "/api/documentation/import?folderId=nope", bearer(editor), rawBody(string(body)), header("Content-Type", ct)),
		http.StatusBadRequest, quire.EVALIDATION)
	// Past --max-body (2 MiB here) but under the archive limit: taken.
	big := bytes.Repeat([]byte("x"), 3<<20)
	bigZip, _ := multipartFile(t, "file", "big.zip", big)
	if r := e.do("POST", "/api/documentation/import", bearer(editor), rawBody(string(bigZip)), header("Content-Type", ct)); r.Status == http.StatusRequestEntityTooLarge {
		t.Errorf("a 3 MiB archive was refused by --max-body")
	}
}

// TestImportRefusesHostileArchivesOverHTTP sends every kind of hostile
// entry in one archive through the API: each is refused by name, the
// good file is imported, nothing else is made.
func TestImportRefusesHostileArchivesOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor := e.login(e.user("ed@example.com", "editor", "").Email)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name, content string, mode os.FileMode) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		if mode != 0 {
			h.SetMode(mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	add("good.md", "# Good", 0)
	add("../escape.md", "x", 0)
	add("/abs.md", "x", 0)
	add(`back\slash.md`, "x", 0)
	add("link.md", "/etc/passwd", os.ModeSymlink|0o777)
	add("big.md", strings.Repeat("a", 2<<20+1), 0)
	add("bomb.md", strings.Repeat("\x00", 1536<<10), 0)
	add("latin1.md", "caf\xe9", 0)
	add("notyaml.md", "---\ntitle: [x\n---\n", 0)
	add(strings.Repeat("d/", 40)+"deep.md", "x", 0)
	zw.Close()
	body, ct := multipartFile(t, "file", "hostile.zip", buf.Bytes())
	r := e.do("POST", "/api/documentation/import", bearer(editor), rawBody(string(body)), header("Content-Type", ct))
	var rep struct {
		Created []struct{ Path, ID string }
		Refused []struct{ Path, Reason string }
	}
	r.decode(t, &rep)
	if r.Status != http.StatusOK || len(rep.Created) != 1 || rep.Created[0].Path != "good.md" || len(rep.Refused) != 9 {
		t.Fatalf("import of a hostile archive: %d %s", r.Status, r.Body)
	}
	list := decodeList(t, e.do("GET", "/api/documentation/documents", bearer(editor)))
	if list.Pagination.Total != 1 {
		t.Errorf("%d documents after the import, want 1", list.Pagination.Total)
	}
}

// TestImportTakesAnIdempotencyKey: a retry of the same archive with the
// same key gets the kept report and imports nothing; the same key with
// another archive is refused.
func TestImportTakesAnIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor := e.login(e.user("ed@example.com", "editor", "").Email)
	archive := func(content string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("a.md")
		w.Write([]byte(content))
		zw.Close()
		return buf.Bytes()
	}
	send := func(zipped []byte, key string) *resp {
		// A fresh multipart body each time, with its own boundary, as a
		// client's retry sends it.
		body, ct := multipartFile(t, "file", "a.zip", zipped)
		return e.do("POST", "/api/documentation/import", bearer(editor), rawBody(string(body)),
			header("Content-Type", ct), header("Idempotency-Key", key))
	}
	first := send(archive("# A"), "import-1")
	if first.Status != http.StatusOK {
		t.Fatalf("import: %d %s", first.Status, first.Body)
	}
	again := send(archive("# A"), "import-1")
	if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("retry: %d %q %s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
	}
	if list := decodeList(t, e.do("GET", "/api/documentation/documents", bearer(editor))); list.Pagination.Total != 1 {
		t.Errorf("%d documents after a retried import, want 1", list.Pagination.Total)
	}
	e.wantError(send(archive("# B"), "import-1"), http.StatusUnprocessableEntity, quire.EIDEMPOTENCYKEYREUSED)
}

// TestImportOptionsOverHTTP: visibility and status in the query apply to
// every document of the archive; without them a new document takes its
// front matter's, else the importer's department and published; a value
// that is not allowed is refused before the archive is read.
func TestImportOptionsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor := e.login(e.user("ed@example.com", "editor", "Engineering").Email)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range map[string]string{"plain.md": "plain", "said.md": "---\nstatus: review\n---\nsaid"} {
		w, _ := zw.Create(name)
		w.Write([]byte(content))
	}
	zw.Close()
	body, ct := multipartFile(t, "file", "docs.zip", buf.Bytes())
	states := func(query string) map[string]string {
		t.Helper()
		r := e.do("POST", "/api/documentation/import"+query, bearer(editor), rawBody(string(body)), header("Content-Type", ct))
		if r.Status != http.StatusOK {
			t.Fatalf("import%s: %d %s", query, r.Status, r.Body)
		}
		var rep struct{ Created, Updated []struct{ Path, ID string } }
		r.decode(t, &rep)
		out := map[string]string{}
		for _, c := range append(rep.Created, rep.Updated...) {
			d := decodeDoc(t, e.do("GET", "/api/documentation/documents/"+c.ID, bearer(editor)))
			out[c.Path] = d.Visibility + " " + d.Status
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{"plain.md": "department published", "said.md": "department review"}, states("")); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	// The same archive again, with options: the same documents, updated.
	if diff := cmp.Diff(map[string]string{"plain.md": "public draft", "said.md": "public draft"},
		states("?visibility=public&status=draft")); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	for _, q := range []string{"?visibility=project", "?visibility=everyone", "?status=gone"} {
		got := e.wantError(e.do("POST", "/api/documentation/import"+q, bearer(editor), rawBody(string(body)), header("Content-Type", ct)),
			http.StatusBadRequest, quire.EVALIDATION)
		if fields, _ := got["fields"].(map[string]any); len(fields) != 1 {
			t.Errorf("%s: %v", q, got)
		}
	}
}
