package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// adminCommands is one invocation of every command but serve, with
// arguments that would succeed on a database holding ada@example.com.
var adminCommands = [][]string{
	{"user", "add", "--email", "new@example.com", "--name", "New", "--role", "viewer", "--password", "correct horse battery staple 42"},
	{"user", "invite", "--email", "inv@example.com", "--name", "Inv", "--role", "viewer"},
	{"user", "set-role", "ada@example.com", "viewer"},
	{"user", "disable", "ada@example.com"},
	{"user", "unlock", "ada@example.com"},
	{"user", "list"},
	{"project", "add", "Apollo"},
	{"project", "add-member", "Apollo", "ada@example.com"},
	{"role", "list"},
	{"role", "set", "viewer", "--label", "Viewer"},
	{"backup", "--out", "copy.db"},
	{"migrate"},
}

// wantOneLineError fails the test unless err is an error whose message is
// one line, and nothing but that was written.
func wantOneLineError(t *testing.T, args []string, stdout, stderr string, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("quire %s: no error (stdout %q)", strings.Join(args, " "), stdout)
	case strings.ContainsAny(oneLine(err), "\n\r") || strings.TrimSpace(err.Error()) == "":
		t.Errorf("quire %s: error %q is not one line", strings.Join(args, " "), err)
	case stderr != "":
		t.Errorf("quire %s: stderr %q besides the error", strings.Join(args, " "), stderr)
	}
}

func TestBadDatabaseIsOneLineNotAPanic(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "passwd")
	if err := os.WriteFile(text, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"a missing folder":          filepath.Join(dir, "missing", "quire.db"),
		"a directory":               dir,
		"a text file":               text,
		"an unreachable PostgreSQL": "postgres://quire@127.0.0.1:1/quire?connect_timeout=2",
		"a MySQL URL":               "mysql://x",
		"an empty string":           "",
	}
	commands := append([][]string{{"serve", "--addr", "127.0.0.1:0"}}, adminCommands...)
	for what, db := range bad {
		t.Run(what, func(t *testing.T) {
			for _, args := range commands {
				args := append(append([]string{}, args...), "--db", db)
				out, stderr, err := cli(t, env(nil), args...)
				wantOneLineError(t, args, out, stderr, err)
			}
			if _, err := os.Stat(text); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(text); string(b) != "root:x:0:0:root:/root:/bin/bash\n" {
				t.Errorf("the text file was changed: %q", b)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "passwd-*")); len(m) > 0 {
				t.Errorf("files were created beside the text file: %v", m)
			}
		})
	}
}

func TestMissingDatabaseIsRefusedNotCreated(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "quire.db")
	for _, args := range adminCommands {
		if args[0] == "migrate" {
			continue
		}
		args := append(append([]string{}, args...), "--db", db)
		out, stderr, err := cli(t, env(nil), args...)
		wantOneLineError(t, args, out, stderr, err)
		if err != nil && !strings.Contains(err.Error(), "no quire database at "+db) {
			t.Errorf("quire %s: error %q does not say the database is missing", strings.Join(args, " "), err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Fatalf("quire %s created %v", strings.Join(args, " "), entries)
		}
	}
	// An empty file is no database either.
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, env(nil), "user", "list", "--db", db); err == nil || !strings.Contains(err.Error(), "no quire database") {
		t.Errorf("an empty file: %v", err)
	}
	os.Remove(db)
	mustCLI(t, env(nil), "migrate", "--db", db)
	mustCLI(t, env(nil), "user", "list", "--db", db)
}
