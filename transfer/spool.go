package transfer

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Spooled files (an uploaded archive, the files of an archive that become
// attachments) are written under a folder of this process,
// <temp dir>/quire-spool/<pid>, each import in a folder of its own there,
// removed when the import ends. A process that crashed leaves its folder
// behind: the first Service of the next process (quire serve builds it at
// start) removes the folders of processes that no longer run.

var processSpool struct {
	once sync.Once
	dir  string
	err  error
}

// SpoolDir returns this process's spool folder, made (and the folders of
// dead processes removed) on the first call.
func SpoolDir() (string, error) {
	processSpool.once.Do(func() {
		processSpool.dir, processSpool.err = makeSpoolDir(os.TempDir(), os.Getpid())
	})
	return processSpool.dir, processSpool.err
}

// makeSpoolDir makes root/quire-spool/<pid> afresh, after removing the
// folders there of processes that no longer run. The shared folder must be
// the process user's own (a temp dir is everyone's); when it is not, a
// private folder of its own is made under root instead, and nothing is
// swept.
func makeSpoolDir(root string, pid int) (string, error) {
	base := filepath.Join(root, "quire-spool")
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return os.MkdirTemp(root, "quire-spool-*")
	}
	if fi, err := os.Lstat(base); err != nil || !fi.IsDir() || !ownDir(fi) {
		return os.MkdirTemp(root, "quire-spool-*")
	}
	names, _ := os.ReadDir(base)
	for _, n := range names {
		other, err := strconv.Atoi(n.Name())
		if err != nil || (other != pid && running(other)) {
			continue
		}
		os.RemoveAll(filepath.Join(base, n.Name())) // ours of an earlier life of this pid, or a dead one's
	}
	dir := filepath.Join(base, strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return os.MkdirTemp(root, "quire-spool-*")
	}
	return dir, nil
}

// newSpool makes the folder of one import's spooled files.
func newSpool() (string, error) {
	dir, err := SpoolDir()
	if err != nil {
		return "", err
	}
	return os.MkdirTemp(dir, "import-*")
}
