package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Names in an archive are someone else's: quire import prints one with
// control characters quoted, so that it cannot drive the terminal.
func TestImportPrintsNamesEscaped(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	archive := filepath.Join(t.TempDir(), "names.zip")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range []string{"\x1b]0;owned\x07title.md", "bad\rname.png", "plain name.md"} {
		w, _ := zw.Create(name)
		w.Write([]byte("# x"))
	}
	zw.Close()
	f.Close()
	out := mustCLI(t, getenv, "import", archive, "--as", "ed@example.com")
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("import printed control characters: %q", out)
	}
	for _, want := range []string{`created  "\x1b]0;owned\atitle.md"  `, `refused  "bad\rname.png": `, "created  plain name.md  "} {
		if !strings.Contains(out, want) {
			t.Errorf("import printed %q, want %q in it", out, want)
		}
	}
}
