package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/internal/syncbuf"
	"quire/pgtest"
	"quire/sqlite"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer = syncbuf.Buffer

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// cli runs one command in-process and returns its stdout, stderr and error.
func cli(t *testing.T, getenv func(string) string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut syncBuffer
	err := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// send makes a request to url with a bearer token (none when "") and a
// Content-Type (none when ""), failing the test when no answer comes. The
// caller closes the response's body.
func send(t *testing.T, method, url, token, contentType string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// decoded returns res's status and its body decoded as a JSON object (nil
// when it is not one), and closes the body.
func decoded(res *http.Response) (int, map[string]any) {
	defer res.Body.Close()
	var v map[string]any
	json.NewDecoder(res.Body).Decode(&v)
	return res.StatusCode, v
}

func mustCLI(t *testing.T, getenv func(string) string, args ...string) string {
	t.Helper()
	out, stderr, err := cli(t, getenv, args...)
	if err != nil {
		t.Fatalf("quire %s: %v (stderr %s)", strings.Join(args, " "), err, stderr)
	}
	return out
}

func TestCLI(t *testing.T) {
	t.Parallel()
	db := migratedDB(t)
	getenv := env(map[string]string{"QUIRE_DB": db})
	ctx := context.Background()
	// Admin commands refuse a database that does not exist yet.
	mustCLI(t, getenv, "migrate")

	var ada map[string]any
	t.Run("user add creates an active user and prints it as JSON", func(t *testing.T) {
		out := mustCLI(t, getenv, "user", "add", "--email", "Ada@Example.com", "--name", "Ada Lovelace",
			"--role", "editor", "--department", "Engineering", "--password", "correct horse battery staple 42", "--json")
		if err := json.Unmarshal([]byte(out), &ada); err != nil {
			t.Fatalf("output %q is not one JSON object: %v", out, err)
		}
		want := map[string]any{"email": "ada@example.com", "name": "Ada Lovelace", "role": "editor", "roleLabel": "Editor",
			"department": "Engineering", "status": "active", "timezone": nil}
		for k, v := range want {
			if d := cmp.Diff(v, ada[k]); d != "" {
				t.Errorf("%s (-want +got): %s", k, d)
			}
		}
		if id, _ := ada["id"].(string); id == "" {
			t.Errorf("no id in %v", ada)
		}
	})

	t.Run("a duplicate email fails with one line on stderr", func(t *testing.T) {
		_, _, err := cli(t, getenv, "user", "add", "--email", "ada@example.com", "--name", "A", "--role", "viewer",
			"--password", "correct horse battery staple 42")
		if err == nil || strings.Contains(oneLine(err), "\n") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("an unknown role fails", func(t *testing.T) {
		if _, _, err := cli(t, getenv, "user", "add", "--email", "x@example.com", "--name", "X", "--role", "wizard",
			"--password", "correct horse battery staple 42"); err == nil {
			t.Fatal("no error")
		}
	})

	t.Run("user add without a password invites and prints the setup link", func(t *testing.T) {
		out := mustCLI(t, getenv, "user", "add", "--email", "bob@example.com", "--name", "Bob", "--role", "viewer",
			"--public-url", "https://docs.example.com")
		if !regexp.MustCompile(`https://docs\.example\.com/setup-password\?token=[A-Za-z0-9_-]{43}`).MatchString(out) {
			t.Fatalf("no setup link in %q", out)
		}
		u, err := openDB(t, db).UserByEmail(ctx, "bob@example.com")
		if err != nil || u.Status != quire.UserInvited {
			t.Fatalf("user %+v, err %v", u, err)
		}
	})

	t.Run("user invite prints the link", func(t *testing.T) {
		out := mustCLI(t, env(map[string]string{"QUIRE_DB": db, "QUIRE_PUBLIC_URL": "https://docs.example.com"}),
			"user", "invite", "--email", "carol@example.com", "--name", "Carol", "--role", "guest")
		if !strings.Contains(out, "https://docs.example.com/setup-password?token=") {
			t.Fatalf("no link in %q", out)
		}
	})

	t.Run("inviting a still-invited email again sends a new link", func(t *testing.T) {
		first := mustCLI(t, getenv, "user", "invite", "--email", "dora@example.com", "--name", "Dora", "--role", "viewer", "--json")
		again := mustCLI(t, getenv, "user", "invite", "--email", "dora@example.com", "--name", "Dora", "--role", "viewer", "--json")
		var a, b map[string]any
		if err := json.Unmarshal([]byte(first), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(again), &b); err != nil {
			t.Fatal(err)
		}
		if a["id"] != b["id"] || a["setupLink"] == b["setupLink"] || b["setupLink"] == nil {
			t.Fatalf("first %v, again %v", a, b)
		}
		if _, _, err := cli(t, getenv, "user", "invite", "--email", "ada@example.com", "--name", "Ada", "--role", "viewer"); err == nil {
			t.Fatal("inviting an active user's email was accepted")
		}
	})

	t.Run("flags may follow the positional arguments", func(t *testing.T) {
		out := mustCLI(t, env(nil), "user", "set-role", "ada@example.com", "viewer", "--db", db, "--json")
		var u map[string]any
		if err := json.Unmarshal([]byte(out), &u); err != nil || u["role"] != "viewer" || u["id"] != ada["id"] {
			t.Fatalf("output %q", out)
		}
	})

	t.Run("user list shows every user", func(t *testing.T) {
		// QUIRE_PUBLIC_URL is set for serve and invite in a deployment;
		// commands without that flag must not trip over it.
		out := mustCLI(t, env(map[string]string{"QUIRE_DB": db, "QUIRE_PUBLIC_URL": "https://docs.example.com"}), "user", "list")
		for _, e := range []string{"ada@example.com", "bob@example.com", "carol@example.com"} {
			if !strings.Contains(out, e) {
				t.Errorf("list lacks %s:\n%s", e, out)
			}
		}
	})

	t.Run("user disable disables", func(t *testing.T) {
		out := mustCLI(t, getenv, "user", "disable", "carol@example.com", "--json")
		if !strings.Contains(out, `"status":"disabled"`) {
			t.Fatalf("output %q", out)
		}
	})

	t.Run("user unlock clears a lock", func(t *testing.T) {
		s := openDB(t, db)
		now := time.Now()
		limits := quire.LoginLimits{Limit: 100, Window: time.Minute, LockThreshold: 1, LockDuration: time.Hour}
		if _, err := s.BeginLogin(ctx, "127.0.0.1", "ada@example.com", now, limits); err != nil {
			t.Fatal(err)
		}
		if err := s.LoginFailed(ctx, "ada@example.com", now, limits, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BeginLogin(ctx, "127.0.0.1", "ada@example.com", now, limits); quire.ErrorCode(err) != quire.EACCOUNTLOCKED {
			t.Fatalf("not locked: %v", err)
		}
		mustCLI(t, getenv, "user", "unlock", "ada@example.com")
		if _, err := s.BeginLogin(ctx, "127.0.0.1", "ada@example.com", now, limits); err != nil {
			t.Fatalf("still refused after unlock: %v", err)
		}
	})

	t.Run("projects and members", func(t *testing.T) {
		out := mustCLI(t, getenv, "project", "add", "Apollo", "--member", "ada@example.com", "--json")
		var p map[string]any
		if err := json.Unmarshal([]byte(out), &p); err != nil || p["id"] == "" {
			t.Fatalf("output %q", out)
		}
		out = mustCLI(t, getenv, "project", "add-member", "Apollo", "bob@example.com", "--json")
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]any{"ada@example.com", "bob@example.com"}, p["members"]); d != "" {
			t.Errorf("members (-want +got): %s", d)
		}
	})

	t.Run("roles can be listed and set", func(t *testing.T) {
		out := mustCLI(t, getenv, "role", "set", "reviewer", "--label", "Reviewer", "--docs", "view", "--json")
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil || r["docs"] != "view" || r["id"] != "reviewer" {
			t.Fatalf("output %q", out)
		}
		out = mustCLI(t, getenv, "role", "list")
		for _, k := range []string{"admin", "editor", "viewer", "guest", "reviewer"} {
			if !strings.Contains(out, k) {
				t.Errorf("role list lacks %s", k)
			}
		}
		if _, _, err := cli(t, getenv, "role", "set", "x", "--label", "X", "--docs", "everything"); err == nil {
			t.Error("a bad level was accepted")
		}
	})

	t.Run("migrate succeeds on a migrated database", func(t *testing.T) {
		mustCLI(t, getenv, "migrate")
	})

	t.Run("backup writes a copy that opens with the same users", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "copy.db")
		mustCLI(t, getenv, "backup", "--out", out)
		n, err := openDB(t, out).CountUsers(ctx)
		if err != nil || n != 4 {
			t.Fatalf("copy has %d users, err %v", n, err)
		}
	})

	t.Run("--help prints usage on stdout and succeeds", func(t *testing.T) {
		for _, args := range [][]string{{"--help"}, {"serve", "--help"}, {"user", "add", "--help"}, {"backup", "--help"}, {"role", "--help"}} {
			out, _, err := cli(t, getenv, args...)
			if err != nil || !strings.Contains(out, "quire") {
				t.Errorf("%v: err %v, out %q", args, err, out)
			}
		}
	})

	t.Run("unknown commands fail", func(t *testing.T) {
		if _, _, err := cli(t, getenv, "frobnicate"); err == nil {
			t.Error("no error")
		}
	})
}

func openDB(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestServeRejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"serve", "--min-password-length", "7"},
		{"serve", "--login-window", "-1s"},
		{"serve", "--tls-cert", "x.pem"},
		{"serve", "--trusted-proxies", "not-a-cidr"},
		{"serve", "--max-body", "lots"},
		{"serve", "--max-upload", "0"},
		{"serve", "--trash-retention", "-1h"},
		{"serve", "--trash-retention", "a month"},
		{"serve", "--memory-limit", "1MiB"},
		{"serve", "--memory-limit", "a lot"},
	} {
		_, _, err := cli(t, env(map[string]string{"QUIRE_DB": filepath.Join(t.TempDir(), "q.db")}), args...)
		if err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
	_, _, err := cli(t, env(map[string]string{"QUIRE_LOCK_THRESHOLD": "many"}), "serve")
	if err == nil || !strings.Contains(err.Error(), "QUIRE_LOCK_THRESHOLD") {
		t.Errorf("bad environment value: %v", err)
	}
}

