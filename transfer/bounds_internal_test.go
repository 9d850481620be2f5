package transfer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Link scanning is linear (issue 26, H4): the work of scanning text four
// times as long is about four times as much, whatever the text. Work is
// the bytes the scanner searched, counted by it: no clock.
func TestLinkScanningIsLinear(t *testing.T) {
	for _, unit := range []string{"]()", "](<", `href="`, "](", "[x](a.md) ", `src='`} {
		t.Run(unit, func(t *testing.T) {
			text := func(n int) string { return strings.Repeat(unit, n/len(unit)) }
			work := func(n int) int {
				_, w := scanLinks(text(n), func(dest string) (string, bool) { return "/documents/x", true })
				return w
			}
			small, large := work(256<<10), work(1<<20)
			if small == 0 || large > 6*small {
				t.Errorf("work at 256 KiB %d, at 1 MiB %d: %.1f times, want about 4", small, large, float64(large)/float64(max(small, 1)))
			}
		})
	}
}

// The spool folders of processes that no longer run are removed when the
// next process makes its own; a running one's are kept.
func TestSpoolFoldersOfDeadProcessesAreRemoved(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "quire-spool")
	dead := strconv.Itoa(1<<22 + 7) // above any pid_max: no such process
	live := strconv.Itoa(os.Getppid())
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(base, d, "import-1"), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(base, d, "import-1", "quire-upload-1"), []byte("left by a crash"), 0o600)
	}
	dir, err := makeSpoolDir(root, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(base, strconv.Itoa(os.Getpid())) {
		t.Errorf("spool folder %s", dir)
	}
	if _, err := os.Stat(filepath.Join(base, dead)); !os.IsNotExist(err) {
		t.Errorf("the dead process's folder is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, live, "import-1", "quire-upload-1")); err != nil {
		t.Errorf("the running process's folder was touched: %v", err)
	}
}
