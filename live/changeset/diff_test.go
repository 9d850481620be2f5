package changeset_test

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"quire/live/changeset"
)

func checkDiff(t *testing.T, a, b string) changeset.ChangeSet {
	t.Helper()
	cs := changeset.Diff(a, b)
	got, err := cs.Apply(a)
	if err != nil {
		t.Fatalf("Diff(%q, %q) does not apply: %v", a, b, err)
	}
	if got != b {
		t.Fatalf("Diff(%q, %q) applied gives %q", a, b, got)
	}
	return cs
}

func TestDiffKeepsWhatIsCommon(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"hello world", "hello brave world", `[6,[0,"brave "],5]`},
		{"same", "same", `[4]`},
		{"", "", `[]`},
		{"", "new", `[[0,"new"]]`},
		{"old", "", `[[3]]`},
		// Emoji sharing their first UTF-8 bytes (and first surrogate):
		// the change covers whole characters.
		{"a😀b", "a😁b", `[1,[2,"😁"],1]`},
		{"é", "è", `[[1,"è"]]`},
		// Two edits far apart in different lines stay two changes.
		{"one\ntwo\nthree\nfour\nfive\n", "one\ntwo!\nthree\nfour\nFive\n", `[7,[0,"!"],12,[1,"F"],4]`},
	} {
		cs := checkDiff(t, tc.a, tc.b)
		if got := marshal(t, cs); got != tc.want {
			t.Errorf("Diff(%q, %q) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestDiffOfRandomTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a := randText(r, 30)
		b := a
		// A few random edits, or a text unrelated to a.
		if r.IntN(5) == 0 {
			b = randText(r, 30)
		} else {
			for range r.IntN(4) {
				cs := randChange(t, r, b)
				var err error
				if b, err = cs.Apply(b); err != nil {
					t.Fatal(err)
				}
			}
		}
		cs := checkDiff(t, a, b)
		if (a == b) != cs.Empty() {
			t.Fatalf("Diff(%q, %q).Empty() = %v", a, b, cs.Empty())
		}
	}
}

// bigTexts returns a text of about n bytes of lines and a copy with every
// tenth line changed, so that the line diff has more differing lines than
// its bound on large inputs.
func bigTexts(r *rand.Rand, n int) (string, string) {
	var a, b strings.Builder
	for i := 0; a.Len() < n; i++ {
		line := randText(r, 12)
		line = strings.ReplaceAll(line, "\n", " ") + "\n"
		a.WriteString(line)
		if i%10 == 0 {
			b.WriteString("changed " + line)
		} else {
			b.WriteString(line)
		}
	}
	return a.String(), b.String()
}

func TestDiffOfOneMebibyte(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := bigTexts(r, 1<<20)
	checkDiff(t, a, b)
	// Few edits: kept small.
	half := strings.Index(a[len(a)/2:], "\n") + len(a)/2 + 1
	c := a[:half] + "inserted 😀\n" + a[half:]
	if cs := checkDiff(t, a, c); cs.NewLen()-cs.Len() != 12 {
		t.Errorf("one insertion: %s", cs)
	}
	// Unrelated texts of 1 MiB, one of them without a line break.
	d := strings.Repeat("漢字 😀 ", 1<<20/16)
	checkDiff(t, a, d)
	checkDiff(t, d, b)
}

// TestDiffMemoryIsLinear measures the bytes Diff allocates on texts of n
// and 4n bytes: linear growth is about 4 times, quadratic 16.
func TestDiffMemoryIsLinear(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1 << 18
	a1, b1 := bigTexts(r, n)
	a4, b4 := bigTexts(r, 4*n)
	allocated := func(a, b string) uint64 {
		best := uint64(1 << 62)
		for range 3 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			changeset.Diff(a, b)
			runtime.ReadMemStats(&after)
			best = min(best, after.TotalAlloc-before.TotalAlloc)
		}
		return best
	}
	m1, m4 := allocated(a1, b1), allocated(a4, b4)
	t.Logf("Diff allocates %d bytes for %d bytes, %d for %d (%.1fx)", m1, len(a1)+len(b1), m4, len(a4)+len(b4), float64(m4)/float64(m1))
	if m4 > 6*m1 {
		t.Errorf("Diff allocates %d bytes at n and %d at 4n: more than linear", m1, m4)
	}
	if m4 > 40*uint64(len(a4)+len(b4)) {
		t.Errorf("Diff allocates %d bytes for %d bytes of text", m4, len(a4)+len(b4))
	}
}
