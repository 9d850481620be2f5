package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
)

// TestExportAndImportCommands imports a folder of Markdown, exports
// everything, and imports the export into a second database.
func TestExportAndImportCommands(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "notes")
	os.MkdirAll(filepath.Join(src, "guides"), 0o755)
	os.WriteFile(filepath.Join(src, "index.md"), []byte("# Welcome\n\nRead [the guide](guides/setup.md#first).\n"), 0o644)
	os.WriteFile(filepath.Join(src, "guides", "setup.md"), []byte("---\ntags: [ops]\nstatus: published\n---\n# Setup\n"), 0o644)
	os.WriteFile(filepath.Join(src, "picture.png"), []byte("\x89PNG"), 0o644)

	out := mustCLI(t, getenv, "import", src, "--as", "ed@example.com")
	for _, want := range []string{"created  index.md  ", "created  guides/setup.md  ", "refused  picture.png: it is not a Markdown file", "2 created, 0 updated, 1 refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("import printed %q, want %q in it", out, want)
		}
	}
	if _, _, err := cli(t, getenv, "import", src, "--as", "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "no user") {
		t.Errorf("an unknown --as: %v", err)
	}

	zipPath := filepath.Join(dir, "export.zip")
	if out := mustCLI(t, getenv, "export", "--out", zipPath); !strings.Contains(out, "export written to "+zipPath) {
		t.Errorf("export printed %q", out)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	zr.Close()
	slices.Sort(names)
	if want := []string{"Welcome.md", "guides/", "guides/Setup.md"}; !slices.Equal(names, want) {
		t.Errorf("export holds %v, want %v", names, want)
	}
	if _, _, err := cli(t, getenv, "export", "--out", zipPath); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("an existing --out was not refused: %v", err)
	}
	mustCLI(t, getenv, "export", "--out", zipPath, "--force")
	// Each export is audited as the CLI's, with its count and no names.
	db := openDB(t, strings.TrimSpace(getenv("QUIRE_DB")))
	evs, err := db.AuditEvents(t.Context(), quire.AuditFilter{Action: quire.ActionDocumentExported, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("%d document.exported events, want 2 (the export refused for --force writes none)", len(evs))
	}
	for _, e := range evs {
		if e.Actor != nil || e.Target != nil || !cmp.Equal(e.Details, map[string]any{"count": float64(2), "via": "cli"}) {
			t.Errorf("export event: actor %v, target %v, details %v", e.Actor, e.Target, e.Details)
		}
	}

	// Into another database, reported as JSON.
	other := newDB(t)
	var rep struct {
		Created []struct{ Path, ID string }
		Refused []struct{ Path, Reason string }
	}
	if err := json.Unmarshal([]byte(mustCLI(t, other, "import", zipPath, "--as", "ed@example.com", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Created) != 2 || len(rep.Refused) != 0 {
		t.Errorf("import of the export: %+v", rep)
	}
}

// TestImportCommandOptions: --visibility and --status apply to every
// document imported; a value that is not allowed is refused before
// anything is read.
func TestImportCommandOptions(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "notes")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "a.md"), []byte("---\nvisibility: private\n---\nA"), 0o644)
	os.WriteFile(filepath.Join(src, "b.md"), []byte("B"), 0o644)
	if _, _, err := cli(t, getenv, "import", src, "--as", "ed@example.com", "--visibility", "everyone"); err == nil ||
		!strings.Contains(err.Error(), "visibility must be private, department or public") {
		t.Errorf("a bad --visibility: %v", err)
	}
	if _, _, err := cli(t, getenv, "import", src, "--as", "ed@example.com", "--status", "gone"); err == nil ||
		!strings.Contains(err.Error(), "status must be one of") {
		t.Errorf("a bad --status: %v", err)
	}
	mustCLI(t, getenv, "import", src, "--as", "ed@example.com", "--visibility", "public", "--status", "review")
	zipPath := filepath.Join(dir, "export.zip")
	mustCLI(t, getenv, "export", "--out", zipPath)
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 2 {
		t.Fatalf("%d files exported", len(zr.File))
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if !strings.Contains(string(b), "\nstatus: \"review\"\nvisibility: \"public\"\n") {
			t.Errorf("%s:\n%s", f.Name, b)
		}
	}
}