// TestServeEndToEnd drives run() as the binary would: start on a free port,
// sign in as the printed administrator, call me, log out, then SIGTERM.
// Not parallel: its SIGTERM to the test process would stop every serve
// running beside it.
func TestServeEndToEnd(t *testing.T) {
	done, out, errOut := goServe(context.Background(), env(nil), "--db", migratedDB(t))

	var base, password string
	deadline := time.Now().Add(20 * time.Second)
	for base == "" || password == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no listening line; stdout %q stderr %q", out.String(), errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v; stderr %s", err, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if m := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(out.String()); m != nil {
			password = m[1]
		}
	}
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	call := func(method, path, token, body string) (int, map[string]any) {
		t.Helper()
		contentType := ""
		if body != "" {
			contentType = "application/json"
		}
		return decoded(send(t, method, base+path, token, contentType, strings.NewReader(body)))
	}
	status, login := call("POST", "/api/auth/login", "", fmt.Sprintf(`{"email":"admin@localhost","password":%q}`, password))
	if status != 200 {
		t.Fatalf("login: %d %v", status, login)
	}
	token, _ := login["accessToken"].(string)
	if status, me := call("GET", "/api/auth/me", token, ""); status != 200 || me["user"].(map[string]any)["role"] != "admin" {
		t.Fatalf("me: %d %v", status, me)
	}
	// In the web application the printed password leads to the password
	// page first, whatever page is asked for (product.md section 9).
	req, _ := http.NewRequest("GET", base+"/documents", nil)
	req.AddCookie(&http.Cookie{Name: "auth_token", Value: token})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if res, err := noFollow.Do(req); err != nil {
		t.Fatal(err)
	} else if res.Body.Close(); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/account/password?m=must-change" {
		t.Fatalf("web as the first administrator: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if status, _ := call("POST", "/api/auth/logout", token, ""); status != 200 {
		t.Fatalf("logout: %d", status)
	}
	if status, _ := call("GET", "/api/auth/me", token, ""); status != 401 {
		t.Fatalf("me after logout: %d", status)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, done, "SIGTERM")
	if strings.Contains(errOut.String(), password) {
		t.Error("the administrator's password reached the log")
	}
}

