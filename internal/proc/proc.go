// Package proc is what the benchmarks and the PostgreSQL test harness need
// of the processes they start: a free local port for one to listen on, its
// resident memory and CPU time as Linux counts them, and its stop.
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

// CPU reads the CPU time pid has used (user and system, all its threads),
// 0 where /proc cannot be read. Linux counts it in ticks of 10 ms (USER_HZ
// is 100 on every architecture Go builds for), so a figure from it needs a
// second or more of work.
func CPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted are those after it (utime and stime are the 14th and 15th).
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
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
