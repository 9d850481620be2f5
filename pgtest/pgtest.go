// Package pgtest gives tests a fresh, empty PostgreSQL database.
//
// With QUIRE_TEST_POSTGRES_URL set, every Start creates a new database on
// that server (the role needs CREATEDB) and drops it when the test ends.
// Otherwise the first Start of a test process runs its own throwaway server:
// initdb into a temporary directory and postgres on a free port of 127.0.0.1
// (unix socket in the same directory, fsync off), found on PATH or under
// /usr/lib/postgresql/*/bin. When the process runs as root, initdb and
// postgres run as the "postgres" user, since PostgreSQL refuses root.
//
// A package that uses Start should stop that server when its tests end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }
//
// Without it the server still dies with the test process on Linux (parent
// death signal), but its temporary directory stays behind.
//
// StartFrom gives a database that is already prepared (migrated, say): the
// first call of a process with a given key prepares one template database
// and every call copies it with CREATE DATABASE ... TEMPLATE, which takes a
// fraction of the time of running the migrations again.
//
// When no PostgreSQL can be found, Start skips the test with a loud message;
// QUIRE_REQUIRE_POSTGRES=1 turns that into a failure, for CI.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"quire/internal/notice"
	"quire/internal/proc"
)

// Environment variables read by Start.
const (
	EnvURL     = "QUIRE_TEST_POSTGRES_URL"
	EnvRequire = "QUIRE_REQUIRE_POSTGRES"
)

var (
	setupOnce sync.Once
	srv       *server // the server of this process, nil until setup succeeds
	setupErr  error   // why setup failed (*unavailableError when PostgreSQL is missing)
	warnOnce  sync.Once
)

// unavailableError says that no usable PostgreSQL exists here: a reason to
// skip, not a failure (unless EnvRequire is set).
type unavailableError struct{ reason string }

func (e *unavailableError) Error() string { return e.reason }

// server is a PostgreSQL instance that Start creates databases on.
type server struct {
	adminURL *url.URL // the maintenance database; its path is replaced per database

	// admin is a pool on the maintenance database, so that tests running
	// in parallel create and drop their databases at once.
	admin *pgxpool.Pool

	tplMu     sync.Mutex           // held while a template is prepared
	templates map[string]*template // by StartFrom's key

	// Set only for the throwaway server this process started.
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the postgres process has exited
}

// Start returns the URL of a new, empty database that is dropped when tb
// ends. It skips tb (or fails it, with QUIRE_REQUIRE_POSTGRES=1) when no
// PostgreSQL is available.
func Start(tb testing.TB) string {
	tb.Helper()
	u, err := available(tb).createDatabase(tb, "")
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return u
}

// available returns the server of this process, starting it on first use,
// or skips tb (fails it, with QUIRE_REQUIRE_POSTGRES=1) when there is none.
func available(tb testing.TB) *server {
	tb.Helper()
	setupOnce.Do(func() { srv, setupErr = setup() })
	if setupErr != nil {
		var ue *unavailableError
		if !errors.As(setupErr, &ue) {
			tb.Fatalf("pgtest: %v", setupErr)
		}
		msg := "PostgreSQL NOT AVAILABLE: postgres tests SKIPPED (" + ue.reason + "). " +
			"Install PostgreSQL (initdb, postgres) or set " + EnvURL + "; set " + EnvRequire + "=1 to make this a failure."
		if os.Getenv(EnvRequire) == "1" {
			tb.Fatal(msg)
		}
		// t.Skip is only visible with -v: say it once where everyone looks.
		warnOnce.Do(func() { notice.Print(msg) })
		tb.Skip(msg)
	}
	return srv
}

// template is a database that StartFrom copies.
type template struct {
	name string
	err  error // why preparing it failed; every later StartFrom fails with it
}

