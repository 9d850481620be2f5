// Package changeset is the change algebra of live editing: the ChangeSet of
// CodeMirror 6 (@codemirror/state) in Go, with its JSON form, applying a
// change set to a text, composing and mapping (rebasing) change sets, and
// the in-memory state of the central authority of @codemirror/collab.
//
// The package does no I/O and keeps no clock. Positions and lengths are in
// UTF-16 code units, as in the browser; texts are Go strings in UTF-8. A
// change set describes a whole document: it covers its old length with
// sections that are either kept unchanged or replaced (deleted, inserted, or
// both), and can only be applied to a text of exactly that length.
//
// The rules a server relies on:
//   - Parse refuses anything the browser would not send: malformed JSON,
//     lengths that are not non-negative integers, inserted lines that contain
//     a line break ("\n" or "\r") or are not valid UTF-8 (lone surrogates
//     included), and documents longer than MaxLength. Its work is linear in
//     its input.
//   - Apply refuses a change set whose length is not the text's, or whose
//     section boundary falls inside a surrogate pair of the text. It takes
//     time linear in the text plus the change set.
//   - Compose and Map follow ChangeSet.compose and ChangeSet.map of
//     @codemirror/state exactly, tie-breaking included, so a Go client or
//     server and the browsers compute the same change sets.
//
// Text given to a live session should use "\n" line breaks only: CodeMirror
// splits at "\r\n", "\r" and "\n" and counts each break as one unit, so a
// text with "\r" would have another length in the browser than here.
package changeset

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxLength bounds the document length (before and after) a change set may
// describe, in UTF-16 units. It keeps every sum of lengths far from
// overflowing; real documents are much smaller (the server's size limit).
const MaxLength = 1<<31 - 1

// Errors returned by this package; they are wrapped with detail, so compare
// them with errors.Is.
var (
	// ErrMalformed: the JSON is not a change set.
	ErrMalformed = errors.New("malformed change set")
	// ErrLength: the change set does not start from a document of the
	// length it is given (a text in Apply, the other change set's in
	// Compose and Map, a position in MapPos).
	ErrLength = errors.New("change set length does not match")
	// ErrSurrogate: a position falls between the two halves of a
	// surrogate pair (inside one character outside the Basic
	// Multilingual Plane, such as an emoji).
	ErrSurrogate = errors.New("position inside a surrogate pair")
)

// section is one run of the document: len units of the old document, and
// ins = -1 when they are kept, otherwise the number of units that replace
// them (text, in UTF-8). An insertion has len 0, a deletion ins 0.
type section struct {
	len  int
	ins  int
	text string
}

// ChangeSet is a set of changes to a document, as CodeMirror's ChangeSet.
// The zero value is the empty change set of an empty document. A ChangeSet
// is immutable; its methods return new values.
type ChangeSet struct {
	sections []section
}

// Len returns the length of the document before the changes, in UTF-16
// units.
func (cs ChangeSet) Len() int {
	n := 0
	for _, s := range cs.sections {
		n += s.len
	}
	return n
}

// NewLen returns the length of the document after the changes, in UTF-16
// units.
func (cs ChangeSet) NewLen() int {
	n := 0
	for _, s := range cs.sections {
		if s.ins < 0 {
			n += s.len
		} else {
			n += s.ins
		}
	}
	return n
}

// Empty reports whether the change set changes nothing.
func (cs ChangeSet) Empty() bool {
	for _, s := range cs.sections {
		if s.ins >= 0 {
			return false
		}
	}
	return true
}

// Identity returns the change set that keeps a document of length n as it
// is (CodeMirror's ChangeSet.empty(n)).
func Identity(n int) ChangeSet {
	if n <= 0 {
		return ChangeSet{}
	}
	return ChangeSet{sections: []section{{len: n, ins: -1}}}
}

// Replace returns the change set that replaces the units from..to of a
// document of length n with insert (from == to inserts, an empty insert
// deletes). It refuses a range outside the document and an insert that
// is not valid UTF-8; like Diff, it leaves line breaks as they are (use
// "\n" only).
func Replace(n, from, to int, insert string) (ChangeSet, error) {
	if from < 0 || from > to || to > n || n > MaxLength {
		return ChangeSet{}, fmt.Errorf("%w: range %d..%d in a document of length %d", ErrLength, from, to, n)
	}
	if !utf8.ValidString(insert) {
		return ChangeSet{}, fmt.Errorf("%w: insert is not valid UTF-8", ErrMalformed)
	}
	var b builder
	b.add(from, -1)
	ins := utf16Len(insert)
	if from < to || ins > 0 {
		b.add(to-from, ins)
		b.addText(insert)
	}
	b.add(n-to, -1)
	return b.done(), nil
}

