package changeset

import (
	"fmt"
	"strings"
)

// This file follows composeSets, mapSet, addSection, addInsert and
// SectionIter of @codemirror/state (src/change.ts) line by line, so that
// Compose and Map give the browser's results, tie-breaking included. The
// only differences: inserted text is a UTF-8 string per section (so a
// slice at a UTF-16 offset is checked not to split a surrogate pair), and
// mismatched lengths are errors instead of exceptions.

// builder accumulates sections as CodeMirror's addSection and addInsert
// do: adjacent kept runs and adjacent deletions merge, an insertion merges
// into a preceding insertion, empty runs vanish. The text of the last
// section grows in buf so that many merges stay linear.
type builder struct {
	s   []section
	buf strings.Builder
}

func (b *builder) add(n, ins int) { b.addJoin(n, ins, false) }

func (b *builder) addJoin(n, ins int, forceJoin bool) {
	if n == 0 && ins <= 0 {
		return
	}
	last := len(b.s) - 1
	switch {
	case last >= 0 && ins <= 0 && ins == b.s[last].ins:
		b.s[last].len += n
	case last >= 0 && n == 0 && b.s[last].len == 0:
		b.s[last].ins += ins
	case last >= 0 && forceJoin:
		b.s[last].len += n
		b.s[last].ins += ins
	default:
		b.flush()
		b.s = append(b.s, section{len: n, ins: ins})
	}
}

// addText appends inserted text to the last section.
func (b *builder) addText(text string) {
	if text == "" || len(b.s) == 0 {
		return
	}
	b.buf.WriteString(text)
}

func (b *builder) flush() {
	if len(b.s) > 0 && b.buf.Len() > 0 {
		b.s[len(b.s)-1].text += b.buf.String()
		b.buf.Reset()
	}
}

func (b *builder) done() ChangeSet {
	b.flush()
	return ChangeSet{sections: b.s}
}

// iter walks the sections of a change set as CodeMirror's SectionIter.
// ins is -2 once it is done. off counts the units of the current section
// already passed; boff is the byte offset in text that matches off when
// the section's inserted text is walked (forward2).
type iter struct {
	cs   []section
	i    int
	len  int
	ins  int
	off  int
	text string
	boff int
	err  error
}

func newIter(cs ChangeSet) *iter {
	it := &iter{cs: cs.sections}
	it.next()
	return it
}

func (it *iter) next() {
	if it.i < len(it.cs) {
		s := it.cs[it.i]
		it.i++
		it.len, it.ins, it.text = s.len, s.ins, s.text
	} else {
		it.len, it.ins, it.text = 0, -2, ""
	}
	it.off, it.boff = 0, 0
}

func (it *iter) done() bool { return it.ins == -2 }

func (it *iter) len2() int {
	if it.ins < 0 {
		return it.len
	}
	return it.ins
}

func (it *iter) forward(n int) {
	if n == it.len {
		it.next()
		return
	}
	it.len -= n
	it.off += n
}

func (it *iter) forward2(n int) {
	switch {
	case it.ins == -1:
		it.forward(n)
	case n == it.ins:
		it.next()
	default:
		it.ins -= n
		it.off += n
		end, ok := advance(it.text, it.boff, n)
		if !ok && it.err == nil {
			it.err = fmt.Errorf("%w: in inserted text", ErrSurrogate)
		}
		it.boff = end
	}
}

// textBit returns the next n units of the current section's inserted text.
func (it *iter) textBit(n int) string {
	end, ok := advance(it.text, it.boff, n)
	if !ok && it.err == nil {
		it.err = fmt.Errorf("%w: in inserted text", ErrSurrogate)
	}
	return it.text[it.boff:end]
}

