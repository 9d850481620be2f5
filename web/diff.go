package web

import (
	"slices"
	"strings"
)

// Line diffs and three-way merges of document content, for the versions
// page and the conflict page.

// opKind is what a diff does with a line.
type opKind int

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// diffOp is one line of a diff: kept, deleted from a, or inserted from b.
type diffOp struct {
	Kind opKind
	Line string
	A, B int // 0-based line numbers in a and b (-1 where the line is not there)
}

// maxEdits bounds the work of a diff: past this many differing lines (after
// the common start and end are set aside) the middle is shown as replaced
// whole. The cost is O((n+m)·maxEdits) time and O(maxEdits²) memory.
const maxEdits = 1000

// splitLines splits content into lines; joining them with "\n" gives the
// content back exactly.
func splitLines(s string) []string { return strings.Split(s, "\n") }

// diffLines returns a shortest edit script from a to b (Myers' algorithm),
// with the common prefix and suffix trimmed first.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{Kind: opEqual, Line: a[i], A: i, B: i})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		ia, ib := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, diffOp{Kind: opEqual, Line: a[ia], A: ia, B: ib})
	}
	return ops
}

// myers diffs a against b, numbering their lines from offA and offB.
func myers(a, b []string, offA, offB int) []diffOp {
	n, m := len(a), len(b)
	replaceAll := func() []diffOp {
		ops := make([]diffOp, 0, n+m)
		for i := range a {
			ops = append(ops, diffOp{Kind: opDelete, Line: a[i], A: offA + i, B: -1})
		}
		for j := range b {
			ops = append(ops, diffOp{Kind: opInsert, Line: b[j], A: -1, B: offB + j})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return replaceAll()
	}
	// Compare numbers, not strings, in the inner loop.
	ids := map[string]int32{}
	intern := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x1, y1 := intern(a), intern(b)

	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int32, 2*limit+3)
	// trace[d] holds v[k] for k in [-d, d] after step d.
	var trace [][]int32
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && x1[x] == y1[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				found = d
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	if found < 0 {
		return replaceAll()
	}

	// Walk back from (n, m), collecting operations in reverse.
	var rev []diffOp
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1] // k in [-(d-1), d-1] at index k+d-1
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		// The edit leads from (px, py) to (sx, sy); a snake of equal lines
		// from there to (x, y).
		sx, sy := px+1, py
		if pk == k+1 {
			sx, sy = px, py+1
		}
		for x > sx && y > sy {
			x--
			y--
			rev = append(rev, diffOp{Kind: opEqual, Line: a[x], A: offA + x, B: offB + y})
		}
		if pk == k+1 {
			rev = append(rev, diffOp{Kind: opInsert, Line: b[py], A: -1, B: offB + py})
		} else {
			rev = append(rev, diffOp{Kind: opDelete, Line: a[px], A: offA + px, B: -1})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{Kind: opEqual, Line: a[x], A: offA + x, B: offB + y})
	}
	ops := make([]diffOp, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	return ops
}

// diffRow is one row of a diff as a page shows it. A Skip row stands for
// Skip unchanged lines left out.
type diffRow struct {
	Kind string // "eq", "del", "ins" or "skip"
	Line string
	A, B int // 1-based line numbers, 0 where the line is not on that side
	Skip int
}

// diffView is a diff ready for a page.
type diffView struct {
	Rows             []diffRow
	Added, Removed   int
	Same             bool
	FromName, ToName string
}

// contextLines is how many unchanged lines a diff shows around a change.
const contextLines = 3

// newDiffView diffs from against to, keeping contextLines of unchanged
// lines around each change.
func newDiffView(from, to, fromName, toName string) diffView {
	ops := diffLines(splitLines(from), splitLines(to))
	dv := diffView{FromName: fromName, ToName: toName}
	keep := make([]bool, len(ops))
	for i, op := range ops {
		if op.Kind == opEqual {
			continue
		}
		if op.Kind == opInsert {
			dv.Added++
		} else {
			dv.Removed++
		}
		for j := max(0, i-contextLines); j <= min(len(ops)-1, i+contextLines); j++ {
			keep[j] = true
		}
	}
	dv.Same = dv.Added == 0 && dv.Removed == 0
	for i := 0; i < len(ops); {
		if !keep[i] {
			j := i
			for j < len(ops) && !keep[j] {
				j++
			}
			dv.Rows = append(dv.Rows, diffRow{Kind: "skip", Skip: j - i})
			i = j
			continue
		}
		op := ops[i]
		row := diffRow{Line: op.Line}
		switch op.Kind {
		case opEqual:
			row.Kind, row.A, row.B = "eq", op.A+1, op.B+1
		case opDelete:
			row.Kind, row.A = "del", op.A+1
		case opInsert:
			row.Kind, row.B = "ins", op.B+1
		}
		dv.Rows = append(dv.Rows, row)
		i++
	}
	if dv.Same {
		dv.Rows = nil
	}
	return dv
}

// Conflict markers of a merge, as git writes them, so that they read as
// familiar and are easy to search for.
const (
	markMine   = "<<<<<<< your version"
	markSplit  = "======="
	markTheirs = ">>>>>>> their version"
)

// merge3 merges two edits of the same base line by line: where only one
// side changed a region its change is taken, where both made the same
// change it is taken once, and where they differ both are kept between
// conflict markers. It returns the merged text and the number of
// conflicting regions.
func merge3(base, mine, theirs string) (string, int) {
	a, b, c := splitLines(base), splitLines(mine), splitLines(theirs)
	mb := matches(a, b)
	mc := matches(a, c)
	var out []string
	conflicts := 0
	i, j, k := 0, 0, 0
	for i < len(a) || j < len(b) || k < len(c) {
		// A stable run: lines of the base kept, in place, by both sides.
		n := 0
		for i+n < len(a) && mb[i+n] == j+n && mc[i+n] == k+n {
			n++
		}
		if n > 0 {
			out = append(out, a[i:i+n]...)
			i, j, k = i+n, j+n, k+n
			continue
		}
		// The next line of the base that both sides kept ends the region.
		ni, nj, nk := len(a), len(b), len(c)
		for x := i; x < len(a); x++ {
			if mb[x] >= 0 && mc[x] >= 0 {
				ni, nj, nk = x, mb[x], mc[x]
				break
			}
		}
		o, m, t := a[i:ni], b[j:nj], c[k:nk]
		switch {
		case slices.Equal(m, t), slices.Equal(o, t):
			out = append(out, m...)
		case slices.Equal(o, m):
			out = append(out, t...)
		default:
			conflicts++
			out = append(out, markMine)
			out = append(out, m...)
			out = append(out, markSplit)
			out = append(out, t...)
			out = append(out, markTheirs)
		}
		i, j, k = ni, nj, nk
	}
	return strings.Join(out, "\n"), conflicts
}

// matches returns, for each line of a, the line of b it is kept as in a
// shortest diff, or -1 when it is deleted.
func matches(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	for _, op := range diffLines(a, b) {
		if op.Kind == opEqual {
			m[op.A] = op.B
		}
	}
	return m
}
