// Package textdiff computes bounded diffs of text: line diffs (Myers'
// algorithm with a cap on the edits it looks for), the unified format the
// API answers with, and word diffs inside a changed line for the web
// application. Every function takes time and memory linear in its input
// times a fixed bound, so that a diff of any two versions a caller may
// read is cheap.
package textdiff

import (
	"strings"
	"unicode"
)

// Kind is what a diff does with a line or a word.
type Kind int

const (
	Equal Kind = iota
	Delete
	Insert
)

// Op is one line (or word) of a diff: kept, deleted from a, or inserted
// from b.
type Op struct {
	Kind Kind
	Text string
	A, B int // 0-based positions in a and b (-1 where the text is not there)
}

// MaxEdits bounds the work of a line diff: past this many differing lines
// (after the common start and end are set aside) the middle is shown as
// replaced whole. The cost is O((n+m)·MaxEdits) time and O(MaxEdits²)
// memory.
const MaxEdits = 1000

// SplitLines splits content into lines; joining them with "\n" gives the
// content back exactly.
func SplitLines(s string) []string { return strings.Split(s, "\n") }

// Lines returns a shortest edit script from a to b, with the common
// prefix and suffix trimmed first, bounded by MaxEdits.
func Lines(a, b []string) []Op { return Bounded(a, b, MaxEdits) }

// Bounded returns a shortest edit script from a to b when one exists with
// at most maxEdits edits in the middle (after the common prefix and suffix
// are set aside); otherwise the middle is deleted and inserted whole. The
// result always rebuilds both sides.
func Bounded(a, b []string, maxEdits int) []Op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]Op, 0, len(a)+len(b))
	for i := 0; i < pre; i++ {
		ops = append(ops, Op{Kind: Equal, Text: a[i], A: i, B: i})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre, maxEdits)...)
	for i := 0; i < suf; i++ {
		ia, ib := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, Op{Kind: Equal, Text: a[ia], A: ia, B: ib})
	}
	return ops
}

// myers diffs a against b, numbering their elements from offA and offB.
func myers(a, b []string, offA, offB, maxEdits int) []Op {
	n, m := len(a), len(b)
	replaceAll := func() []Op {
		ops := make([]Op, 0, n+m)
		for i := range a {
			ops = append(ops, Op{Kind: Delete, Text: a[i], A: offA + i, B: -1})
		}
		for j := range b {
			ops = append(ops, Op{Kind: Insert, Text: b[j], A: -1, B: offB + j})
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
	var rev []Op
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
		// The edit leads from (px, py) to (sx, sy); a snake of equal
		// elements from there to (x, y).
		sx, sy := px+1, py
		if pk == k+1 {
			sx, sy = px, py+1
		}
		for x > sx && y > sy {
			x--
			y--
			rev = append(rev, Op{Kind: Equal, Text: a[x], A: offA + x, B: offB + y})
		}
		if pk == k+1 {
			rev = append(rev, Op{Kind: Insert, Text: b[py], A: -1, B: offB + py})
		} else {
			rev = append(rev, Op{Kind: Delete, Text: a[px], A: offA + px, B: -1})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, Op{Kind: Equal, Text: a[x], A: offA + x, B: offB + y})
	}
	ops := make([]Op, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	return ops
}

// Count returns how many elements ops inserts and deletes.
func Count(ops []Op) (added, removed int) {
	for _, op := range ops {
		switch op.Kind {
		case Insert:
			added++
		case Delete:
			removed++
		}
	}
	return added, removed
}

// Words splits a line into words (runs of letters and digits), runs of
// spaces, and single other characters, so that joining them gives the
// line back and a word diff marks whole words.
func Words(s string) []string {
	var out []string
	class := func(r rune) int {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			return 1
		case unicode.IsSpace(r):
			return 2
		}
		return 0
	}
	start, prev := 0, -1
	for i, r := range s {
		c := class(r)
		if i > start && (c == 0 || c != prev) {
			out = append(out, s[start:i])
			start = i
		}
		prev = c
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// MaxWordEdits bounds a word diff of one pair of lines, as MaxEdits bounds
// a line diff.
const MaxWordEdits = 200

// Segment is a run of a line in a word diff: Changed marks words deleted
// (on the old line) or inserted (on the new one).
type Segment struct {
	Text    string
	Changed bool
}

// WordDiff compares an old and a new line word by word and returns each
// as segments. When the lines share too little to be worth marking (no
// word in common) it returns nil, nil: the lines are better read whole.
func WordDiff(old, new string) (oldSegs, newSegs []Segment) {
	ops := Bounded(Words(old), Words(new), MaxWordEdits)
	same := false
	for _, op := range ops {
		if op.Kind == Equal && strings.TrimSpace(op.Text) != "" {
			same = true
			break
		}
	}
	if !same {
		return nil, nil
	}
	// Words are slices of their line in order, so a run of them is a
	// slice of the line too: segments grow by moving their end.
	add := func(segs []Segment, line string, from, to int, changed bool) []Segment {
		if n := len(segs); n > 0 && segs[n-1].Changed == changed {
			segs[n-1].Text = line[from-len(segs[n-1].Text) : to]
			return segs
		}
		return append(segs, Segment{Text: line[from:to], Changed: changed})
	}
	i, j := 0, 0 // byte offsets in old and new
	for _, op := range ops {
		switch op.Kind {
		case Equal:
			oldSegs = add(oldSegs, old, i, i+len(op.Text), false)
			newSegs = add(newSegs, new, j, j+len(op.Text), false)
			i, j = i+len(op.Text), j+len(op.Text)
		case Delete:
			oldSegs = add(oldSegs, old, i, i+len(op.Text), true)
			i += len(op.Text)
		case Insert:
			newSegs = add(newSegs, new, j, j+len(op.Text), true)
			j += len(op.Text)
		}
	}
	return oldSegs, newSegs
}
