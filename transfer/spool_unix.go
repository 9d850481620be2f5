//go:build unix

package transfer

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// running reports whether the process pid exists (signal 0 checks
// without sending: EPERM is a process of another user).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownDir reports whether fi belongs to this process's user.
func ownDir(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
