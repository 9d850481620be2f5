//go:build unix

package docindex

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far (user and system, all
// threads: the collector's too), which a loaded machine changes less than
// the wall clock.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