// StartFrom returns the URL of a new database, dropped when tb ends, that
// is a copy of a template database prepared once per test process and key:
// the first call with key creates an empty database, calls prepare with its
// URL (to apply migrations, say), and keeps it; every call then makes its
// own with CREATE DATABASE ... TEMPLATE. prepare must close every
// connection it opened before it returns, since PostgreSQL copies only a
// database nobody is connected to. The templates are dropped by RunMain.
// It skips or fails tb as Start does when no PostgreSQL is available, and
// fails it when prepare failed.
func StartFrom(tb testing.TB, key string, prepare func(ctx context.Context, url string) error) string {
	tb.Helper()
	s := available(tb)
	tpl := s.template(key, prepare)
	if tpl.err != nil {
		tb.Fatalf("pgtest: prepare template %q: %v", key, tpl.err)
	}
	u, err := s.createDatabase(tb, tpl.name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return u
}

// template returns the template database of key, preparing it on first use.
func (s *server) template(key string, prepare func(ctx context.Context, url string) error) *template {
	s.tplMu.Lock()
	defer s.tplMu.Unlock()
	if tpl, ok := s.templates[key]; ok {
		return tpl
	}
	tpl := &template{name: "quire_template_" + randomHex()}
	if s.templates == nil {
		s.templates = map[string]*template{}
	}
	s.templates[key] = tpl
	tpl.err = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := s.exec(ctx, "CREATE DATABASE "+pgx.Identifier{tpl.name}.Sanitize()); err != nil {
			return fmt.Errorf("create database %s: %w", tpl.name, err)
		}
		return prepare(ctx, s.databaseURL(tpl.name))
	}()
	return tpl
}

// exec runs one statement on the maintenance database.
func (s *server) exec(ctx context.Context, sql string) error {
	_, err := s.admin.Exec(ctx, sql)
	return err
}

