// Package notice tells the person running the tests something they must
// not miss, such as a whole group of tests being skipped.
//
// go test shows nothing of a passing package but its "ok" line unless -v is
// given: what a test writes to its output, t.Skip's reason included, is
// thrown away. So a notice goes to the controlling terminal, which go test
// does not capture, and to standard error for -v and for CI logs.
package notice

import (
	"fmt"
	"os"
)

// Print writes msg, framed so that it stands out, to the terminal (when
// there is one) and to standard error.
func Print(msg string) {
	line := fmt.Sprintf("\n*** %s ***\n\n", msg)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprint(tty, line)
		tty.Close()
	}
	fmt.Fprint(os.Stderr, line)
}
