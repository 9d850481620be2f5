package httpapi

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"quire/pgtest"
)

var storesFlag = flag.String("stores", "", "comma-separated backends to run the HTTP tests on (default: every one of backends)")

// TestMain runs every test of the package once per store of backends, so
// that each HTTP scenario is shown on SQLite and on PostgreSQL from one
// table and no copies; newEnv opens the store of the run in progress. Each
// run starts with a header, and a summary names the runs that failed.
//
// Listing or fuzzing is done once, on the first backend. A subset is
// chosen with, for example:
//
//	go test ./httpapi/ -args -stores=sqlite
func TestMain(m *testing.M) {
	flag.Parse()
	runs, err := selectBackends(*storesFlag)
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

	code := 0
	var failed []string
	for i, b := range runs {
		current = b
		fmt.Printf("\n======== httpapi: every test on %s (run %d of %d) ========\n\n", strings.ToUpper(b.name), i+1, len(runs))
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
	if len(failed) > 0 {
		fmt.Printf("\n======== httpapi: FAILED on %s ========\n", strings.Join(failed, ", "))
	}
	os.Exit(code)
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
