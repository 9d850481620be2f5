package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// server is one quire serve run in-process by startServe.
type server struct {
	base           string // http://127.0.0.1:PORT
	stdout, stderr *syncBuffer
	stop           func() error
}

// goServe runs quire serve with args on 127.0.0.1:0 until ctx ends, in a
// goroutine; its result comes on done, its output in stdout and stderr.
func goServe(ctx context.Context, getenv func(string) string, args ...string) (done <-chan error, stdout, stderr *syncBuffer) {
	result := make(chan error, 1)
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	go func() {
		result <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), getenv, strings.NewReader(""), stdout, stderr)
	}()
	return result, stdout, stderr
}

// waitStopped waits for the result of a serve that was told to stop (how
// names the way) and fails the test when it is an error or does not come
// within 15 seconds.
func waitStopped(t *testing.T, done <-chan error, how string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v after %s", err, how)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("serve did not stop within 15s of %s", how)
	}
}

// startServe runs quire serve with args on 127.0.0.1:0 until the test ends
// (or stop is called) and returns once it listens.
func startServe(t *testing.T, getenv func(string) string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{}
	done, stdout, stderr := goServe(ctx, getenv, args...)
	s.stdout, s.stderr = stdout, stderr
	stopped := false
	var result error
	s.stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case result = <-done:
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop within 30s")
			}
		}
		return result
	}
	t.Cleanup(func() { s.stop() })
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := listening.FindStringSubmatch(s.stdout.String()); m != nil {
			s.base = m[1]
			return s
		}
		select {
		case err := <-done:
			stopped, result = true, err
			t.Fatalf("serve stopped: %v; stderr %s", err, s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never listened; stdout %q stderr %q", s.stdout.String(), s.stderr.String())
		}
	}
}

