package textdiff

import (
	"strconv"
	"strings"
)

// splitTerminated splits s into lines that keep their "\n", the last one
// without it when s does not end in a newline.
func splitTerminated(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Unified returns the diff of from and to in the unified format of diff -u
// (headers fromName and toName, context lines of unchanged text around each
// change, "\ No newline at end of file" where a side ends without one), and
// how many lines it adds and removes. Equal texts give "".
func Unified(from, to, fromName, toName string, context int) (text string, added, removed int) {
	a, b := splitTerminated(from), splitTerminated(to)
	ops := Lines(a, b)
	added, removed = Count(ops)
	if added == 0 && removed == 0 {
		return "", 0, 0
	}
	var sb strings.Builder
	sb.WriteString("--- " + fromName + "\n+++ " + toName + "\n")
	line := func(prefix byte, s string) {
		sb.WriteByte(prefix)
		sb.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
	pa, pb, seen := 0, 0, 0 // lines of a and b in ops[:seen]
	for i := 0; i < len(ops); {
		if ops[i].Kind == Equal {
			i++
			continue
		}
		// A hunk: from context lines before this change to context lines
		// after the last change that lies within 2·context of the next.
		start := max(0, i-context)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].Kind != Equal {
				end = j
			} else if j-end > 2*context {
				break
			}
		}
		stop := min(len(ops), end+context+1)
		for ; seen < start; seen++ {
			if ops[seen].Kind != Insert {
				pa++
			}
			if ops[seen].Kind != Delete {
				pb++
			}
		}
		aStart, bStart, aLen, bLen := -1, -1, 0, 0
		for _, op := range ops[start:stop] {
			if op.Kind != Insert {
				if aStart < 0 {
					aStart = op.A
				}
				aLen++
			}
			if op.Kind != Delete {
				if bStart < 0 {
					bStart = op.B
				}
				bLen++
			}
		}
		sb.WriteString("@@ -" + hunkRange(aStart, aLen, pa) + " +" + hunkRange(bStart, bLen, pb) + " @@\n")
		for _, op := range ops[start:stop] {
			switch op.Kind {
			case Equal:
				line(' ', op.Text)
			case Delete:
				line('-', op.Text)
			case Insert:
				line('+', op.Text)
			}
		}
		i = stop
	}
	return sb.String(), added, removed
}

// hunkRange writes one side's range of a hunk: "start,len" with 1-based
// start, or, for a side with no lines in the hunk, the number of the line
// before it (before: the lines of this side before the hunk) and 0.
func hunkRange(start, n, before int) string {
	switch n {
	case 0:
		return strconv.Itoa(before) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}
