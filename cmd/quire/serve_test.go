package main

import (
	"context"
	"net/http"
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

// startServe runs quire serve with args on 127.0.0.1:0 until the test ends
// (or stop is called) and returns once it listens.
func startServe(t *testing.T, getenv func(string) string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), getenv, strings.NewReader(""), s.stdout, s.stderr)
	}()
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
	db := filepath.Join(t.TempDir(), "quire.db")
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

// serveRefused runs quire serve with args, which the test expects to be
// refused, until it returns; one that listens instead is stopped and fails
// the test rather than hang it.
func serveRefused(t *testing.T, getenv func(string) string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), getenv, strings.NewReader(""), &out, &errOut)
	}()
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