// Compose returns the change set that does cs and then other: other must
// start from the document cs produces (other.Len() == cs.NewLen(),
// otherwise ErrLength). It returns ErrSurrogate when other cuts a
// character that cs inserts in half.
func (cs ChangeSet) Compose(other ChangeSet) (ChangeSet, error) {
	if cs.NewLen() != other.Len() {
		return ChangeSet{}, fmt.Errorf("%w: composing a change set to length %d with one from length %d", ErrLength, cs.NewLen(), other.Len())
	}
	if cs.Empty() {
		return other, nil
	}
	if other.Empty() {
		return cs, nil
	}
	var out builder
	a, b := newIter(cs), newIter(other)
	open := false
	for {
		switch {
		case a.done() && b.done():
			if a.err != nil {
				return ChangeSet{}, a.err
			}
			return out.done(), nil
		case a.ins == 0: // a deletion in cs
			out.addJoin(a.len, 0, open)
			a.next()
		case b.len == 0 && !b.done(): // an insertion in other
			out.addJoin(0, b.ins, open)
			out.addText(b.text)
			b.next()
		case a.done() || b.done():
			return ChangeSet{}, fmt.Errorf("%w: while composing", ErrLength)
		default:
			n := min(a.len2(), b.len)
			before := len(out.s)
			switch {
			case a.ins == -1:
				insB := -1
				if b.ins != -1 {
					insB = b.ins
					if b.off != 0 {
						insB = 0
					}
				}
				out.addJoin(n, insB, open)
				if insB > 0 {
					out.addText(b.text)
				}
			case b.ins == -1:
				lenA := a.len
				if a.off != 0 {
					lenA = 0
				}
				out.addJoin(lenA, n, open)
				out.addText(a.textBit(n))
			default:
				lenA, insB := a.len, b.ins
				if a.off != 0 {
					lenA = 0
				}
				if b.off != 0 {
					insB = 0
				}
				out.addJoin(lenA, insB, open)
				if b.off == 0 {
					out.addText(b.text)
				}
			}
			open = (a.ins > n || b.ins >= 0 && b.len > n) && (open || len(out.s) > before)
			a.forward2(n)
			b.forward(n)
		}
	}
}

// Map rebases cs over other, a change set made concurrently on the same
// document (other.Len() == cs.Len(), otherwise ErrLength): the result
// applies to the document other produces and makes the changes of cs
// there. Where both insert at the same position, other's text comes
// first unless before is true. As in CodeMirror, for change sets A and B
// of one document, A then B.Map(A, false) and B then A.Map(B, true) give
// the same text.
func (cs ChangeSet) Map(other ChangeSet, before bool) (ChangeSet, error) {
	if cs.Len() != other.Len() {
		return ChangeSet{}, fmt.Errorf("%w: mapping a change set of length %d over one of length %d", ErrLength, cs.Len(), other.Len())
	}
	if other.Empty() {
		return cs, nil
	}
	var out builder
	a, b := newIter(cs), newIter(other)
	inserted := -1 // a.i of the section of cs whose text is already out
	for {
		switch {
		case a.done() && b.len > 0 || b.done() && a.len > 0:
			return ChangeSet{}, fmt.Errorf("%w: while mapping", ErrLength)
		case a.ins == -1 && b.ins == -1:
			// A run both keep.
			n := min(a.len, b.len)
			out.add(n, -1)
			a.forward(n)
			b.forward(n)
		case b.ins >= 0 && (a.ins < 0 || inserted == a.i || a.off == 0 && (b.len < a.len || b.len == a.len && !before)):
			// A change in other that comes before the next change in
			// cs (by start, then length, then before): keep its
			// result, and drop what it covers of cs.
			n := b.len
			out.add(b.ins, -1)
			for n > 0 {
				piece := min(a.len, n)
				if a.ins >= 0 && inserted < a.i && a.len <= piece {
					out.add(0, a.ins)
					out.addText(a.text)
					inserted = a.i
				}
				a.forward(piece)
				n -= piece
			}
			b.next()
		case a.ins >= 0:
			// The part of a change in cs up to the next change in
			// other that is not a deletion inside it.
			n, left := 0, a.len
			for left > 0 {
				if b.ins == -1 {
					piece := min(left, b.len)
					n += piece
					left -= piece
					b.forward(piece)
				} else if b.ins == 0 && b.len < left {
					left -= b.len
					b.next()
				} else {
					break
				}
			}
			if inserted < a.i {
				out.add(n, a.ins)
				out.addText(a.text)
			} else {
				out.add(n, 0)
			}
			inserted = a.i
			a.forward(a.len - left)
		case a.done() && b.done():
			return out.done(), nil
		default:
			return ChangeSet{}, fmt.Errorf("%w: while mapping", ErrLength)
		}
	}
}
