package web

import (
	"slices"
	"strings"

	"quire/textdiff"
)

// Line diffs (package textdiff) as pages show them, with changed words
// marked, and three-way merges of document content, for the versions page
// and the conflict page.

// diffRow is one row of a diff as a page shows it. A Skip row stands for
// Skip unchanged lines left out.
type diffRow struct {
	Kind string // "eq", "del", "ins" or "skip"
	Line string
	A, B int // 1-based line numbers, 0 where the line is not on that side
	Skip int
	// Words is Line cut into runs, the words deleted or inserted marked,
	// when the row is one of a pair of changed lines that share words;
	// nil otherwise.
	Words []textdiff.Segment
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
	ops := textdiff.Lines(textdiff.SplitLines(from), textdiff.SplitLines(to))
	dv := diffView{FromName: fromName, ToName: toName}
	keep := make([]bool, len(ops))
	for i, op := range ops {
		if op.Kind == textdiff.Equal {
			continue
		}
		if op.Kind == textdiff.Insert {
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
		row := diffRow{Line: op.Text}
		switch op.Kind {
		case textdiff.Equal:
			row.Kind, row.A, row.B = "eq", op.A+1, op.B+1
		case textdiff.Delete:
			row.Kind, row.A = "del", op.A+1
		case textdiff.Insert:
			row.Kind, row.B = "ins", op.B+1
		}
		dv.Rows = append(dv.Rows, row)
		i++
	}
	if dv.Same {
		dv.Rows = nil
	}
	markWords(dv.Rows)
	return dv
}

// wordBudget bounds the bytes of changed lines a diff view compares word
// by word; lines past it are shown whole. With textdiff.MaxWordEdits per
// pair the work is O(wordBudget·MaxWordEdits) whatever the documents.
const wordBudget = 256 << 10

// markWords pairs, in each run of changed rows, the n-th deleted line with
// the n-th inserted one and marks the words that differ between them.
func markWords(rows []diffRow) {
	budget := wordBudget
	for i := 0; i < len(rows); {
		if rows[i].Kind != "del" && rows[i].Kind != "ins" {
			i++
			continue
		}
		var dels, inss []int
		j := i
		for ; j < len(rows) && (rows[j].Kind == "del" || rows[j].Kind == "ins"); j++ {
			if rows[j].Kind == "del" {
				dels = append(dels, j)
			} else {
				inss = append(inss, j)
			}
		}
		for k := 0; k < min(len(dels), len(inss)); k++ {
			d, n := &rows[dels[k]], &rows[inss[k]]
			if budget -= len(d.Line) + len(n.Line); budget < 0 {
				return
			}
			d.Words, n.Words = textdiff.WordDiff(d.Line, n.Line)
		}
		i = j
	}
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
	a, b, c := textdiff.SplitLines(base), textdiff.SplitLines(mine), textdiff.SplitLines(theirs)
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
	for _, op := range textdiff.Lines(a, b) {
		if op.Kind == textdiff.Equal {
			m[op.A] = op.B
		}
	}
	return m
}
