// Package proc is what the benchmarks and the PostgreSQL test harness need
// of the processes they start: a free local port for one to listen on, its
// resident memory as Linux counts it, and its stop.
package proc

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// FreePort returns a TCP port of 127.0.0.1 that nothing listens on now.
// Another process may take it before the caller does; callers start their
// child on it at once and fail clearly when it is taken.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Mem reads the resident set (VmRSS) and its peak (VmHWM) of pid, in bytes;
// zeros where /proc cannot be read.
func Mem(pid int) (rss, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}

// ResetPeak restarts the kernel's peak-RSS count of pid (Linux 4.0+), so
// that each measure reports its own peak. It fails harmlessly elsewhere.
func ResetPeak(pid int) {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// Stop sends sig to p and waits for done to yield (the goroutine that waits
// for p closes it or sends on it); when that takes longer than grace, it
// kills p and waits again.
func Stop[T any](p *os.Process, sig os.Signal, done <-chan T, grace time.Duration) {
	p.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		p.Kill()
		<-done
	}
}
