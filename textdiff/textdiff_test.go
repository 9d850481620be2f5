package textdiff

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lcsLength is the length of a longest common subsequence, by the
// textbook table: the reference a shortest edit script must agree with.
func lcsLength(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// sides rebuilds a and b from a diff.
func sides(ops []Op) (a, b []string) {
	for _, op := range ops {
		if op.Kind != Insert {
			a = append(a, op.Text)
		}
		if op.Kind != Delete {
			b = append(b, op.Text)
		}
	}
	return a, b
}

func randomLines(r *rand.Rand, n int) []string {
	words := []string{"a", "b", "c", "d", ""}
	out := make([]string, r.IntN(n))
	for i := range out {
		out[i] = words[r.IntN(len(words))]
	}
	return out
}

func TestLines(t *testing.T) {
	t.Run("a diff rebuilds both sides and keeps a longest common subsequence", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 2000; i++ {
			a, b := randomLines(r, 12), randomLines(r, 12)
			ops := Lines(a, b)
			gotA, gotB := sides(ops)
			if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) {
				t.Fatalf("diff of %q and %q rebuilds %q and %q", a, b, gotA, gotB)
			}
			kept := 0
			for _, op := range ops {
				if op.Kind == Equal {
					kept++
					if a[op.A] != b[op.B] {
						t.Fatalf("diff of %q and %q keeps %d/%d which differ", a, b, op.A, op.B)
					}
				}
			}
			if want := lcsLength(a, b); kept != want {
				t.Fatalf("diff of %q and %q keeps %d lines, a longest common subsequence has %d", a, b, kept, want)
			}
		}
	})
	t.Run("past the edit bound the middle is replaced whole, still correctly", func(t *testing.T) {
		var a, b []string
		for i := 0; i < 3*MaxEdits; i++ {
			a = append(a, "a"+strings.Repeat("x", i%7))
			b = append(b, "b"+strings.Repeat("y", i%5))
		}
		a = append([]string{"same start"}, append(a, "same end")...)
		b = append([]string{"same start"}, append(b, "same end")...)
		gotA, gotB := sides(Lines(a, b))
		if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) {
			t.Fatal("the bounded diff does not rebuild its sides")
		}
	})
}

// apply applies a unified diff to from, checking every context and
// deleted line against it, and returns the result.
func apply(t *testing.T, from, unified string) string {
	t.Helper()
	if unified == "" {
		return from
	}
	src := splitTerminated(from)
	var out []string
	lines := strings.SplitAfter(unified, "\n")
	if !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("no headers: %q", unified)
	}
	pos := 0 // next line of src
	var last *string
	for _, l := range lines[2:] {
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@ -"):
			spec := strings.Fields(l)[1][1:]
			startS, lenS, _ := strings.Cut(spec, ",")
			start, _ := strconv.Atoi(startS)
			if lenS == "0" {
				start++ // an empty range names the line before
			}
			for ; pos < start-1; pos++ {
				out = append(out, src[pos])
			}
		case l == "\\ No newline at end of file\n":
			*last = strings.TrimSuffix(*last, "\n")
		case l[0] == ' ' || l[0] == '-':
			if pos >= len(src) || strings.TrimSuffix(src[pos], "\n") != strings.TrimSuffix(l[1:], "\n") {
				t.Fatalf("line %d of from is not %q in\n%s", pos+1, l, unified)
			}
			if l[0] == ' ' {
				out = append(out, src[pos])
				last = &out[len(out)-1]
			} else {
				last = new(string)
			}
			pos++
		case l[0] == '+':
			out = append(out, l[1:])
			last = &out[len(out)-1]
		default:
			t.Fatalf("unexpected line %q", l)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}

func TestUnified(t *testing.T) {
	for _, c := range []struct {
		name, from, to, fromName, toName string
		want                             string
		added, removed                   int
	}{
		{"one change among many lines", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n", "version 1", "version 2",
			"--- version 1\n+++ version 2\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n", 1, 1},
		{"a missing final newline is marked", "a\nb", "a\nb\n", "x", "y",
			"--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, added, removed := Unified(c.from, c.to, c.fromName, c.toName, 3)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("unified (-want +got):\n%s", diff)
			}
			if added != c.added || removed != c.removed {
				t.Errorf("added %d, removed %d, want %d and %d", added, removed, c.added, c.removed)
			}
		})
	}
	t.Run("from empty", func(t *testing.T) {
		got, _, _ := Unified("", "a\n", "x", "y", 3)
		if want := "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("equal texts give nothing", func(t *testing.T) {
		if got, a, r := Unified("a\nb", "a\nb", "x", "y", 3); got != "" || a != 0 || r != 0 {
			t.Errorf("got %q %d %d", got, a, r)
		}
	})
	t.Run("applying the diff to from gives to, for random texts", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for i := 0; i < 3000; i++ {
			a := strings.Join(randomLines(r, 30), "\n")
			b := strings.Join(randomLines(r, 30), "\n")
			ctx := r.IntN(4)
			u, _, _ := Unified(a, b, "a", "b", ctx)
			if got := apply(t, a, u); got != b {
				t.Fatalf("context %d: applying\n%s\nto %q gives %q, want %q", ctx, u, a, got, b)
			}
		}
	})
}

func TestWordDiff(t *testing.T) {
	t.Run("changed words are marked, the rest kept", func(t *testing.T) {
		o, n := WordDiff("The quick brown fox jumps.", "The quick red fox leaps.")
		wantO := []Segment{{"The quick ", false}, {"brown", true}, {" fox ", false}, {"jumps", true}, {".", false}}
		wantN := []Segment{{"The quick ", false}, {"red", true}, {" fox ", false}, {"leaps", true}, {".", false}}
		if diff := cmp.Diff(wantO, o); diff != "" {
			t.Errorf("old (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantN, n); diff != "" {
			t.Errorf("new (-want +got):\n%s", diff)
		}
	})
	t.Run("lines with no word in common are not marked", func(t *testing.T) {
		if o, n := WordDiff("alpha beta", "gamma delta"); o != nil || n != nil {
			t.Errorf("got %v %v", o, n)
		}
	})
	t.Run("segments rebuild the lines", func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		words := []string{"a", "bé", " ", "  ", ",", "c1", "ü"}
		gen := func() string {
			var sb strings.Builder
			for range r.IntN(15) {
				sb.WriteString(words[r.IntN(len(words))])
			}
			return sb.String()
		}
		join := func(segs []Segment) string {
			var sb strings.Builder
			for _, s := range segs {
				sb.WriteString(s.Text)
			}
			return sb.String()
		}
		for range 2000 {
			a, b := gen(), gen()
			o, n := WordDiff(a, b)
			if o == nil {
				continue
			}
			if join(o) != a || join(n) != b {
				t.Fatalf("%q → %q: segments %v %v", a, b, o, n)
			}
		}
	})
	t.Run("words split a line losslessly", func(t *testing.T) {
		s := "Hello, wörld!  x_1\ty"
		if got := strings.Join(Words(s), ""); got != s {
			t.Errorf("joined %q", got)
		}
		if diff := cmp.Diff([]string{"Hello", ",", " ", "wörld", "!", "  ", "x_1", "\t", "y"}, Words(s)); diff != "" {
			t.Errorf("words (-want +got):\n%s", diff)
		}
	})
}
