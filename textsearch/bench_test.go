package textsearch_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"quire/textsearch"
)

// BenchmarkHighlightPage is the highlights of one page of search results
// as docs.List computes them: 20 documents of about 1.5 KB of markdown (the
// bench harness's size), two search words found in the body.
//
//	go test ./textsearch -run '^$' -bench HighlightPage -count 5
func BenchmarkHighlightPage(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := strings.Fields("the release deploy incident rollback cluster node page owner review draft status " +
		"database backup restore schema index query latency error budget alert runbook oncall service team")
	type doc struct{ title, summary, content string }
	page := make([]doc, 20)
	for i := range page {
		var c strings.Builder
		for c.Len() < 1500 {
			if r.IntN(12) == 0 {
				c.WriteString("\n\n## ")
			}
			c.WriteString(vocab[r.IntN(len(vocab))])
			c.WriteByte(' ')
		}
		page[i] = doc{fmt.Sprintf("Runbook %d: database restore", i), "How to restore a backup", c.String()}
	}
	b.ReportAllocs()
	for b.Loop() {
		q := textsearch.NewQuery("restore latency")
		for _, d := range page {
			q.Highlight(d.title, d.summary, d.content)
		}
	}
}
