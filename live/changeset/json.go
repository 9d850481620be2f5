package changeset

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse reads a change set in the JSON form of CodeMirror's
// ChangeSet.toJSON: an array whose elements are either a number (a run of
// that many units kept) or an array [deleted, line1, line2, ...] (deleted
// units replaced by the lines joined with "\n"; [n] deletes n units).
//
// It refuses, with an error wrapping ErrMalformed: anything else (other
// JSON values, trailing data), numbers that are not plain non-negative
// integers (no sign, fraction or exponent: the browser writes none), a
// document length (before or after) above MaxLength, invalid UTF-8, lone
// surrogate escapes, control characters that are not escaped (as JSON
// requires), and lines that contain "\n" or "\r" (CodeMirror splits
// inserted text at line breaks, so a line never holds one). Parse never
// panics and does work linear in len(data).
//
// Runs are joined as CodeMirror's own operations join them (adjacent kept
// runs, adjacent deletions, adjacent insertions; empty runs dropped), which
// changes neither the text the change set produces nor how it maps
// positions; a change set the browser wrote comes out of MarshalJSON
// byte for byte as it came in.
func Parse(data []byte) (ChangeSet, error) {
	p := parser{data: data}
	cs, err := p.changeSet()
	if err != nil {
		return ChangeSet{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return cs, nil
}

// UnmarshalJSON implements json.Unmarshaler with Parse.
func (cs *ChangeSet) UnmarshalJSON(data []byte) error {
	v, err := Parse(data)
	if err != nil {
		return err
	}
	*cs = v
	return nil
}

// MarshalJSON writes the change set as CodeMirror's ChangeSet.toJSON and
// the browser's JSON.stringify do: no spaces, strings escaped only where
// JSON requires it. (json.Marshal, by default, escapes <, > and & in the
// result again: the same value in other bytes.)
func (cs ChangeSet) MarshalJSON() ([]byte, error) {
	size := 2
	for _, s := range cs.sections {
		size += 16 + len(s.text) + len(s.text)/8
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for i, s := range cs.sections {
		if i > 0 {
			out = append(out, ',')
		}
		switch {
		case s.ins < 0:
			out = fmt.Appendf(out, "%d", s.len)
		case s.ins == 0:
			out = fmt.Appendf(out, "[%d]", s.len)
		default:
			out = fmt.Appendf(out, "[%d", s.len)
			for line := range strings.SplitSeq(s.text, "\n") {
				out = append(out, ',')
				out = appendString(out, line)
			}
			out = append(out, ']')
		}
	}
	out = append(out, ']')
	return out, nil
}

// appendString quotes s as JavaScript's JSON.stringify does.
func appendString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// parser reads the restricted JSON of a change set in one pass.
type parser struct {
	data []byte
	pos  int
	buf  []byte // a line being decoded
}

func (p *parser) changeSet() (ChangeSet, error) {
	var b builder
	oldLen, newLen := 0, 0
	p.space()
	if err := p.expect('['); err != nil {
		return ChangeSet{}, err
	}
	p.space()
	if p.peek() == ']' {
		p.pos++
	} else {
		for {
			switch p.peek() {
			case '[':
				p.pos++
				n, ins, err := p.change(&b)
				if err != nil {
					return ChangeSet{}, err
				}
				oldLen += n
				newLen += ins
			default:
				n, err := p.number()
				if err != nil {
					return ChangeSet{}, err
				}
				b.add(n, -1)
				oldLen += n
				newLen += n
			}
			if oldLen > MaxLength || newLen > MaxLength {
				return ChangeSet{}, fmt.Errorf("document longer than %d units", MaxLength)
			}
			p.space()
			if p.peek() == ']' {
				p.pos++
				break
			}
			if err := p.expect(','); err != nil {
				return ChangeSet{}, err
			}
			p.space()
		}
	}
	p.space()
	if p.pos != len(p.data) {
		return ChangeSet{}, fmt.Errorf("data after the change set at byte %d", p.pos)
	}
	return b.done(), nil
}

// change reads the rest of [deleted, line...] after its '['.
func (p *parser) change(b *builder) (n, ins int, err error) {
	p.space()
	n, err = p.number()
	if err != nil {
		return 0, 0, err
	}
	var text strings.Builder
	lines := 0
	for {
		p.space()
		if p.peek() == ']' {
			p.pos++
			break
		}
		if err := p.expect(','); err != nil {
			return 0, 0, err
		}
		p.space()
		line, units, err := p.line()
		if err != nil {
			return 0, 0, err
		}
		if lines > 0 {
			text.WriteByte('\n')
			ins++
		}
		text.Write(line)
		ins += units
		lines++
		if ins > MaxLength {
			return 0, 0, fmt.Errorf("insert longer than %d units", MaxLength)
		}
	}
	b.add(n, ins)
	b.addText(text.String())
	return n, ins, nil
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

func (p *parser) expect(c byte) error {
	if p.peek() != c {
		return p.unexpected(fmt.Sprintf("%q", c))
	}
	p.pos++
	return nil
}

func (p *parser) unexpected(want string) error {
	if p.pos >= len(p.data) {
		return fmt.Errorf("unexpected end, want %s", want)
	}
	return fmt.Errorf("unexpected %q at byte %d, want %s", p.data[p.pos], p.pos, want)
}

// number reads a non-negative integer without sign, fraction or exponent.
func (p *parser) number() (int, error) {
	start := p.pos
	n := 0
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		n = n*10 + int(p.data[p.pos]-'0')
		p.pos++
		if n > MaxLength {
			return 0, fmt.Errorf("length above %d at byte %d", MaxLength, start)
		}
	}
	switch {
	case p.pos == start:
		return 0, p.unexpected("a length")
	case p.data[start] == '0' && p.pos-start > 1:
		return 0, fmt.Errorf("leading zero at byte %d", start)
	}
	if c := p.peek(); c == '.' || c == 'e' || c == 'E' {
		return 0, fmt.Errorf("length that is not an integer at byte %d", start)
	}
	return n, nil
}

// line reads a JSON string that holds no line break and returns it in
// UTF-8 with its length in UTF-16 units. The slice is valid until the next
// call.
func (p *parser) line() ([]byte, int, error) {
	if err := p.expect('"'); err != nil {
		return nil, 0, err
	}
	start := p.pos - 1
	p.buf = p.buf[:0]
	units := 0
	for {
		if p.pos >= len(p.data) {
			return nil, 0, fmt.Errorf("unterminated string at byte %d", start)
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return p.buf, units, nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return nil, 0, err
			}
			if r == '\n' || r == '\r' {
				return nil, 0, fmt.Errorf("line break inside a line at byte %d", start)
			}
			p.buf = utf8.AppendRune(p.buf, r)
			units += utf16.RuneLen(r)
		case c < 0x20:
			return nil, 0, fmt.Errorf("control character in a string at byte %d", p.pos)
		case c < utf8.RuneSelf:
			p.buf = append(p.buf, c)
			p.pos++
			units++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, 0, fmt.Errorf("invalid UTF-8 at byte %d", p.pos)
			}
			p.buf = append(p.buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
			units += utf16.RuneLen(r)
		}
	}
}

// escape reads one escape sequence (a surrogate pair takes two) and
// returns the character.
func (p *parser) escape() (rune, error) {
	at := p.pos
	if p.pos+1 >= len(p.data) {
		return 0, fmt.Errorf("unterminated escape at byte %d", at)
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return 0, err
		}
		switch {
		case r >= 0xDC00 && r < 0xE000:
			return 0, fmt.Errorf("lone low surrogate at byte %d", at)
		case r >= 0xD800 && r < 0xDC00:
			if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
				return 0, fmt.Errorf("lone high surrogate at byte %d", at)
			}
			p.pos += 2
			lo, err := p.hex4()
			if err != nil {
				return 0, err
			}
			if lo < 0xDC00 || lo >= 0xE000 {
				return 0, fmt.Errorf("lone high surrogate at byte %d", at)
			}
			return utf16.DecodeRune(r, lo), nil
		}
		return r, nil
	}
	return 0, fmt.Errorf("invalid escape at byte %d", at)
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, fmt.Errorf("short \\u escape at byte %d", p.pos)
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, fmt.Errorf("invalid \\u escape at byte %d", p.pos)
		}
	}
	p.pos += 4
	return r, nil
}
