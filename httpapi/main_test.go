package httpapi

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"quire/pgtest"
)

var storesFlag = flag.String("stores", "", "comma-separated backends to run the HTTP tests on (default: every one of backends)")

// envBackend names the one backend a run of the test binary started by
// TestMain is for.
const envBackend = "QUIRE_HTTPAPI_BACKEND"

// TestMain runs every test of the package once per store of backends, so
// that each HTTP scenario is shown on SQLite and on PostgreSQL from one
// table and no copies; newEnv opens the store of the run in progress. Each
// run starts with a header, and a summary names the runs that failed.
//
// The runs are processes of their own, started at once: TestMain runs the
// test binary again for each backend (envBackend names it) with the same
// arguments, and shows the output of one run after the other, as if they
// had run in turn. With a profile or coverage file to write, which the
// processes would overwrite, the runs are made in turn in this process.
//
// Listing or fuzzing is done once, on the first backend. A subset is
// chosen with, for example:
//
//	go test ./httpapi/ -args -stores=sqlite
func TestMain(m *testing.M) {
	flag.Parse()
	list := *storesFlag
	if b := os.Getenv(envBackend); b != "" {
		list = b
	}
	runs, err := selectBackends(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		runs = runs[:1]
	}
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		runs = runs[:1]
	}
	if len(runs) > 1 && !writesFiles() {
		os.Exit(runApart(runs))
	}

	code := 0
	var failed []string
	for i, b := range runs {
		current = b
		if os.Getenv(envBackend) != "" {
			fmt.Printf("\n======== httpapi: every test on %s (a process of its own, beside the other backends' runs) ========\n\n", strings.ToUpper(b.name))
		} else {
			fmt.Printf("\n======== httpapi: every test on %s (run %d of %d) ========\n\n", strings.ToUpper(b.name), i+1, len(runs))
		}
		var c int
		if i == len(runs)-1 {
			// The last run stops the PostgreSQL server pgtest may have
			// started in any run.
			c = pgtest.RunMain(m)
		} else {
			c = m.Run()
		}
		if c != 0 {
			code = c
			failed = append(failed, b.name)
		}
	}
	if len(failed) > 0 && len(runs) > 1 {
		fmt.Printf("\n======== httpapi: FAILED on %s ========\n", strings.Join(failed, ", "))
	}
	os.Exit(code)
}

// writesFiles reports whether a flag asks the test binary for a file that
// runs in several processes would each write over.
func writesFiles() bool {
	for _, name := range []string{"test.coverprofile", "test.cpuprofile", "test.memprofile",
		"test.blockprofile", "test.mutexprofile", "test.trace"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}

// runApart runs the test binary once per backend, all at once, and returns
// the exit code of the first run that failed (0 when none did). The first
// run writes to this process's standard output and error as it goes; the
// others are kept and written after it, each in one piece, so that the
// output (and go test -json's reading of it) is that of runs in turn.
// Signals that reach this process are passed on, so that an interrupt or
// go test's timeout (SIGQUIT) reaches the tests.
func runApart(runs []backend) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "httpapi: cannot run the backends apart: %v\n", err)
		return 2
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	cmds := make([]*exec.Cmd, len(runs))
	outs := make([]*bytes.Buffer, len(runs))
	for i, b := range runs {
		cmd := exec.Command(exe, os.Args[1:]...)
		cmd.Env = append(os.Environ(), envBackend+"="+b.name)
		cmd.SysProcAttr = childAttr()
		if i == 0 {
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		} else {
			outs[i] = &bytes.Buffer{}
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "httpapi: start the %s run: %v\n", b.name, err)
			for _, c := range cmds[:i] {
				c.Process.Kill()
				c.Wait()
			}
			return 2
		}
		cmds[i] = cmd
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				for _, c := range cmds {
					c.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	defer close(done)

	code := 0
	var failed []string
	for i, cmd := range cmds {
		err := cmd.Wait()
		if outs[i] != nil {
			os.Stdout.Write(outs[i].Bytes())
		}
		if err != nil {
			c := 1
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() > 0 {
				c = exit.ExitCode()
			}
			if code == 0 {
				code = c
			}
			failed = append(failed, fmt.Sprintf("%s (%v)", runs[i].name, err))
		}
	}
	if len(failed) > 0 {
		fmt.Printf("\n======== httpapi: FAILED on %s ========\n", strings.Join(failed, ", "))
	}
	return code
}

// selectBackends returns the backends named in list (all when it is empty),
// in the order of the table.
func selectBackends(list string) ([]backend, error) {
	if strings.TrimSpace(list) == "" {
		return backends, nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		want[strings.TrimSpace(name)] = true
	}
	var out []backend
	for _, b := range backends {
		if want[b.name] {
			out = append(out, b)
			delete(want, b.name)
		}
	}
	if len(want) > 0 || len(out) == 0 {
		var names []string
		for _, b := range backends {
			names = append(names, b.name)
		}
		return nil, fmt.Errorf("-stores=%s: the backends are %s", list, strings.Join(names, ", "))
	}
	return out, nil
}
