package docindex

import (
	"encoding/binary"
	"math/bits"
)

// A term held by an eighth of the documents or more is frozen dense: a
// bitmap of the documents with a byte of count each, rather than packed
// gaps (posting). A search then tests a document of the other words'
// lists in the bitmap, or intersects two such words a word of 64
// documents at a time, instead of decoding the whole list of the longer
// one; only the counts of the matches are read (bm25 needs them). It
// takes no more room than the packed gaps for most such terms: a bit a
// document (an eighth of a byte, against a byte a posting) and a byte a
// posting for the count, against a byte for a count other than 1.
//
// The layout, in the base: four little-endian uint32 (the bitmap's words,
// the documents, the pairs of the overflow, the last document), then the
// bitmap (document d is bit d%64 of word d/64, each word 8 bytes
// little-endian), one byte a document for its count in document order
// (manyCount and above: the overflow's), then the overflow: pairs of
// uint32, the rank of a document in the bitmap and its count, in order.
const (
	denseFlag   = 1 << 31 // in posting.n: the base part is dense
	denseShare  = 8       // dense from 1/denseShare of the documents
	sparseShare = 16      // packed again below 1/sparseShare of them
	denseHeader = 16
	manyCount   = 255
)

// dense is a term's dense base, read.
type dense struct {
	bits, counts, ovf []byte
	last              uint32
}

func readDense(b []byte) dense {
	nw, df, no := int(le32(b)), int(le32(b[4:])), int(le32(b[8:]))
	last := le32(b[12:])
	b = b[denseHeader:]
	return dense{bits: b[:nw*8], counts: b[nw*8 : nw*8+df], ovf: b[nw*8+df : nw*8+df+no*8], last: last}
}

func denseSize(nw, df, novf int) int { return denseHeader + nw*8 + df + novf*8 }

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// each calls fn with each document of d in order and its count.
func (d *dense) each(fn func(doc, w uint32)) {
	r, o := 0, 0
	for i := 0; i < len(d.bits); i += 8 {
		word := le64(d.bits[i:])
		for word != 0 {
			doc := uint32(i*8 + bits.TrailingZeros64(word))
			word &= word - 1
			w := uint32(d.counts[r])
			if w == manyCount {
				w = le32(d.ovf[o*8+4:])
				o++
			}
			fn(doc, w)
			r++
		}
	}
}

// denseWriter writes a dense base into b, which is zeroed and of the size
// denseSize(nw, df, novf).
type denseWriter struct {
	d    dense
	r, o int
}

func newDenseWriter(b []byte, nw, df, novf int, last uint32) *denseWriter {
	binary.LittleEndian.PutUint32(b, uint32(nw))
	binary.LittleEndian.PutUint32(b[4:], uint32(df))
	binary.LittleEndian.PutUint32(b[8:], uint32(novf))
	binary.LittleEndian.PutUint32(b[12:], last)
	return &denseWriter{d: readDense(b)}
}

// add sets document doc with count w, after those added before.
func (w *denseWriter) add(doc, c uint32) {
	w.d.bits[doc/8] |= 1 << (doc % 8)
	if c >= manyCount {
		w.d.counts[w.r] = manyCount
		binary.LittleEndian.PutUint32(w.d.ovf[w.o*8:], uint32(w.r))
		binary.LittleEndian.PutUint32(w.d.ovf[w.o*8+4:], c)
		w.o++
	} else {
		w.d.counts[w.r] = byte(c)
	}
	w.r++
}

// eachPacked calls fn with each document of packed postings (posting),
// their gaps counted from d, and returns the last document.
func eachPacked(data []byte, d uint32, fn func(doc, w uint32)) uint32 {
	for i := 0; i < len(data); {
		v, m := binary.Uvarint(data[i:])
		i += m
		d += uint32(v >> 1)
		w := uint64(1)
		if v&1 != 0 {
			w, m = binary.Uvarint(data[i:])
			i += m
		}
		fn(d, uint32(w))
	}
	return d
}

// baseOf returns the base part of p.
func (x *Index) baseOf(p *posting) []byte {
	return x.base.a.b[p.off : p.off+uint64(p.size())]
}

