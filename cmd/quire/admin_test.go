package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/internal/tmpfs"
	"quire/mail/mailtest"
)

// adminCommands is one invocation of every command but serve, with
// arguments that would succeed on a database holding ada@example.com.
var adminCommands = [][]string{
	{"user", "add", "--email", "new@example.com", "--name", "New", "--role", "viewer", "--password", "correct horse battery staple 42"},
	{"user", "invite", "--email", "inv@example.com", "--name", "Inv", "--role", "viewer"},
	{"user", "set-role", "ada@example.com", "viewer"},
	{"user", "disable", "ada@example.com"},
	{"user", "enable", "ada@example.com"},
	{"user", "unlock", "ada@example.com"},
	{"user", "list"},
	{"project", "add", "Apollo"},
	{"project", "add-member", "Apollo", "ada@example.com"},
	{"role", "list"},
	{"role", "set", "viewer", "--label", "Viewer"},
	{"backup", "--out", "copy.db"},
	{"export", "--out", "export.zip"},
	{"import", "export.zip", "--as", "ada@example.com"},
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
	t.Parallel()
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
	t.Parallel()
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

// newDB returns the getenv that names a fresh, migrated SQLite database
// with ada@example.com an active administrator and ed@example.com an
// editor. The file is in memory (package tmpfs): these tests are about the
// commands, not durability.
//
// The CLI makes that database once per test process (quire migrate, then
// quire user add twice: seconds under the race detector) and each test
// gets a copy of the file.
func newDB(t *testing.T) func(string) string {
	t.Helper()
	return env(map[string]string{"QUIRE_DB": tmpfs.CopyOf(t, "ada-and-ed", "quire.db", func(path string) error {
		getenv := env(map[string]string{"QUIRE_DB": path})
		cmds := [][]string{{"migrate"}}
		for _, u := range [][2]string{{"ada@example.com", "admin"}, {"ed@example.com", "editor"}} {
			cmds = append(cmds, []string{"user", "add", "--email", u[0], "--name", u[0], "--role", u[1], "--password", "correct horse battery staple 42"})
		}
		for _, args := range cmds {
			var out, errOut syncBuffer
			if err := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errOut); err != nil {
				return fmt.Errorf("quire %s: %v (stderr %s)", strings.Join(args, " "), err, errOut.String())
			}
		}
		return nil
	})})
}

// roleOf returns the role key as quire role list --json prints it.
func roleOf(t *testing.T, getenv func(string) string, key string) map[string]any {
	t.Helper()
	return listed(t, getenv, "key", key, "role", "list", "--json")
}

// userOf returns the user as quire user list --json prints it.
func userOf(t *testing.T, getenv func(string) string, email string) map[string]any {
	t.Helper()
	return listed(t, getenv, "email", email, "user", "list", "--json")
}

// listed returns the record whose field is value in the JSON list that
// the command args prints.
func listed(t *testing.T, getenv func(string) string, field, value string, args ...string) map[string]any {
	t.Helper()
	var records []map[string]any
	if err := json.Unmarshal([]byte(mustCLI(t, getenv, args...)), &records); err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		if r[field] == value {
			return r
		}
	}
	t.Fatalf("no %s %s in %v", field, value, records)
	return nil
}

func TestRoleSetChangesOnlyTheFlagsGiven(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	// A second administrator, so that the admin role may lose its mark.
	mustCLI(t, getenv, "role", "set", "boss", "--label", "Boss", "--docs", "write", "--admin")
	mustCLI(t, getenv, "user", "set-role", "ed@example.com", "boss")

	steps := []struct {
		args []string
		want map[string]any
	}{
		{[]string{"admin", "--label", "Admin", "--docs", "none"},
			map[string]any{"id": "admin", "key": "admin", "label": "Admin", "docs": "none", "admin": true}},
		{[]string{"admin", "--docs", "view"},
			map[string]any{"id": "admin", "key": "admin", "label": "Admin", "docs": "view", "admin": true}},
		{[]string{"admin", "--no-admin"},
			map[string]any{"id": "admin", "key": "admin", "label": "Admin", "docs": "view", "admin": false}},
		{[]string{"admin", "--admin"},
			map[string]any{"id": "admin", "key": "admin", "label": "Admin", "docs": "view", "admin": true}},
		{[]string{"admin", "--admin=false", "--label", "Administrator"},
			map[string]any{"id": "admin", "key": "admin", "label": "Administrator", "docs": "view", "admin": false}},
		{[]string{"reviewer", "--label", "Reviewer", "--docs", "view"},
			map[string]any{"id": "reviewer", "key": "reviewer", "label": "Reviewer", "docs": "view", "admin": false}},
	}
	for _, s := range steps {
		out := mustCLI(t, getenv, append([]string{"role", "set", "--json"}, s.args...)...)
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %q", s.args, out)
		}
		if d := cmp.Diff(s.want, got); d != "" {
			t.Errorf("role set %v printed (-want +got):\n%s", s.args, d)
		}
		if d := cmp.Diff(s.want, roleOf(t, getenv, s.want["key"].(string))); d != "" {
			t.Errorf("after role set %v, role list (-want +got):\n%s", s.args, d)
		}
	}
	for _, args := range [][]string{
		{"role", "set", "newrole", "--docs", "view"},      // a new role needs a label
		{"role", "set", "newrole", "--label", "New"},      // and a level
		{"role", "set", "admin", "--docs", "everything"},  // a level is none, view or write
		{"role", "set", "admin", "--admin", "--no-admin"}, // one or the other
		{"role", "set", "admin", "--label", " "},          // a label is not blank
		{"role", "set", "two words", "--label", "X", "--docs", "view"},
	} {
		out, stderr, err := cli(t, getenv, args...)
		wantOneLineError(t, args, out, stderr, err)
	}
}

