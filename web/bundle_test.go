package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The editor's bundle, static/live.js, is built from editor/ by npm run
// build (editor/build.mjs) and committed, so that quire builds and runs
// without npm. Its first lines name the SHA-256 of what it was built from;
// these tests fail when the sources changed since.

const editorDir = "editor"

// editorSourceHash computes what editor/build.mjs's sourceHash computes:
// the SHA-256 of one line per input, "<sha256 hex> <path>\n", the inputs
// being build.mjs, package.json, package-lock.json and every file under
// src/, as slash-separated paths relative to editor/, in byte order.
func editorSourceHash(t *testing.T) string {
	t.Helper()
	inputs := []string{"build.mjs", "package-lock.json", "package.json"}
	err := fs.WalkDir(os.DirFS(editorDir), "src", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			inputs = append(inputs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list the editor's sources: %v", err)
	}
	sort.Strings(inputs)
	var manifest strings.Builder
	for _, p := range inputs {
		b, err := os.ReadFile(filepath.Join(editorDir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatalf("read %s: %v", path.Join(editorDir, p), err)
		}
		sum := sha256.Sum256(b)
		manifest.WriteString(hex.EncodeToString(sum[:]) + " " + p + "\n")
	}
	sum := sha256.Sum256([]byte(manifest.String()))
	return hex.EncodeToString(sum[:])
}

var bundleHash = regexp.MustCompile(`(?m)^ \* sources-sha256: ([0-9a-f]{64}) \*/$`)

func TestEditorBundleIsFresh(t *testing.T) {
	t.Parallel()
	bundle, err := os.ReadFile(filepath.Join("static", "live.js"))
	if err != nil {
		t.Fatalf("read the bundle: %v (run npm run build in web/editor)", err)
	}
	head := bundle[:min(len(bundle), 1024)]
	m := bundleHash.FindSubmatch(head)
	if m == nil {
		t.Fatalf("static/live.js names no sources-sha256 in its header: run npm run build in web/editor")
	}
	if got, want := string(m[1]), editorSourceHash(t); got != want {
		t.Fatalf("static/live.js was built from other sources (sha256 %s, the sources are %s): run npm run build in web/editor", got, want)
	}
}

// TestEditorBundleRebuildsToTheSameBytes builds the bundle again into a
// temporary file and compares: the build is reproducible, and the
// committed bundle is what the committed sources and lock file give.
// It needs node and web/editor/node_modules (npm ci in web/editor).
func TestEditorBundleRebuildsToTheSameBytes(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: no node on this machine to rebuild the editor's bundle")
	}
	if _, err := os.Stat(filepath.Join(editorDir, "node_modules", "esbuild")); err != nil {
		t.Skip("skipped: web/editor/node_modules is not installed (npm ci in web/editor)")
	}
	out := filepath.Join(t.TempDir(), "live.js")
	cmd := exec.Command(node, "build.mjs", "--out", out)
	cmd.Dir = editorDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v\n%s", err, b)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("static", "live.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, committed) {
		t.Fatalf("a rebuild gives other bytes than static/live.js (%d vs %d bytes): run npm run build in web/editor", len(built), len(committed))
	}
}
