package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestImportKilledMidwayAndRetriedDoesNotDuplicate starts a real `quire
// serve` on SQLite, kills it with SIGKILL while it imports an archive of
// importCrashFiles documents (once some are saved, before all are), starts
// it again on the same database and sends the same archive with the same
// Idempotency-Key: the retry (once the dead request's lease is over)
// matches the documents the first attempt saved and makes the others, so
// the quire holds each document once; a further retry replays the answer.
func TestImportKilledMidwayAndRetriedDoesNotDuplicate(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts quire")
	}
	const importCrashFiles = 1500
	bin := buildQuire(t)
	db := filepath.Join(t.TempDir(), "quire.db")
	migrate := exec.Command(bin, "migrate", "--db", db)
	migrate.Env = nodeEnv()
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("quire migrate: %v\n%s", err, out)
	}
	addUser(t, bin, db, "ed@example.test")
	flags := []string{"--idempotency-lease", "1s"}
	n := startNode(t, "A", bin, db, "http://docs.example.test", "", flags...)
	token := n.login(t, nil, "ed@example.test", twoNodePassword)

	// Half the files name an id of their own (free: it is kept), half do
	// not; they sit in ten directories.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range importCrashFiles {
		w, err := zw.Create(fmt.Sprintf("part-%d/doc-%04d.md", i%10, i))
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			fmt.Fprintf(w, "---\nid: %s\n---\n", uuid.Must(uuid.NewV7()))
		}
		fmt.Fprintf(w, "# Document %d\n\nText of document %d, linking to [the next](doc-%04d.md).\n", i, i, i+10)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "docs.zip")
	fw.Write(buf.Bytes())
	mw.Close()
	send := func(base string) (*http.Response, []byte, error) {
		req, _ := http.NewRequest("POST", base+"/api/documentation/import", bytes.NewReader(body.Bytes()))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Idempotency-Key", "move-in-1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res, b, err
	}
	total := func() int {
		var out struct{ Pagination struct{ Total int } }
		n.call(t, nil, "GET", "/api/documentation/documents?limit=1", token, nil).want(t, http.StatusOK, &out)
		return out.Pagination.Total
	}

	// The first attempt: killed once some documents are saved.
	done := make(chan error, 1)
	go func() {
		_, _, err := send(n.base)
		done <- err
	}()
	saved := 0
	for deadline := time.Now().Add(2 * time.Minute); saved < 20; time.Sleep(20 * time.Millisecond) {
		if saved = total(); time.Now().After(deadline) {
			t.Fatalf("no document saved in 2 minutes (%d)", saved)
		}
	}
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-n.exited
	if err := <-done; err == nil {
		t.Fatal("the import answered before the kill: nothing to resume (make the archive larger)")
	}
	n = startNode(t, "A2", bin, db, "http://docs.example.test", "", flags...)
	killedAt := total()
	if killedAt >= importCrashFiles {
		t.Fatalf("every document was saved before the kill (%d)", killedAt)
	}
	t.Logf("killed with %d of %d documents saved", killedAt, importCrashFiles)

	// The retry: refused as in progress until the dead request's lease
	// ends, then run.
	var rep struct {
		Created, Updated []struct{ Path, ID string }
		Refused          []struct{ Path, Reason string }
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		res, b, err := send(n.base)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == http.StatusConflict && time.Now().Before(deadline) {
			continue
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("retry: %d %s", res.StatusCode, b)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		break
	}
	if got := total(); got != importCrashFiles {
		t.Errorf("%d documents after the retry, want %d", got, importCrashFiles)
	}
	if len(rep.Refused) != 0 || len(rep.Created)+len(rep.Updated) != importCrashFiles || len(rep.Created) >= importCrashFiles {
		t.Errorf("retry: %d created, %d updated, refused %v", len(rep.Created), len(rep.Updated), rep.Refused)
	}
	ids := map[string]bool{}
	for _, d := range append(rep.Created, rep.Updated...) {
		ids[d.ID] = true
	}
	if len(ids) != importCrashFiles {
		t.Errorf("%d distinct documents in the report, want %d", len(ids), importCrashFiles)
	}

	// Once more: the kept answer, nothing imported.
	res, _, err := send(n.base)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "true" || total() != importCrashFiles {
		t.Errorf("replay: %d %q, %d documents", res.StatusCode, res.Header.Get("Idempotent-Replayed"), total())
	}
}
