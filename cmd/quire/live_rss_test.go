package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire"
	"quire/auth"
	"quire/documents"
	"quire/internal/testpass"
	"quire/live/livetest"
	"quire/sqlite"
)

// BenchmarkIdleLiveConnectionsRSS measures what 1,000 idle live
// connections cost the server (issue 33: at most 100 MiB of RSS): the real
// `quire serve`, built and run as a child process on a temporary SQLite
// file, and 1,000 WebSocket connections to one document from this process
// (50 people, 20 connections each: a node takes 20 of one person), each
// saying hello and reading its state, then reading what it is sent (as a
// browser does; the server's pings need an answer). It reads VmRSS and
// VmHWM of the server in /proc/<pid>/status once the document is loaded
// (one connection) and again with the 1,000, and reports the difference
// (MiB/1000conns) and the RSS before. The users and their sessions are
// made in this process before the server opens the file, so that the
// server hashes no password (argon2's 19 MiB would sit in its RSS). b.N
// is ignored beyond the first round.
//
//	go test ./cmd/quire -run '^$' -bench IdleLiveConnectionsRSS -benchtime 1x -count 3
func BenchmarkIdleLiveConnectionsRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/<pid>/status")
	}
	const people, perPerson = 50, 20
	bin := buildQuire(b)
	dir := b.TempDir()
	path := filepath.Join(dir, "quire.db")
	cookies, docID := seedLiveUsers(b, path, people)

	srv := startServeProcess(b, bin, dir, "--db", path, "--public-url", "http://docs.example.test")
	first, err := livetest.Dial(b, srv.base, cookies[0], docID, "first", nil)
	if err != nil {
		b.Fatal(err)
	}
	first.Until("state") // the document is loaded
	before := procStatus(b, srv.cmd.Process.Pid)

	b.ResetTimer()
	var (
		wg    sync.WaitGroup
		ended atomic.Int64 // connections that ended while measured
	)
	b.Cleanup(wg.Wait) // the readers end when the server or the client closes
	for p := range people {
		for i := range perPerson {
			if p == 0 && i == 0 {
				continue // first
			}
			c, err := livetest.Dial(b, srv.base, cookies[p], docID, fmt.Sprintf("p%d-c%d", p, i), nil)
			if err != nil {
				b.Fatalf("connection %d of person %d: %v", i, p, err)
			}
			c.Until("state")
			wg.Go(func() {
				for {
					if _, _, err := c.WS.Read(context.Background()); err != nil {
						ended.Add(1)
						return
					}
				}
			})
		}
	}
	b.StopTimer()
	after := procStatus(b, srv.cmd.Process.Pid)
	if n := ended.Load(); n != 0 {
		b.Fatalf("%d connections ended while they were measured", n)
	}
	mib := func(kib int64) float64 { return float64(kib) / 1024 }
	b.ReportMetric(mib(after["VmRSS"]-before["VmRSS"]), "MiB/1000conns")
	b.ReportMetric(mib(before["VmRSS"]), "RSS-before-MiB")
	b.ReportMetric(mib(after["VmRSS"]), "RSS-after-MiB")
	b.ReportMetric(mib(after["VmHWM"]), "HWM-MiB")
}

// seedLiveUsers makes the SQLite file at path with n active editors, a
// session of each (their cookies) and a public document of the first one.
func seedLiveUsers(tb testing.TB, path string, n int) (cookies []string, docID string) {
	tb.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	ac := auth.DefaultConfig()
	ac.HashPassword = func(string) (string, error) { return testpass.Hash(twoNodePassword), nil }
	as, err := auth.New(db, ac, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	var owner *quire.User
	for i := range n {
		email := fmt.Sprintf("p%d@example.com", i)
		u, _, err := as.CreateUser(ctx, auth.NewUser{Email: email, Name: fmt.Sprintf("Person %d", i), Role: "editor",
			Password: twoNodePassword})
		if err != nil {
			tb.Fatal(err)
		}
		if owner == nil {
			owner = u
		}
		sess, err := as.Login(ctx, quire.RequestInfo{IP: "192.0.2.1"}, email, twoNodePassword, "")
		if err != nil {
			tb.Fatal(err)
		}
		cookies = append(cookies, sess.Token)
	}
	d, err := documents.New(db, documents.Config{}).Create(ctx, quire.Actor{User: *owner}, documents.DocumentInput{
		Title: documents.Some("Plan"), Content: documents.Some(strings.Repeat("some text ", 100)),
		Visibility: documents.Some("public")})
	if err != nil {
		tb.Fatal(err)
	}
	return cookies, d.ID
}

// serveProcess is a `quire serve` child process.
type serveProcess struct {
	base   string
	cmd    *exec.Cmd
	stderr *syncBuffer
}

// startServeProcess starts bin serve with args on a free port in dir and
// waits for /healthz; the process is stopped (SIGINT, then killed) when
// the test ends.
func startServeProcess(tb testing.TB, bin, dir string, args ...string) *serveProcess {
	tb.Helper()
	s := &serveProcess{stderr: &syncBuffer{}}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)...)
	s.cmd.Env = nodeEnv()
	s.cmd.Dir = dir
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
		s.cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(livetest.HangGuard):
			s.cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case s.base = <-listening:
	case <-exited:
		tb.Fatalf("quire serve exited before listening: %s", tail(s.stderr.String(), 2000))
	case <-time.After(livetest.HangGuard):
		tb.Fatal("quire serve printed no listening line")
	}
	if err := awaitHealthz(s.base, livetest.HangGuard, exited); err != nil {
		tb.Fatal(err)
	}
	return s
}

// procStatus reads the memory lines of /proc/<pid>/status, in KiB.
func procStatus(tb testing.TB, pid int) map[string]int64 {
	tb.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int64{}
	for line := range strings.SplitSeq(string(raw), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "Vm") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				out[name] = n
			}
		}
	}
	if out["VmRSS"] == 0 {
		tb.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	return out
}
