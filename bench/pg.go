package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"quire/internal/proc"
	"quire/pgtest"
)

// pgServer is a PostgreSQL the harness runs itself, on a data directory kept
// under os.TempDir() between runs so that seeded databases are cached (each
// seed is a database; each run copies it with CREATE DATABASE ... TEMPLATE).
// Like the test harness it runs with fsync off: the figures measure quire and
// the database's CPU work, not this machine's disk flushes.
type pgServer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// asPostgresUser runs cmd as the user postgres when we are root, since
// PostgreSQL refuses to run as root.
func asPostgresUser(cmd *exec.Cmd) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return errors.New("running as root and there is no user postgres to run PostgreSQL as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Pdeathsig: syscall.SIGKILL}
	return nil
}

// startPostgres starts (initialising if needed) the cached cluster, under
// taskset -c cpus when cpus is not empty.
func startPostgres(cacheDir, cpus string) (*pgServer, error) {
	bin, err := pgtest.BinDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cacheDir, "pg-"+filepath.Base(filepath.Dir(bin)))
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if u, err := user.Lookup("postgres"); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			os.Chown(dir, uid, gid)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		os.RemoveAll(data)
		initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
			"-E", "UTF8", "--locale=C", "--no-sync")
		initdb.Dir = dir
		if err := asPostgresUser(initdb); err != nil {
			return nil, err
		}
		if out, err := initdb.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb: %w\n%s", err, out)
		}
	}
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "synchronous_commit=off", "-c", "max_connections=100", "-c", "shared_buffers=256MB",
		"-c", "log_min_messages=warning", "-c", "max_wal_size=4GB"}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	logf, err := os.OpenFile(filepath.Join(dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := asPostgresUser(cmd); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &pgServer{dir: dir, port: port, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := s.admin(context.Background())
		if err == nil {
			c.Close(context.Background())
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("postgres exited (log: %s): %v", filepath.Join(dir, "postgres.log"), cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("postgres not ready: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *pgServer) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

func (s *pgServer) admin(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, s.url("postgres"))
}

// exec runs statements on the maintenance database (database names are
// ours, never a client's).
func (s *pgServer) exec(ctx context.Context, stmts ...string) error {
	return s.execIn(ctx, "postgres", stmts...)
}

// vacuumed reports whether VACUUM ANALYZE has run on db's documents.
func (s *pgServer) vacuumed(ctx context.Context, db string) (bool, error) {
	c, err := pgx.Connect(ctx, s.url(db))
	if err != nil {
		return false, err
	}
	defer c.Close(ctx)
	var ok bool
	err = c.QueryRow(ctx, `SELECT COALESCE(bool_and(last_vacuum IS NOT NULL AND last_analyze IS NOT NULL), false)
		FROM pg_stat_user_tables WHERE relname = 'documents'`).Scan(&ok)
	return ok, err
}

// execIn runs statements in database db.
func (s *pgServer) execIn(ctx context.Context, db string, stmts ...string) error {
	c, err := pgx.Connect(ctx, s.url(db))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, q := range stmts {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func (s *pgServer) hasDatabase(ctx context.Context, name string) (bool, error) {
	c, err := s.admin(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close(ctx)
	var n int
	err = c.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n)
	return n > 0, err
}

func (s *pgServer) stop() {
	proc.Stop(s.cmd.Process, syscall.SIGINT, s.done, 20*time.Second)
}
