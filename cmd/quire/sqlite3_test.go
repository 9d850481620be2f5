package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaReadableByDistributionSQLite opens a freshly migrated database,
// with documents and their tags, with the distribution's own sqlite3
// (Debian 12: 3.40), which is older than the SQLite quire is built with:
// the schema must be readable by SQLite 3.37+, as operators' tools
// (sqlite3, Python, Litestream) are. Every table and view answers a query,
// the file passes integrity_check, and the full-text index agrees with the
// view it is built from (the view's tags in their order).
func TestSchemaReadableByDistributionSQLite(t *testing.T) {
	t.Parallel()
	bin := lookTool(t, "sqlite3", "QUIRE_REQUIRE_SQLITE3", "/usr/bin/sqlite3")
	getenv := newDB(t)
	src := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "a.md"), []byte("---\ntags: [zeta, alpha, mid]\n---\n# Tagged\n\nWords to index.\n"), 0o644)
	os.WriteFile(filepath.Join(src, "b.md"), []byte("# Untagged\n"), 0o644)
	mustCLI(t, getenv, "import", src, "--as", "ed@example.com")
	db := getenv("QUIRE_DB")

	sqlite3 := func(sql string) string {
		t.Helper()
		out, err := exec.Command(bin, "-batch", "-bail", db, sql).CombinedOutput()
		if err != nil {
			t.Fatalf("sqlite3 %q: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	t.Logf("sqlite3 %s", sqlite3("SELECT sqlite_version()"))
	if got := sqlite3("PRAGMA integrity_check"); got != "ok" {
		t.Errorf("integrity_check: %s", got)
	}
	names := strings.Fields(sqlite3("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY name"))
	if len(names) < 20 {
		t.Fatalf("only %d tables and views: %v", len(names), names)
	}
	for _, name := range names {
		sqlite3(`SELECT count(*) FROM "` + name + `"`)
	}
	if got := sqlite3("SELECT tags FROM documents_fts_source ORDER BY seq"); got != "zeta alpha mid" {
		t.Errorf("documents_fts_source's tags: %q, want %q", got, "zeta alpha mid")
	}
	// With rank 1, FTS5 also checks the index against its content (the view).
	sqlite3("INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 1)")
	if got := sqlite3("SELECT count(*) FROM documents_fts WHERE documents_fts MATCH 'alpha'"); got != "1" {
		t.Errorf("a search of a tag through sqlite3 found %s documents, want 1", got)
	}
}
