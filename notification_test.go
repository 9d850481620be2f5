package quire

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMentions(t *testing.T) {
	id := func(i int) string { return fmt.Sprintf("01900000-0000-7000-8000-%012d", i) }
	m := func(i int) string { return "[@P" + fmt.Sprint(i) + "](mention:" + id(i) + ")" }

	t.Run("distinct, in order, upper-case ids read as lower-case, other links ignored", func(t *testing.T) {
		text := m(2) + " " + m(1) + " " + strings.ToUpper(m(2)) + " [x](https://example.com) [@Q](mention:not-an-id)"
		got, ignored := Mentions(text)
		if !slices.Equal(got, []string{id(2), id(1)}) || ignored != 0 {
			t.Errorf("Mentions = %v, %d", got, ignored)
		}
	})
	t.Run("at most MaxMentions, the rest counted", func(t *testing.T) {
		var b strings.Builder
		for i := range 60 {
			b.WriteString(m(i) + m(i))
		}
		got, ignored := Mentions(b.String())
		if len(got) != MaxMentions || got[0] != id(0) || ignored != 10 {
			t.Errorf("%d mentions, %d ignored; want %d and 10", len(got), ignored, MaxMentions)
		}
	})
	t.Run("a save adds only what the previous content did not have", func(t *testing.T) {
		got, _ := AddedMentions("hi "+m(1), "hi "+m(1)+" and "+m(3)+" "+m(3))
		if !slices.Equal(got, []string{id(3)}) {
			t.Errorf("AddedMentions = %v, want only the new one", got)
		}
		if got, _ := AddedMentions(m(1)+m(3), m(3)); len(got) != 0 {
			t.Errorf("a removed mention notified %v", got)
		}
	})
}

// mentionRE is the expression mentions were found by: eachMention must
// find what it finds.
var mentionRE = regexp.MustCompile(`\[@[^\]\n]{0,200}\]\(mention:([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\)`)

// TestEachMentionIsTheExpression checks eachMention against mentionRE on
// random texts built of the pieces mentions are made of.
func TestEachMentionIsTheExpression(t *testing.T) {
	const a, b = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5C"
	pieces := []string{"[@", "[", "@", "]", "(", ")", "](mention:", "](mention:", "mention:", a, b, a + ")", b + ")",
		"](mention:" + a + ")", "[@Ada](mention:" + b + ")", "0190a1b2-c3d4", "\n", " ", "é", "Ada",
		strings.Repeat("n", 99), strings.Repeat("é", 60), "\xff"}
	r := rand.New(rand.NewPCG(5, 6))
	found := 0
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(16) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := sb.String()
		var want, got []string
		for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
			want = append(want, m[1])
		}
		eachMention(text, func(id string) { got = append(got, id) })
		found += len(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q: (-expression +eachMention)\n%s", text, diff)
		}
	}
	if found < 500 {
		t.Fatalf("only %d mentions in the random texts: the test checks little", found)
	}
}

// BenchmarkMentions compares the text that made the expression slow with
// letters of the same size, each beside the expression it replaces.
//
//	go test -run '^$' -bench Mentions .
func BenchmarkMentions(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"letters", strings.Repeat("ab", 1_000_000)},
		{"open-brackets", strings.Repeat("[@", 1_000_000)},
		{"marks", strings.Repeat("[@x](mention:", 150_000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				Mentions(c.text)
			}
		})
		b.Run(c.name+"/expression", func(b *testing.B) { // the baseline: what mentions cost before
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				mentionRE.FindAllStringSubmatch(c.text, -1)
			}
		})
	}
}