func TestLastAdministratorIsKept(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	refused := [][]string{
		{"role", "set", "admin", "--no-admin"},
		{"role", "set", "admin", "--admin=false", "--label", "Administrator"},
		{"user", "set-role", "ada@example.com", "editor"},
		{"user", "disable", "ada@example.com"},
	}
	for _, args := range refused {
		out, stderr, err := cli(t, getenv, args...)
		wantOneLineError(t, args, out, stderr, err)
		if quire.ErrorCode(err) != quire.ELASTADMIN || !strings.Contains(err.Error(), "no active administrator") {
			t.Errorf("quire %s: %v, want LAST_ADMIN", strings.Join(args, " "), err)
		}
	}
	if u := userOf(t, getenv, "ada@example.com"); u["role"] != "admin" || u["status"] != "active" {
		t.Fatalf("ada after refused changes: %v", u)
	}
	if r := roleOf(t, getenv, "admin"); r["admin"] != true {
		t.Fatalf("admin role after refused changes: %v", r)
	}
	// With a second administrator, the first may go, and then the second
	// may not.
	mustCLI(t, getenv, "user", "set-role", "ed@example.com", "admin")
	mustCLI(t, getenv, "user", "disable", "ada@example.com")
	if _, _, err := cli(t, getenv, "user", "set-role", "ed@example.com", "viewer"); quire.ErrorCode(err) != quire.ELASTADMIN {
		t.Errorf("demoting the last one left: %v", err)
	}
}

func TestUserEnable(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	mustCLI(t, getenv, "user", "invite", "--email", "inv@example.com", "--name", "Inv", "--role", "viewer")
	for _, email := range []string{"ed@example.com", "inv@example.com"} {
		mustCLI(t, getenv, "user", "disable", email)
		if s := userOf(t, getenv, email)["status"]; s != "disabled" {
			t.Fatalf("%s after disable: %v", email, s)
		}
	}
	out := mustCLI(t, getenv, "user", "enable", "ed@example.com", "--json")
	var u map[string]any
	if err := json.Unmarshal([]byte(out), &u); err != nil || u["status"] != "active" || u["email"] != "ed@example.com" {
		t.Fatalf("enable printed %q", out)
	}
	if !strings.Contains(mustCLI(t, getenv, "user", "enable", "inv@example.com"), "inv@example.com: enabled") {
		t.Error("no text line")
	}
	if s := userOf(t, getenv, "inv@example.com")["status"]; s != "invited" {
		t.Errorf("an invited user disabled and enabled is %v, want invited", s)
	}
	// Enabled, ed signs in again: its password still works.
	db := openDB(t, strings.TrimSpace(getenv("QUIRE_DB")))
	if got, err := db.UserByEmail(t.Context(), "ed@example.com"); err != nil || got.PasswordHash == "" {
		t.Errorf("ed: %+v, %v", got, err)
	}
	if _, _, err := cli(t, getenv, "user", "enable", "nobody@example.com"); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("enable of an unknown email: %v", err)
	}
}

func TestErrorsReadAsSentences(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	_, _, err := cli(t, getenv, "user", "add", "--email", "not-an-email", "--name", "X", "--role", "wizard",
		"--password", "correct horse battery staple 42")
	if err == nil {
		t.Fatal("accepted")
	}
	msg := oneLine(err)
	for _, want := range []string{"email must be an email address", "role is not a known role"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "map[") {
		t.Errorf("%q prints a Go map", msg)
	}
}