// each calls fn with every document of p (the dead ones too) in order.
func (x *Index) each(p *posting, fn func(doc, w uint32)) {
	base := x.baseOf(p)
	var last uint32
	if p.dense() {
		d := readDense(base)
		d.each(fn)
		last = d.last
	} else {
		last = eachPacked(base, 0, fn)
	}
	eachPacked(p.data, last, fn)
}

// tally counts the documents of p, and those whose count goes to a dense
// overflow.
func (x *Index) tally(p *posting) (df, novf int) {
	count := func(_, w uint32) {
		df++
		if w >= manyCount {
			novf++
		}
	}
	if !p.dense() {
		x.each(p, count)
		return df, novf
	}
	// A dense base says its own; only the delta is read.
	d := readDense(x.baseOf(p))
	eachPacked(p.data, d.last, count)
	return df + len(d.counts), novf + len(d.ovf)/8
}

// plan returns the size of p in a new base for n documents (words of
// bitmap nw), negative when it is to be dense there.
func (x *Index) plan(p *posting, n, nw int) int {
	packed := p.size() + len(p.data)
	if !p.dense() && packed*denseShare < n {
		return packed // fewer documents than bytes, too few to be dense
	}
	df, novf := x.tally(p)
	if df > 0 && (df*denseShare >= n || p.dense() && df*sparseShare >= n) {
		return -denseSize(nw, df, novf)
	}
	if !p.dense() {
		return packed
	}
	size, last := 0, uint32(0)
	x.each(p, func(doc, w uint32) {
		v := uint64(doc-last) << 1
		if w != 1 {
			v |= 1
			size += uvarintLen(uint64(w))
		}
		size += uvarintLen(v)
		last = doc
	})
	return size
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// writeDense writes p dense into b (zeroed, its plan's size), for nw words
// of bitmap.
func (x *Index) writeDense(p *posting, b []byte, nw int) {
	df, novf := x.tally(p)
	w := newDenseWriter(b, nw, df, novf, p.last)
	if !p.dense() {
		x.each(p, w.add)
		return
	}
	// The old bitmap, counts and overflow as they are, then the delta.
	old := readDense(x.baseOf(p))
	copy(w.d.bits, old.bits)
	w.r = copy(w.d.counts, old.counts)
	w.o = copy(w.d.ovf, old.ovf) / 8
	eachPacked(p.data, old.last, w.add)
}

// writePacked writes p packed into b (its plan's size).
func (x *Index) writePacked(p *posting, b []byte) {
	if !p.dense() {
		copy(b[copy(b, x.baseOf(p)):], p.data)
		return
	}
	var last uint32
	b = b[:0]
	x.each(p, func(doc, w uint32) {
		v := uint64(doc-last) << 1
		if w != 1 {
			v |= 1
		}
		b = binary.AppendUvarint(b, v)
		if w != 1 {
			b = binary.AppendUvarint(b, uint64(w))
		}
		last = doc
	})
}

// denseTerm reads the counts of a dense base for documents in increasing
// order: the rank of a document in the bitmap is counted on from the last
// one's, so that a search reads each word of the bitmap once at most.
type denseTerm struct {
	d    dense
	w    int // the word up to which rank counts
	rank int
	o    int // the next pair of the overflow
}

// count returns the count of doc, 0 when the base does not hold it; doc is
// at least the last one asked.
func (t *denseTerm) count(doc uint32) uint32 {
	i := int(doc/64) * 8
	if i >= len(t.d.bits) {
		return 0
	}
	word := le64(t.d.bits[i:])
	bit := uint64(1) << (doc % 64)
	if word&bit == 0 {
		return 0
	}
	for ; t.w < i; t.w += 8 {
		t.rank += bits.OnesCount64(le64(t.d.bits[t.w:]))
	}
	r := t.rank + bits.OnesCount64(word&(bit-1))
	c := uint32(t.d.counts[r])
	if c == manyCount {
		for int(le32(t.d.ovf[t.o*8:])) < r {
			t.o++
		}
		c = le32(t.d.ovf[t.o*8+4:])
	}
	return c
}
