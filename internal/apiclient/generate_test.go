//go:build !apiclient

// Package apiclient is where the Go client generated from httpapi/openapi.json
// is tried. It holds no code of its own: TestGeneratedClient generates the
// client with oapi-codegen (a tool dependency in go.mod, default settings),
// at test time, from the document as it is now, so that an operation added to
// the document is generated, built and tried without a regeneration step,
// and nothing generated is kept in the tree.
package apiclient_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedClient generates the client into this package through a
// build overlay, builds it, and runs session_test.go (built only with
// -tags apiclient) against a real server.
func TestGeneratedClient(t *testing.T) {
	if testing.Short() {
		t.Skip("generating and building the client takes a while (-short)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to generate the client: %v", err)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	gen := filepath.Join(tmp, "client.gen.go")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), goBin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
		if testing.Verbose() {
			t.Logf("go %v:\n%s", args, out)
		}
	}
	run("tool", "oapi-codegen", "-package", "apiclient", "-generate", "types,client", "-o", gen,
		filepath.Join("..", "..", "httpapi", "openapi.json"))

	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(dir, "client.gen.go"): gen}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"test", "-count=1"}, raceFlag...)
	run(append(args, "-tags", "apiclient", "-overlay", overlayFile, "-run", "^TestSession$", "-v", ".")...)
}
