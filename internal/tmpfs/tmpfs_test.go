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
