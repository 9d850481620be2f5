package proc

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestCPU: the CPU time read from /proc follows the process's own count
// (getrusage), to the 10 ms tick, and is 0 for no process.
func TestCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	self := func() time.Duration {
		var u syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
			t.Fatal(err)
		}
		return time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	// Work until the process has used 100 ms of CPU by its own count.
	x := 1
	for self() < 100*time.Millisecond {
		for i := range 1 << 20 {
			x = x*31 + i
		}
	}
	before := self()
	got := CPU(os.Getpid())
	after := self()
	if got < before-20*time.Millisecond || got > after+20*time.Millisecond {
		t.Errorf("CPU = %v, getrusage %v to %v (x %d)", got, before, after, x)
	}
	if got := CPU(-1); got != 0 {
		t.Errorf("CPU of no process = %v", got)
	}
}
