package pgtest

import "syscall"

// procAttr runs a child as as (when not nil) and has the kernel send it
// SIGQUIT (postgres: immediate shutdown) when the test process dies. Go sets
// the parent death signal after switching credentials, which would clear it.
func procAttr(as *runAs) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGQUIT}
	if as != nil {
		a.Credential = &syscall.Credential{Uid: as.uid, Gid: as.gid}
	}
	return a
}