// Apply applies the change set to text and returns the new text. It
// returns ErrLength when the text's length in UTF-16 units is not Len(),
// and ErrSurrogate when a kept or deleted run starts or ends inside a
// surrogate pair of the text.
func (cs ChangeSet) Apply(text string) (string, error) {
	if n, want := utf16Len(text), cs.Len(); n != want {
		return "", fmt.Errorf("%w: the change set is for a document of length %d, the text has %d", ErrLength, want, n)
	}
	var out strings.Builder
	grow := len(text)
	for _, s := range cs.sections {
		grow += len(s.text)
	}
	out.Grow(grow)
	at, pos := 0, 0 // byte offset in text, UTF-16 position
	for _, s := range cs.sections {
		end, ok := advance(text, at, s.len)
		if !ok {
			return "", fmt.Errorf("%w: at %d", ErrSurrogate, pos+s.len)
		}
		if s.ins < 0 {
			out.WriteString(text[at:end])
		} else {
			out.WriteString(s.text)
		}
		at, pos = end, pos+s.len
	}
	return out.String(), nil
}

// Assoc values for MapPos: which side of an insertion at the position the
// mapped position stays on.
const (
	Before = -1 // stay before text inserted at the position
	After  = 1  // move past text inserted at the position
)

// MapPos maps a position in the document before the changes to one in the
// document after them, as CodeMirror's ChangeDesc.mapPos in its simple
// mode: text inserted at the position goes after it when assoc is negative
// (Before) and before it otherwise (After); a position inside a replaced
// range moves to the start of the replacement (assoc < 0) or its end. It
// returns ErrLength when pos is not within 0..Len(). (The modes that report
// a deleted position, MapMode.TrackDel and its kin, are not needed yet.)
func (cs ChangeSet) MapPos(pos, assoc int) (int, error) {
	if pos < 0 {
		return 0, fmt.Errorf("%w: position %d", ErrLength, pos)
	}
	posA, posB := 0, 0
	for _, s := range cs.sections {
		endA := posA + s.len
		if s.ins < 0 {
			if endA > pos {
				return posB + (pos - posA), nil
			}
			posB += s.len
		} else {
			if endA > pos || endA == pos && assoc < 0 && s.len == 0 {
				if pos == posA || assoc < 0 {
					return posB, nil
				}
				return posB + s.ins, nil
			}
			posB += s.ins
		}
		posA = endA
	}
	if pos > posA {
		return 0, fmt.Errorf("%w: position %d in a document of length %d", ErrLength, pos, posA)
	}
	return posB, nil
}

// Changes calls f for each changed range, as CodeMirror's iterChanges:
// fromA..toA in the old document is replaced by fromB..toB in the new one,
// which holds inserted. Adjacent changes are reported together.
func (cs ChangeSet) Changes(f func(fromA, toA, fromB, toB int, inserted string)) {
	posA, posB := 0, 0
	for i := 0; i < len(cs.sections); {
		s := cs.sections[i]
		i++
		if s.ins < 0 {
			posA += s.len
			posB += s.len
			continue
		}
		endA, endB := posA, posB
		var text strings.Builder
		for {
			endA += s.len
			endB += s.ins
			text.WriteString(s.text)
			if i == len(cs.sections) || cs.sections[i].ins < 0 {
				break
			}
			s = cs.sections[i]
			i++
		}
		f(posA, endA, posB, endB, text.String())
		posA, posB = endA, endB
	}
}

// String describes the sections as CodeMirror's toString does ("5 0:2 3":
// keep 5, insert 2, keep 3), for tests and logs. It holds no text.
func (cs ChangeSet) String() string {
	var b strings.Builder
	for i, s := range cs.sections {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d", s.len)
		if s.ins >= 0 {
			fmt.Fprintf(&b, ":%d", s.ins)
		}
	}
	return b.String()
}

// utf16Len returns the length of s in UTF-16 code units; an invalid byte
// counts as one unit (it becomes U+FFFD in the browser).
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n++
		if r > 0xFFFF {
			n++
		}
		i += size
	}
	return n
}

// advance returns the byte offset n UTF-16 units after byte offset at in s,
// and false when that falls inside a surrogate pair or past the end.
func advance(s string, at, n int) (int, bool) {
	for n > 0 {
		if at >= len(s) {
			return at, false
		}
		c := s[at]
		if c < utf8.RuneSelf {
			at++
			n--
			continue
		}
		r, size := utf8.DecodeRuneInString(s[at:])
		units := 1
		if r > 0xFFFF {
			units = 2
		}
		if units > n {
			return at, false
		}
		at += size
		n -= units
	}
	return at, true
}
