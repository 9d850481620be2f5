package acceptance

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// parallelTests is how many parallel tests of this package run at once
// when go test is not given -parallel (whose default is GOMAXPROCS, 2 on a
// small machine). A browser test spends most of its time waiting for
// Chromium, which renders in processes of its own, and at most browserTabs
// of them have a tab at once: with two places in all, two browser tests
// left both cores to Chromium's waits, and the package, the last that
// go test ./... starts, ran alone at less than one core for a minute and
// more. With six, the tests without a browser run beside the two tabs.
const parallelTests = 6

// TestMain runs the package's tests with parallelTests places unless
// -parallel says otherwise, then stops the Chromium that the browser tests
// share (newChrome).
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(parallelTests)); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	stopChrome()
	os.Exit(code)
}
