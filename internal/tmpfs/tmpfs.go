// Package tmpfs gives tests a temporary directory in memory, for databases
// whose tests are not about durability: on Linux's /dev/shm a SQLite commit
// (synchronous=FULL) costs no fsync to a disk that other work keeps busy.
// Tests of durability, crashes and full disks keep t.TempDir().
package tmpfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// root is the in-memory file system; where it is missing Dir falls back to
// the test's own temporary directory.
const root = "/dev/shm"

// Dir returns a new, empty directory in memory that is removed when tb
// ends, or tb.TempDir() where there is no /dev/shm (or it is not writable).
func Dir(tb testing.TB) string {
	tb.Helper()
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp(root, "quire-test-")
	if err != nil {
		return tb.TempDir()
	}
	tb.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			tb.Errorf("tmpfs: %v", err)
		}
	})
	return dir
}

// prepared is a database file made once per process by CopyOf's prepare.
type prepared struct {
	once  sync.Once
	files map[string][]byte // by suffix of the file's name: "", "-wal"
	err   error
}

var (
	preparedMu sync.Mutex
	preparedBy = map[string]*prepared{}
)

// CopyOf returns the path of a new file, name in a new Dir(tb), holding
// what prepare wrote at a path of its own: the first call of a process
// with key runs prepare (to create and migrate a database, say, which
// under the race detector costs seconds on SQLite), keeps the bytes in
// memory, and removes what it wrote; every call then writes a copy. A
// SQLite database's write-ahead log ("-wal") is copied with it. prepare
// must close the database before it returns. It fails tb when prepare
// failed.
func CopyOf(tb testing.TB, key, name string, prepare func(path string) error) string {
	tb.Helper()
	return copyInto(tb, Dir(tb), key, name, prepare)
}

// DiskCopyOf is CopyOf with the copy in tb.TempDir(), on the disk's file
// system, for the tests about durability or a full disk that start from
// the same prepared file.
func DiskCopyOf(tb testing.TB, key, name string, prepare func(path string) error) string {
	tb.Helper()
	return copyInto(tb, tb.TempDir(), key, name, prepare)
}

// copyInto writes a copy of what prepare wrote for key as name in dir.
func copyInto(tb testing.TB, dir, key, name string, prepare func(path string) error) string {
	tb.Helper()
	preparedMu.Lock()
	p, ok := preparedBy[key]
	if !ok {
		p = &prepared{}
		preparedBy[key] = p
	}
	preparedMu.Unlock()
	p.once.Do(func() { p.files, p.err = prepareFiles(name, prepare) })
	if p.err != nil {
		tb.Fatalf("tmpfs: prepare %s: %v", key, p.err)
	}
	path := filepath.Join(dir, name)
	for suffix, b := range p.files {
		if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
			tb.Fatalf("tmpfs: %v", err)
		}
	}
	return path
}

// prepareFiles runs prepare in a temporary directory and returns the files
// it left at path and path-wal.
func prepareFiles(name string, prepare func(path string) error) (map[string][]byte, error) {
	dir, err := os.MkdirTemp(tempRoot(), "quire-prepared-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, name)
	if err := prepare(path); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			return nil, err
		}
		files[suffix] = b
	}
	return files, nil
}

// tempRoot is root when it is a usable directory, else the system's.
func tempRoot() string {
	if fi, err := os.Stat(root); err == nil && fi.IsDir() {
		return root
	}
	return os.TempDir()
}
