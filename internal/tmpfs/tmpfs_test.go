package tmpfs_test

import (
	"os"
	"path/filepath"
	"testing"

	"quire/internal/tmpfs"
)

func TestDir(t *testing.T) {
	var dir string
	t.Run("gives an empty, writable directory", func(t *testing.T) {
		dir = tmpfs.Dir(t)
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 0 {
			t.Fatalf("ReadDir(%s) = %v, %v; want an empty directory", dir, entries, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if other := tmpfs.Dir(t); other == dir {
			t.Errorf("two calls gave one directory %s", dir)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after its test ended: %v, want it removed", dir, err)
	}
}

func TestCopyOf(t *testing.T) {
	prepared := 0
	prepare := func(path string) error {
		prepared++
		if err := os.WriteFile(path, []byte("main"), 0o600); err != nil {
			return err
		}
		return os.WriteFile(path+"-wal", []byte("log"), 0o600)
	}
	first := tmpfs.CopyOf(t, "copies", "quire.db", prepare)
	second := tmpfs.CopyOf(t, "copies", "quire.db", prepare)
	if first == second || filepath.Base(first) != "quire.db" {
		t.Fatalf("paths %s and %s, want two files named quire.db", first, second)
	}
	if err := os.WriteFile(first, []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, want string }{{second, "main"}, {second + "-wal", "log"}} {
		if b, err := os.ReadFile(f.path); err != nil || string(b) != f.want {
			t.Errorf("%s = %q, %v; want %q", f.path, b, err, f.want)
		}
	}
	if prepared != 1 {
		t.Errorf("prepare ran %d times for one key, want once", prepared)
	}
}