func TestSecondServeOnOneSQLiteFileIsRefused(t *testing.T) {
	t.Parallel()
	db := migratedDB(t)
	getenv := env(map[string]string{"QUIRE_DB": db})
	first := startServe(t, getenv)

	out, stderr, err := serveRefused(t, getenv)
	wantOneLineError(t, []string{"serve"}, out, stderr, err)
	if err == nil || !strings.Contains(err.Error(), "another quire serve is already running on "+db) {
		t.Fatalf("second serve: %v", err)
	}
	// The first goes on, and admin commands work beside it.
	res, err := http.Get(first.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("first server's healthz: %d", res.StatusCode)
	}
	if !strings.Contains(mustCLI(t, getenv, "user", "list"), "admin@localhost") {
		t.Error("user list beside the server lacks the administrator")
	}

	// Once the first stops, its lock is gone.
	if err := first.stop(); err != nil {
		t.Fatalf("first serve: %v", err)
	}
	second := startServe(t, getenv)
	if err := second.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestSecondServeThroughASymlinkIsRefused: the lock is taken on the file
// itself, however it is named: through a symlinked folder, or a link to the
// file.
func TestSecondServeThroughASymlinkIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "quire.db")
	if err := os.Mkdir(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	startServe(t, env(map[string]string{"QUIRE_DB": db}))
	if err := os.Symlink(filepath.Join(dir, "data"), filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(db, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{filepath.Join(dir, "alias", "quire.db"), filepath.Join(dir, "link.db")} {
		out, stderr, err := serveRefused(t, env(map[string]string{"QUIRE_DB": other}))
		wantOneLineError(t, []string{"serve", "--db", other}, out, stderr, err)
		if err == nil || !strings.Contains(err.Error(), "another quire serve is already running on "+db) {
			t.Errorf("serve through %s: %v", other, err)
		}
	}
}

// serveRefused runs quire serve with args, which the test expects to be
// refused, until it returns; one that listens instead is stopped and fails
// the test rather than hang it.
func serveRefused(t *testing.T, getenv func(string) string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, out, errOut := goServe(ctx, getenv, args...)
	for {
		select {
		case err := <-done:
			return out.String(), errOut.String(), err
		case <-time.After(20 * time.Millisecond):
			if strings.Contains(out.String(), "listening") {
				cancel()
				<-done
				t.Fatalf("quire serve %v started: %q", args, out.String())
			}
		}
	}
}

// TestPublicURLWithAPathIsRefused: quire runs at the root of its host, so a
// --public-url under a path prefix (behind a proxy's location /wiki/) is
// refused at start with one line saying so, rather than serving pages whose
// links, redirects and assets all miss the prefix. A trailing slash alone is
// the root.
func TestPublicURLWithAPathIsRefused(t *testing.T) {
	t.Parallel()
	getenv := env(map[string]string{"QUIRE_DB": migratedDB(t)})
	mustCLI(t, getenv, "migrate")
	for _, args := range [][]string{
		{"--public-url", "https://example.com/wiki/"},
		{"--public-url", "https://example.com/wiki"},
		{"--public-url", "https://example.com/?x=1"},
	} {
		out, stderr, err := serveRefused(t, getenv, args...)
		wantOneLineError(t, append([]string{"serve"}, args...), out, stderr, err)
		if err == nil || !strings.Contains(err.Error(), "--public-url") {
			t.Errorf("serve %v: %v", args, err)
		}
	}
	if _, _, err := serveRefused(t, env(map[string]string{"QUIRE_DB": getenv("QUIRE_DB"), "QUIRE_PUBLIC_URL": "https://example.com/wiki/"})); err == nil ||
		!strings.Contains(err.Error(), "not under a path prefix") {
		t.Errorf("QUIRE_PUBLIC_URL with a path: %v", err)
	}
	if _, _, err := cli(t, getenv, "user", "invite", "--email", "x@example.com", "--name", "X", "--role", "viewer",
		"--public-url", "https://example.com/wiki/"); err == nil || !strings.Contains(err.Error(), "not under a path prefix") {
		t.Errorf("user invite --public-url with a path: %v", err)
	}
	s := startServe(t, getenv, "--public-url", "https://docs.example.com/")
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeMetricsOnTheirOwnAddressBehindAToken: --metrics-addr serves
// /metrics there alone, --metrics-token guards it.
func TestServeMetricsOnTheirOwnAddressBehindAToken(t *testing.T) {
	t.Parallel()
	const token = "metrics-token-of-the-test"
	getenv := env(map[string]string{"QUIRE_DB": migratedDB(t), "QUIRE_METRICS_TOKEN": token})
	s := startServe(t, getenv, "--metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`quire metrics on (http://\S+)`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no metrics line: %q", s.stdout.String())
	}
	get := func(url, token string) (int, string) {
		res := send(t, "GET", url, token, "", nil)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, _ := get(s.base+"/metrics", token); status != http.StatusNotFound {
		t.Errorf("/metrics on --addr: %d, want 404", status)
	}
	if status, _ := get(m[1], ""); status != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", status)
	}
	if status, body := get(m[1], token); status != http.StatusOK || !strings.Contains(body, "quire_database_size_bytes ") {
		t.Errorf("/metrics with the token: %d %.300s", status, body)
	}
	for _, args := range [][]string{{"--metrics-token", "short"}, {"--metrics-addr", "nowhere"}} {
		if _, _, err := serveRefused(t, getenv, args...); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("serve %v: %v", args, err)
		}
	}
}

// TestHealthcheck: quire healthcheck succeeds against a running server
// (QUIRE_ADDR, as the container sets it, an unspecified host asked on
// loopback) and fails in one line once it stopped.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	s := startServe(t, env(map[string]string{"QUIRE_DB": migratedDB(t)}))
	_, port, _ := strings.Cut(strings.TrimPrefix(s.base, "http://"), ":")
	getenv := env(map[string]string{"QUIRE_ADDR": "0.0.0.0:" + port})
	if out, stderr, err := cli(t, getenv, "healthcheck"); err != nil || !strings.HasPrefix(out, "ok: http://127.0.0.1:"+port+"/healthz") {
		t.Errorf("healthcheck of a running server: %v, %q %q", err, out, stderr)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := cli(t, getenv, "healthcheck")
	wantOneLineError(t, []string{"healthcheck"}, out, stderr, err)
}