// databaseURL is the URL of database name on s.
func (s *server) databaseURL(name string) string {
	u := *s.adminURL
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CutOff makes the database at dbURL refuse new sessions and ends the
// ones it has, as a restart of its server would, without stopping a server
// that other tests share; connections are allowed again when tb ends. It
// acts from the maintenance database ("postgres") of the same server, and
// returns that connection's error, having done nothing, when it cannot be
// reached. Any later failure fails tb.
func CutOff(tb testing.TB, dbURL string) error {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	name := pgx.Identifier{dbName}.Sanitize()
	u.Path, u.RawPath = "/postgres", ""
	conn, err := pgx.Connect(tb.Context(), u.String())
	if err != nil {
		return fmt.Errorf("pgtest: no maintenance database to close %s from: %w", name, err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(tb.Context(), `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS false`); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() { conn.Exec(context.Background(), `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS true`) })
	if _, err := conn.Exec(tb.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`,
		dbName); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return nil
}

// RunMain runs the tests of m and then stops the server that Start may have
// started. Call it from TestMain: os.Exit(pgtest.RunMain(m)).
func RunMain(m *testing.M) int {
	code := m.Run()
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop: %v\n", err)
		}
	}
	return code
}

func setup() (*server, error) {
	if raw := os.Getenv(EnvURL); raw != "" {
		return external(raw)
	}
	return startLocal()
}

// external uses the server at raw, creating databases beside raw's own.
func external(raw string) (*server, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("%s must be a postgres:// URL", EnvURL)
	}
	s := &server{adminURL: u}
	if err := s.connectAdmin(10 * time.Second); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", EnvURL, err)
	}
	return s, nil
}

func (s *server) connectAdmin(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	pool, err := pgxpool.New(ctx, s.adminURL.String())
	if err != nil {
		return err
	}
	// The pool connects on first use: make sure the server answers.
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return err
	}
	s.admin = pool
	return nil
}

// createDatabase creates a uniquely named database, a copy of the
// database from when it is not "", and registers its drop.
func (s *server) createDatabase(tb testing.TB, from string) (string, error) {
	name := "quire_test_" + randomHex()
	ident := pgx.Identifier{name}.Sanitize()
	create := "CREATE DATABASE " + ident
	if from != "" {
		create += " TEMPLATE " + pgx.Identifier{from}.Sanitize()
	}

	// A loaded machine can take long: a test's time is the place to see it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := s.admin.Exec(ctx, create); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	tb.Cleanup(func() {
		// Dropping a database of many tables takes tens of seconds on a
		// machine busy with other work.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// FORCE ends sessions a test left open (PostgreSQL 13 and later).
		if _, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.databaseURL(name), nil
}

// runAs is the account initdb and postgres run as when we are root.
type runAs struct {
	name     string
	uid, gid uint32
}

// startLocal runs a throwaway server in a temporary directory.
func startLocal() (*server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	var as *runAs
	if os.Geteuid() == 0 {
		if as, err = postgresUser(); err != nil {
			return nil, err
		}
	}

	dir, err := os.MkdirTemp(memoryDir(), "quire-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	ok := false
	defer func() {
		if !ok {
			s.stop()
		}
	}()
	if as != nil {
		if err := os.Chown(dir, int(as.uid), int(as.gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = procAttr(as)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb (%s): %w\n%s", bin, err, out)
	}

	logPath := filepath.Join(dir, "postgres.log")
	// A port found free may be taken before postgres binds it: try again.
	for attempt := 0; ; attempt++ {
		port, err := proc.FreePort()
		if err != nil {
			return nil, err
		}
		err = s.run(bin, data, logPath, port, as)
		if err == nil {
			break
		}
		if attempt == 2 {
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("start postgres (%s): %w\n%s", bin, err, log)
		}
	}
	ok = true
	return s, nil
}

// run starts postgres on port and waits until it accepts connections.
// postgres runs as our child (not daemonised by pg_ctl) so that the parent
// death signal can stop it when the test process dies without RunMain.
func (s *server) run(bin, data, logPath string, port int, as *runAs) error {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-p", strconv.Itoa(port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
		"-c", "max_connections=300", "-c", "log_min_messages=warning")
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr(as)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	s.adminURL = &url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			s.cmd, s.done = nil, nil
			return fmt.Errorf("postgres exited: %v", cmd.ProcessState)
		default:
		}
		if err := s.connectAdmin(2 * time.Second); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("postgres not ready after 30s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop closes the admin connection and, for a throwaway server, shuts it
// down and removes its directory.
func (s *server) stop() error {
	if s.cmd == nil {
		// A server of QUIRE_TEST_POSTGRES_URL outlives us: drop our templates.
		s.dropTemplates()
	}
	if s.admin != nil {
		s.admin.Close()
		s.admin = nil
	}
	s.kill()
	if s.dir != "" {
		return os.RemoveAll(s.dir)
	}
	return nil
}

// dropTemplates drops the template databases of StartFrom.
func (s *server) dropTemplates() {
	s.tplMu.Lock()
	defer s.tplMu.Unlock()
	for _, tpl := range s.templates {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{tpl.name}.Sanitize()+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: drop template %s: %v\n", tpl.name, err)
		}
		cancel()
	}
	s.templates = nil
}

// kill asks postgres for a fast shutdown and kills it when it does not
// finish in time.
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	proc.Stop(s.cmd.Process, syscall.SIGINT, s.done, 10*time.Second)
	s.cmd, s.done = nil, nil
}

// binGlob is where Debian and Ubuntu install each major version's server.
const binGlob = "/usr/lib/postgresql/*/bin"

// BinDir returns the directory holding this machine's initdb and postgres
// (see findBinDirIn). The load harness (bench) starts its server from it too.
func BinDir() (string, error) { return findBinDirIn(exec.LookPath, binGlob) }

// findBinDirIn returns the directory holding initdb and postgres: the one
// of initdb or pg_ctl found by lookPath (symlinks resolved, as Debian links
// them from /usr/local/bin or /usr/bin), else the newest directory matching
// glob, whose parent is named for its major version.
func findBinDirIn(lookPath func(string) (string, error), glob string) (string, error) {
	for _, name := range []string{"initdb", "pg_ctl"} {
		p, err := lookPath(name)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if dir := filepath.Dir(p); hasServer(dir) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob(glob)
	sort.Slice(dirs, func(i, j int) bool { return majorVersion(dirs[i]) > majorVersion(dirs[j]) })
	for _, dir := range dirs {
		if hasServer(dir) {
			return dir, nil
		}
	}
	return "", &unavailableError{"no initdb and postgres on PATH or in " + glob}
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// majorVersion reads 15 from /usr/lib/postgresql/15/bin.
func majorVersion(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func postgresUser() (*runAs, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, &unavailableError{"running as root, and there is no user \"postgres\" to run initdb and postgres as"}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user postgres has uid %q gid %q", u.Uid, u.Gid)
	}
	return &runAs{name: u.Username, uid: uint32(uid), gid: uint32(gid)}, nil
}

// memoryDir is where the throwaway server keeps its data: in memory
// (/dev/shm) where there is one to write to, else the temporary directory.
// Each test's database is a copy of a template, some 300 files and 8 MB
// through the write-ahead log; on a disk's file system, creating and
// dropping them was most of the package tests' time, in the kernel.
func memoryDir() string {
	const shm = "/dev/shm"
	if f, err := os.CreateTemp(shm, "quire-pgtest-probe-"); err == nil {
		f.Close()
		os.Remove(f.Name())
		return shm
	}
	return ""
}
