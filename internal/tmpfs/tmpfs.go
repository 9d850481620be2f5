// Package tmpfs gives tests a temporary directory in memory, for databases
// whose tests are not about durability: on Linux's /dev/shm a SQLite commit
// (synchronous=FULL) costs no fsync to a disk that other work keeps busy.
// Tests of durability, crashes and full disks keep t.TempDir().
package tmpfs

import (
	"os"
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
