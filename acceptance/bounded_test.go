package acceptance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/documents"
)

// folderChain is an env holding a chain of n nested folders with names of
// the longest allowed length, and n documents in the deepest folder: the
// shape that made the folder pages grow with the square or the cube of n.
type folderChain struct {
	e       *env
	b       *browser
	folders []quire.Folder // top first
	doc     *quire.Document
}

func newFolderChain(t testing.TB, n int) *folderChain {
	t.Helper()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	a := e.actor(ed)
	ctx := context.Background()
	c := &folderChain{e: e}
	parent := ""
	for i := range n {
		name := fmt.Sprintf("%03d ", i) + strings.Repeat(string(rune('a'+i%26)), documents.MaxFolder-4)
		f, err := e.docs.CreateFolder(ctx, a, documents.FolderInput{Name: documents.Some(name), ParentID: documents.Some(parent)})
		if err != nil {
			t.Fatalf("folder %d: %v", i, err)
		}
		c.folders = append(c.folders, *f)
		parent = f.ID
	}
	for i := range n {
		c.doc = e.document(ed, documents.DocumentInput{Title: documents.Some(fmt.Sprintf("Document %d", i)), FolderID: documents.Some(parent)})
	}
	c.b = e.browser()
	c.b.login("ed@example.com", testPassword)
	return c
}

// request sends one request and reads at most limit bytes of the answer,
// without parsing it (an old /folders page of 100 folders was 103 MB).
// It returns the status, the size read (limit+1 when the body is longer)
// and the bytes the process allocated meanwhile, server included.
func (c *folderChain) request(t testing.TB, method, path string, form url.Values, limit int64) (int, int64, uint64) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.e.server.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := c.b.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, limit+1))
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	runtime.ReadMemStats(&after)
	return resp.StatusCode, n, after.TotalAlloc - before.TotalAlloc
}

// boundedPage is a page that lists folders, and how to ask for it.
type boundedPage struct {
	name   string
	status int
	do     func(c *folderChain) (method, path string, form url.Values)
}

var boundedPages = []boundedPage{
	{"the folders page", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/folders", nil
	}},
	{"the page of the deepest folder", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/folders/" + c.folders[len(c.folders)-1].ID, nil
	}},
	{"the page of the top folder", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/folders/" + c.folders[0].ID, nil
	}},
	{"a folder form that failed", http.StatusBadRequest, func(c *folderChain) (string, string, url.Values) {
		return "POST", "/folders/" + c.folders[0].ID, url.Values{"name": {""}, "parent_id": {""}}
	}},
	{"the new folder form that failed", http.StatusBadRequest, func(c *folderChain) (string, string, url.Values) {
		return "POST", "/folders", url.Values{"name": {""}}
	}},
	{"the documents list with its folder tree", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents", nil
	}},
	{"the top folder's page with the documents of its subfolders", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/folders/" + c.folders[0].ID + "?includeSubfolders=true", nil
	}},
	{"the documents of the top folder and below", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents?folderId=" + c.folders[0].ID + "&includeSubfolders=true", nil
	}},
	{"the empty top folder, counting below", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents?folderId=" + c.folders[0].ID, nil
	}},
	{"the documents of the deepest folder", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents?limit=100&folderId=" + c.folders[len(c.folders)-1].ID, nil
	}},
	{"a document in the deepest folder", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents/" + c.doc.ID, nil
	}},
	{"the new document form", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents/new", nil
	}},
	{"the edit form", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents/" + c.doc.ID + "/edit", nil
	}},
	{"a version", http.StatusOK, func(c *folderChain) (string, string, url.Values) {
		return "GET", "/documents/" + c.doc.ID + "/versions/1", nil
	}},
	{"a conflict that moved the document", http.StatusConflict, func(c *folderChain) (string, string, url.Values) {
		return "POST", "/documents/" + c.doc.ID, url.Values{
			"title": {"Mine"}, "content_type": {"markdown"}, "status": {"draft"}, "visibility": {"private"},
			"folder_id": {c.folders[0].ID}, "baseVersion": {"1"},
			"baseUpdatedAt": {c.doc.UpdatedAt.Add(-time.Second).UTC().Format(time.RFC3339Nano)},
		}
	}},
}

// TestFolderPagesAreLinear asks every page that lists folders with a chain
// of 25 folders and with one of 100 (and as many documents in the deepest
// one), and compares what each answer costs per folder: its size, and the
// bytes the server allocated to make it. Linear pages cost the same or less
// per folder at 100 as at 25 (fixed costs spread thinner); the old /folders
// page cost 16 times as much (a select of every full path in every row).
// Sizes and allocations, not times: the test holds on a loaded machine.
// Not parallel: it measures the allocations of the whole process.
func TestFolderPagesAreLinear(t *testing.T) {
	const small, large = 25, 100
	chains := map[int]*folderChain{small: newFolderChain(t, small), large: newFolderChain(t, large)}
	for _, pg := range boundedPages {
		t.Run(pg.name+" costs the same per folder at 100 folders as at 25", func(t *testing.T) {
			var size, alloc [2]float64
			for i, n := range []int{small, large} {
				c := chains[n]
				method, path, form := pg.do(c)
				var allocs []uint64
				for range 3 {
					status, got, a := c.request(t, method, path, form, 8<<20)
					if status != pg.status {
						t.Fatalf("%s %s with %d folders: status %d, want %d", method, path, n, status, pg.status)
					}
					if got > 8<<20 {
						t.Fatalf("%s %s with %d folders: more than 8 MiB", method, path, n)
					}
					size[i] = float64(got) / float64(n)
					allocs = append(allocs, a)
				}
				// The least of three: a collection or a background job
				// only ever adds.
				alloc[i] = float64(slices.Min(allocs)) / float64(n)
			}
			t.Logf("bytes sent per folder: %.0f at %d, %.0f at %d; bytes allocated per folder: %.0f, %.0f",
				size[0], small, size[1], large, alloc[0], alloc[1])
			if size[1] > 1.5*size[0] {
				t.Errorf("the answer grows faster than the folders: %.0f bytes per folder at %d, %.0f at %d", size[0], small, size[1], large)
			}
			if alloc[1] > 1.5*alloc[0] {
				t.Errorf("the work grows faster than the folders: %.0f bytes allocated per folder at %d, %.0f at %d", alloc[0], small, alloc[1], large)
			}
		})
	}
}

// BenchmarkFoldersPage measures GET /folders for the case of issue 13: 100
// nested folders with names of 200 characters.
//
//	go test ./acceptance -run '^$' -bench FoldersPage -benchtime 5x -count 5 -benchmem
func BenchmarkFoldersPage(b *testing.B) {
	c := newFolderChain(b, 100)
	var size int64
	for b.Loop() {
		status, n, _ := c.request(b, "GET", "/folders", nil, 1<<30)
		if status != http.StatusOK {
			b.Fatalf("status %d", status)
		}
		size = n
	}
	b.ReportMetric(float64(size), "bytes/response")
}
