package changeset

import (
	"strings"
	"unicode/utf8"

	"quire/textdiff"
)

// Diff returns one change set that turns old into new (Apply(old) gives
// new), for a write that does not come from the live editor (an API PUT, a
// version restore) to reach the editors as one change.
//
// It keeps the common start and end, diffs the middle by lines with
// textdiff.Lines (bounded: past textdiff.MaxEdits differing lines the rest
// of the middle is replaced whole), and inside each replaced block of
// lines keeps the common start and end again, so that a small edit moves
// few positions (cursors and comment anchors stay). Time is linear in
// len(old)+len(new) times a fixed bound, memory linear plus a fixed bound;
// positions never fall inside a surrogate pair. Both texts should be valid
// UTF-8 with "\n" line breaks only (see the package comment): a change set
// whose text holds "\r" would not read back with Parse.
func Diff(old, new string) ChangeSet {
	var b builder
	pre, suf := commonEnds(old, new)
	b.add(utf16Len(old[:pre]), -1)
	midOld, midNew := old[pre:len(old)-suf], new[pre:len(new)-suf]
	if midOld != "" || midNew != "" {
		ops := textdiff.Lines(splitAfter(midOld), splitAfter(midNew))
		// Equal lines are kept; each run of deleted and inserted lines
		// between them is one replaced block.
		var del, ins strings.Builder
		flush := func() {
			replace(&b, del.String(), ins.String())
			del.Reset()
			ins.Reset()
		}
		for _, op := range ops {
			switch op.Kind {
			case textdiff.Equal:
				flush()
				b.add(utf16Len(op.Text), -1)
			case textdiff.Delete:
				del.WriteString(op.Text)
			case textdiff.Insert:
				ins.WriteString(op.Text)
			}
		}
		flush()
	}
	b.add(utf16Len(old[len(old)-suf:]), -1)
	return b.done()
}

// replace adds the change of old into new, keeping their common ends.
func replace(b *builder, old, new string) {
	if old == "" && new == "" {
		return
	}
	pre, suf := commonEnds(old, new)
	b.add(utf16Len(old[:pre]), -1)
	mid := new[pre : len(new)-suf]
	b.add(utf16Len(old[pre:len(old)-suf]), utf16Len(mid))
	b.addText(mid)
	b.add(utf16Len(old[len(old)-suf:]), -1)
}

// commonEnds returns the byte lengths of the common start and the common
// end of a and b, on character boundaries and not overlapping.
func commonEnds(a, b string) (pre, suf int) {
	n := min(len(a), len(b))
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	for pre > 0 && pre < len(a) && !utf8.RuneStart(a[pre]) {
		pre--
	}
	for pre > 0 && pre < len(b) && !utf8.RuneStart(b[pre]) {
		pre--
	}
	n -= pre
	for suf < n && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for suf > 0 && !utf8.RuneStart(a[len(a)-suf]) {
		suf--
	}
	return pre, suf
}

// splitAfter splits s after each "\n", so that the lines joined give s.
func splitAfter(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, "\n")
}