func TestServeExplainsDurationsAndTheirOrder(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "quire.db")
	_, _, err := serveRefused(t, env(nil), "--db", db, "--login-window", "15")
	if err == nil || !strings.Contains(err.Error(), "15m") || !strings.Contains(err.Error(), "--login-window") {
		t.Errorf("--login-window 15: %v, want a hint of 15m", err)
	}
	_, _, err = serveRefused(t, env(map[string]string{"QUIRE_TOKEN_TTL": "2"}), "--db", db)
	if err == nil || !strings.Contains(err.Error(), "2m") || !strings.Contains(err.Error(), "QUIRE_TOKEN_TTL") {
		t.Errorf("QUIRE_TOKEN_TTL=2: %v, want a hint of 2m", err)
	}
	_, _, err = serveRefused(t, env(nil), "--db", db, "--token-idle", "200h", "--token-ttl", "168h")
	if err == nil || !strings.Contains(err.Error(), "--token-idle") {
		t.Errorf("--token-idle longer than --token-ttl: %v", err)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused configuration created the database")
	}
}

func TestSecondInvitationSaysSo(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	first := mustCLI(t, getenv, "user", "invite", "--email", "dora@example.com", "--name", "Dora", "--role", "viewer")
	again := mustCLI(t, getenv, "user", "invite", "--email", "dora@example.com", "--name", "Dora", "--role", "viewer")
	if !strings.HasPrefix(first, "created dora@example.com") {
		t.Errorf("first invitation: %q", first)
	}
	if strings.Contains(again, "created") || !strings.HasPrefix(again, "invited dora@example.com again") {
		t.Errorf("second invitation: %q", again)
	}
	var rec map[string]any
	out := mustCLI(t, getenv, "user", "invite", "--email", "dora@example.com", "--name", "Dora", "--role", "viewer", "--json")
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec["invitedAgain"] != true {
		t.Errorf("--json: %q", out)
	}
}

func TestInvitationLinksWhereTheServerIsReached(t *testing.T) {
	t.Parallel()
	smtp := mailtest.NewServer(t)
	db := migratedDB(t)
	getenv := env(map[string]string{"QUIRE_DB": db})
	startServe(t, getenv, "--public-url", "https://docs.example.com", "--smtp-url", smtp.URL)

	// No --public-url, no QUIRE_PUBLIC_URL: the server's is used.
	out := mustCLI(t, getenv, "user", "invite", "--email", "dora@example.com", "--name", "Dora", "--role", "viewer")
	link := regexp.MustCompile(`https://docs\.example\.com/setup-password\?token=[A-Za-z0-9_-]{43}`)
	if !link.MatchString(out) {
		t.Errorf("printed link is not the server's: %q", out)
	}
	msgs := smtp.Wait(t, 1, 30*time.Second)
	p := msgs[0].MustParse(t)
	links := p.Links()
	if len(links) == 0 {
		t.Fatalf("no link in the mail:\n%s", p.Text)
	}
	for _, l := range links {
		if !link.MatchString(l) {
			t.Errorf("mailed link %q is not under https://docs.example.com", l)
		}
	}

	// An explicit --public-url still wins.
	out = mustCLI(t, getenv, "user", "invite", "--email", "eve@example.com", "--name", "Eve", "--role", "viewer",
		"--public-url", "https://other.example.com/")
	if !strings.Contains(out, "https://other.example.com/setup-password?token=") {
		t.Errorf("--public-url was not used: %q", out)
	}
}

func TestInvitationBeforeAnyServerSaysWhichURLItUsed(t *testing.T) {
	t.Parallel()
	getenv := newDB(t)
	out := mustCLI(t, getenv, "user", "invite", "--email", "dora@example.com", "--name", "Dora", "--role", "viewer")
	if !strings.Contains(out, "http://127.0.0.1:8080/setup-password?token=") || !strings.Contains(out, "pass --public-url") {
		t.Errorf("output %q", out)
	}
	if _, _, err := cli(t, getenv, "user", "invite", "--email", "x@example.com", "--name", "X", "--role", "viewer",
		"--public-url", "docs.example.com"); err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("a public URL without scheme: %v", err)
	}
}

// migratedDB returns the path of a fresh SQLite database that quire
// migrate created, with no users yet (serve's first start still creates
// the administrator): a copy, in memory (package tmpfs), of a file
// migrated once per test process, for tests of commands and of serve that
// are not about migrations or durability (TestMigrationsAreReported...,
// TestServeLogsTheMigrationsItApplied and the tests of backups keep files
// of their own). Under the race detector each migration costs about half
// a second of CPU.
func migratedDB(t *testing.T) string {
	t.Helper()
	return tmpfs.CopyOf(t, "migrated", "quire.db", func(path string) error {
		var out, errOut syncBuffer
		if err := run(context.Background(), []string{"migrate"}, env(map[string]string{"QUIRE_DB": path}), strings.NewReader(""), &out, &errOut); err != nil {
			return fmt.Errorf("quire migrate: %v (stderr %s)", err, errOut.String())
		}
		return nil
	})
}