// TestBackupRefusesToOverwrite: quire backup --out keeps an existing file
// unless told --force, on both stores.
func TestBackupRefusesToOverwrite(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return migratedDB(t) },
		"postgres": func(t *testing.T) string { return pgtest.Start(t) },
	}
	for name, db := range stores {
		t.Run(name, func(t *testing.T) {
			getenv := env(map[string]string{"QUIRE_DB": db(t)})
			mustCLI(t, getenv, "migrate")
			out := filepath.Join(t.TempDir(), "backup")
			if err := os.WriteFile(out, []byte("last week's backup"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := cli(t, getenv, "backup", "--out", out)
			if err == nil || !strings.Contains(err.Error(), "--force") {
				t.Errorf("backup over an existing file: err %v, want a refusal naming --force", err)
			}
			if b, _ := os.ReadFile(out); string(b) != "last week's backup" {
				t.Errorf("the existing file was changed: %.40q", b)
			}
			mustCLI(t, getenv, "backup", "--out", out, "--force")
			if b, _ := os.ReadFile(out); string(b) == "last week's backup" || len(b) == 0 {
				t.Errorf("--force did not replace the file")
			}
			entries, _ := os.ReadDir(filepath.Dir(out))
			if len(entries) != 1 {
				t.Errorf("the backup directory holds %d files, want the backup alone", len(entries))
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		t.Run(arg+" prints the version, the commit and the Go version", func(t *testing.T) {
			out, _, err := cli(t, env(nil), arg)
			if err != nil {
				t.Fatal(err)
			}
			want := regexp.MustCompile(`^quire \S+ \(commit \S+, ` + regexp.QuoteMeta(runtime.Version()) + `\)\n$`)
			if !want.MatchString(out) {
				t.Errorf("quire %s printed %q, want %s", arg, out, want)
			}
		})
	}
}
