package docindex

import "unsafe"

// strs packs the strings the index keeps for its life (document ids,
// terms) into blocks of strChunk bytes: one heap object for a thousand ids
// instead of one each. At 100,000 documents the ids and terms were 150,000
// of the 230,000 objects of the heap at rest, each one for the collector to
// mark at every collection, and each in a span shared with the garbage of
// the build (the rows read), which then kept those spans' pages.
type strs struct{ cur []byte }

const strChunk = 64 << 10

// keep returns a copy of s in the current block. The bytes of a block are
// never written again once a string is made of them.
func (p *strs) keep(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > cap(p.cur)-len(p.cur) {
		if len(s) > strChunk/8 {
			return string([]byte(s)) // a long one alone, not to waste a block's end
		}
		p.cur = make([]byte, 0, strChunk)
	}
	start := len(p.cur)
	p.cur = append(p.cur, s...)
	return unsafe.String(&p.cur[start], len(s))
}
