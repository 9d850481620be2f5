package transfer

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkScanHostile runs the reference-definition and wikilink scans
// over hostile texts of 1 MiB and 4 MiB: the time per byte stays the same
// (each scan is one pass).
func BenchmarkScanHostile(b *testing.B) {
	for _, n := range []int{1 << 20, 4 << 20} {
		for _, tc := range []struct{ name, unit string }{
			{"unclosed wikilinks", "[["},
			{"wikilinks", "[[a]]"},
			{"code spans", "`` [[a]] ` "},
			{"definitions", "[a]: b\n"},
		} {
			s := strings.Repeat(tc.unit, n/len(tc.unit))
			b.Run(tc.name+"/"+strconv.Itoa(n>>20)+"MiB", func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					rewriteWikilinks(s, func(wikiLink) (string, bool) { return "x", true })
					rewriteRefs(s, func(string) (string, bool) { return "y", true })
				}
			})
		}
	}
}
