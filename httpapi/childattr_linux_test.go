package httpapi

import "syscall"

// childAttr makes a run started by TestMain die with the process that
// started it, when go test kills that one at its timeout.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
