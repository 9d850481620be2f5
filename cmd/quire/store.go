package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"quire"
	"quire/postgres"
	"quire/sqlite"
	"quire/web"
)

// openStore opens the database named by dsn: a postgres:// URL, or a SQLite
// file path. Both migrate on open. With mustExist a SQLite file that does
// not exist (or is empty) is refused rather than created: only serve and
// migrate create a database, so that an admin command run in the wrong
// folder or with a mistyped path fails instead of succeeding on a new,
// empty quire.db.
//
// On failure it returns a nil Store, never a typed nil inside the
// interface, so that a caller's deferred Close cannot panic.
func openStore(ctx context.Context, dsn string, mustExist bool) (quire.Store, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("--db is empty: give a SQLite file path or a postgres:// URL")
	}
	if isPostgres(dsn) {
		db, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return db, nil
	}
	path, err := sqlitePath(dsn, mustExist)
	if err != nil {
		return nil, err
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// sqlitePath returns the SQLite file path that dsn (not a postgres:// URL)
// names, after checkSQLiteFile.
func sqlitePath(dsn string, mustExist bool) (string, error) {
	if strings.TrimSpace(dsn) == "" {
		return "", errors.New("--db is empty: give a SQLite file path or a postgres:// URL")
	}
	path := strings.TrimPrefix(dsn, "sqlite:")
	if scheme, _, ok := strings.Cut(path, "://"); ok {
		// Only the scheme is named: the rest may hold a password.
		return "", fmt.Errorf("--db: %s:// is not a supported database (give a SQLite file path or a postgres:// URL)", scheme)
	}
	if err := checkSQLiteFile(path, mustExist); err != nil {
		return "", err
	}
	return path, nil
}

// sqliteHeader begins every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// checkSQLiteFile refuses a path that is a directory or a file of another
// kind (before SQLite could add its -wal and -shm files beside it), and,
// with mustExist, one that does not exist or is empty.
func checkSQLiteFile(path string, mustExist bool) error {
	missing := fmt.Errorf("no quire database at %s (run `quire serve` or `quire migrate` first, or pass --db)", path)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if mustExist {
			return missing
		}
		if dir := filepath.Dir(path); !isDir(dir) {
			return fmt.Errorf("--db %s: the folder %s does not exist", path, dir)
		}
		return nil
	case err != nil:
		return fmt.Errorf("--db %s: %w", path, err)
	case fi.IsDir():
		return fmt.Errorf("--db %s is a directory, not a quire database file", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("--db %s is not a regular file", path)
	case fi.Size() == 0:
		if mustExist {
			return missing
		}
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--db %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sqliteHeader) {
		return fmt.Errorf("--db %s is not a quire database (not a SQLite file)", path)
	}
	return nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// migrated returns the migrations that opening store applied, in order.
func migrated(store quire.Store) []string {
	if m, ok := store.(interface{ Migrated() []string }); ok {
		return m.Migrated()
	}
	return nil
}

// resolvePath returns path with its symbolic links resolved, so that one
// file reached through two names (a symlinked folder, a link to the file)
// is locked under one name. A file not yet made resolves through its
// folder. What cannot be resolved is returned as given.
func resolvePath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(dir, filepath.Base(path))
	}
	return path
}

// Both engines answer the pages' Watch buttons (serve.go).
var (
	_ web.WatchStates = (*sqlite.DB)(nil)
	_ web.WatchStates = (*postgres.DB)(nil)
)
