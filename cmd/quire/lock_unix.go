//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockServe takes an exclusive lock on path+".lock" for the life of one
// quire serve on the SQLite file path, so that a second quire serve on the
// same file refuses to start instead of running beside the first (two
// servers would each run their own group commit, and on one file they only
// wait for each other's writes). Admin commands take no lock: SQLite's own
// locking makes them safe beside a server. The lock is an flock(2), released
// by the kernel when the process ends however it ends, so a stale .lock
// file left behind blocks nothing. unlock releases it.
func lockServe(path string) (unlock func(), err error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another quire serve is already running on %s (it holds %s): stop it first, or give this one another --db", path, name)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return func() { f.Close() }, nil
}
