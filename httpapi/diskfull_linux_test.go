package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"quire"
	"quire/sqlite"
)

// TestFullDisk runs quire on a SQLite file in a file system of 2 MiB (a
// tmpfs mounted for the test) and saves documents until it is full: a
// write then answers 503 UNAVAILABLE with Retry-After, not a 500, and
// /readyz answers 503 until a write succeeds again, once the file system
// has been given room. It needs to mount (root, or CAP_SYS_ADMIN); without
// that it skips, and TestDiskFull in package sqlite covers the same through
// SQLite's own page limit.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	onlyOn(t, "sqlite", "a full disk is a SQLite condition; PostgreSQL's is its server's")
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("SKIPPED LOUDLY: cannot mount a small tmpfs to fill (%v); run as root to test a real full disk", err)
	}
	// Registered before the store's Close, so it runs after it.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	e := newEnv(t, withStore(func(t testing.TB) quire.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(dir, "quire.db"))
		if err != nil {
			t.Fatalf("open sqlite on the small file system: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}))
	e.user("ada@example.com", "editor", "Engineering")
	tok := e.login("ada@example.com")

	save := func(e *env, i int) *resp {
		content := strings.Repeat(fmt.Sprintf("filler%d ", i), 30000) // about 250 KB
		return e.do("POST", docsPath, bearer(tok), jsonBody(map[string]any{"title": fmt.Sprintf("Filler %d", i), "content": content}))
	}
	var full *resp
	for i := range 100 {
		r := save(e, i)
		if r.Status == http.StatusCreated {
			continue
		}
		full = r
		break
	}
	if full == nil {
		t.Fatal("100 saves of 250 KB each fitted in 2 MiB")
	}

	t.Run("the save that finds the disk full is 503 UNAVAILABLE with Retry-After", func(t *testing.T) {
		e.withT(t).wantError(full, http.StatusServiceUnavailable, quire.EUNAVAILABLE)
		if n := retryAfter(t, full); n < 1 {
			t.Errorf("Retry-After %d", n)
		}
		if logs := e.logText(); !strings.Contains(logs, "full") {
			t.Errorf("the log does not say the disk is full:\n%s", logs)
		}
	})

	t.Run("readiness reports it, and reads go on", func(t *testing.T) {
		ready := e.withT(t).do("GET", "/readyz")
		body := e.withT(t).wantError(ready, http.StatusServiceUnavailable, quire.EUNAVAILABLE)
		if body["message"] != "The database's disk is full" {
			t.Errorf("message %q", body["message"])
		}
		if ready.Header.Get("Retry-After") == "" {
			t.Error("a 503 from /readyz without Retry-After")
		}
		if r := e.withT(t).do("GET", docsPath, bearer(tok)); r.Status != http.StatusOK {
			t.Errorf("a list: %d %s", r.Status, r.Body)
		}
	})

	t.Run("given room, the next save succeeds and readiness is back", func(t *testing.T) {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, "size=64m"); err != nil {
			t.Fatalf("grow the tmpfs: %v", err)
		}
		if r := save(e.withT(t), 1000); r.Status != http.StatusCreated {
			t.Fatalf("save with room: %d %s", r.Status, r.Body)
		}
		if r := e.withT(t).do("GET", "/readyz"); r.Status != http.StatusOK {
			t.Errorf("readyz: %d %s", r.Status, r.Body)
		}
	})
}
