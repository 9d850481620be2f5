package textsearch

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a highlight. Each is linear in the text it reads: a text is
// split into words once, and the best span is found in one pass.
const (
	// ContentWindow is how many characters from the start of a document's
	// content a snippet is taken from. The stores read no more of a
	// content for highlights, so that a page of results costs at most this
	// much text a document, whatever the documents' sizes; a match past it
	// is not shown (the snippet then comes from the summary, or is the
	// start of the content).
	ContentWindow = 32768
	// SnippetLength is the most characters of text a snippet shows (its
	// marks, escapes and ellipses aside).
	SnippetLength = 200
	// snippetSpan is how many consecutive words the best match is looked
	// for in: the span with the most distinct search words, then the most
	// matches, the first of equals.
	snippetSpan = 24
	// snippetLead is how many words before the span's first match a
	// snippet starts, for context.
	snippetLead = 4
)

// Highlight says why a document matched a search: its title, and a snippet
// of its text around the best match, both HTML-escaped with every matched
// word wrapped in <mark>...</mark> and no other markup.
type Highlight struct {
	Title, Snippet string
}

// Query is a search's words, folded as the indexes fold them. Each matches
// a word that starts with it, as the stores' searches match.
type Query struct {
	terms [][]byte
	// firsts has bit c set when a term begins with the byte c: most words
	// of a text are told apart from every term by their first letter.
	firsts [4]uint64
}

// NewQuery returns the query of the free text search.
func NewQuery(search string) Query {
	var q Query
	for _, w := range Words(search) {
		if !q.has(w) {
			q.terms = append(q.terms, []byte(w))
			q.firsts[w[0]>>6] |= 1 << (w[0] & 63)
		}
	}
	return q
}

func (q Query) has(w string) bool {
	for _, t := range q.terms {
		if string(t) == w {
			return true
		}
	}
	return false
}

// Highlight returns the highlight of a document: its title marked whole,
// and a snippet of the first ContentWindow characters of its content, or
// of its summary when only the summary matches there (or there is no
// content). A document found by a tag alone has a snippet without marks.
func (q Query) Highlight(title, summary, content string) Highlight {
	content = Prefix(content, ContentWindow)
	snippet, ok := q.Snippet(content)
	if !ok {
		if s, ok := q.Snippet(summary); ok || content == "" {
			snippet = s
		}
	}
	return Highlight{Title: q.Mark(title), Snippet: snippet}
}

// Prefix returns the first n characters of s (all of it when shorter), as
// SQL's substr(s, 1, n) does.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s // no more characters than bytes
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// token is one word of a text: its bytes [start, end), and the first term
// of the query it matches (-1 for none).
type token struct {
	start, end, term int
}

// wordByte is the ASCII characters that make words: letters and digits.
var wordByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// words splits a text into words exactly as Words does, from a place where
// no word is under way (its start, or the start of one of its words),
// telling which term each matches. A word of ASCII letters and digits, most
// of any text, is compared with the terms where it stands; only a word with
// other characters is folded into a buffer first.
type words struct {
	q      *Query
	text   string
	at     int
	folded []byte
}

// next returns the next word, or false at the end of the text.
func (w *words) next() (token, bool) {
	text := w.text
	for {
		i := w.at
		// Separators up to the next word.
		for i < len(text) {
			if c := text[i]; c < utf8.RuneSelf {
				if wordByte[c] {
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if isTokenChar(r) {
				break
			}
			i += size
		}
		if i == len(text) {
			w.at = i
			return token{}, false
		}
		// The word, which a combining diacritic continues.
		start, ascii := i, true
		for i < len(text) {
			if c := text[i]; c < utf8.RuneSelf {
				if !wordByte[c] {
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if !isTokenChar(r) && !isDiacritic(r) {
				break
			}
			ascii = false
			i += size
		}
		w.at = i
		if ascii {
			return token{start: start, end: i, term: w.q.matchASCII(text[start:i])}, true
		}
		w.folded = w.folded[:0]
		for _, r := range text[start:i] {
			if f := foldRune(r); f != 0 {
				w.folded = utf8.AppendRune(w.folded, f)
			}
		}
		if len(w.folded) > 0 { // a word of dropped characters is none, as in Words
			return token{start: start, end: i, term: w.q.match(w.folded)}, true
		}
	}
}

// matchASCII is match for a word of ASCII letters and digits, unfolded:
// folding them is setting the lower-case bit.
func (q *Query) matchASCII(word string) int {
	if c := word[0] | 0x20; q.firsts[c>>6]&(1<<(c&63)) == 0 {
		return -1
	}
next:
	for i, t := range q.terms {
		if len(word) < len(t) {
			continue
		}
		for j, c := range t {
			if word[j]|0x20 != c {
				continue next
			}
		}
		return i
	}
	return -1
}

func (q *Query) match(word []byte) int {
	for i, t := range q.terms {
		if bytes.HasPrefix(word, t) {
			return i
		}
	}
	return -1
}

// marks returns the matched words of text that start at or after from
// (where no word is under way) and before to, and end, the end of the last
// word that lies wholly in [from, to) (from when none does).
func (q *Query) marks(text string, from, to int) (marks []token, end int) {
	end = from
	w := words{q: q, text: text, at: from}
	for {
		tok, ok := w.next()
		if !ok || tok.start >= to {
			return marks, end
		}
		if tok.end <= to {
			end = tok.end
		}
		if tok.term >= 0 {
			marks = append(marks, tok)
		}
	}
}

// Mark returns all of text, HTML-escaped, with its matched words marked.
func (q Query) Mark(text string) string {
	var b strings.Builder
	marks, _ := q.marks(text, 0, len(text))
	write(&b, text, marks, 0, len(text))
	return b.String()
}

// spanHit is a matched word within the span of words being looked at: its
// number among the words of the text, its term, and where a snippet whose
// span begins with it starts.
type spanHit struct {
	n, term, from int
}

// Snippet returns at most SnippetLength characters of text around its best
// match, HTML-escaped, with the matched words marked, runs of white space
// made one space, and an ellipsis where text was left out; ok reports
// whether anything matched (without a match, the snippet is the start of
// text).
//
// The text is read once, word by word, keeping only the matched words of
// the last snippetSpan words and the starts of the last snippetLead: the
// best span can only end on a matched word (a span ending elsewhere holds
// no more than the one ending on its last match), so it is looked for
// there. Only the snippet's own characters are read again, to mark them.
func (q Query) Snippet(text string) (snippet string, ok bool) {
	var (
		span       [snippetSpan]spanHit // a ring: the matches of the last snippetSpan words
		first, end int                  // span[first%snippetSpan:end%snippetSpan]
		leads      [snippetLead]int     // a ring: the starts of the last snippetLead words
		countsBuf  [8]int
		counts     = countsBuf[:0]
		distinct   int
		n          int // words read
		bestD      int // the best span's distinct terms and matches
		bestH      int
		from       int // where the best span's snippet starts
	)
	if len(q.terms) <= len(countsBuf) {
		counts = countsBuf[:len(q.terms)]
	} else {
		counts = make([]int, len(q.terms))
	}
	w := words{q: &q, text: text}
	for {
		tok, more := w.next()
		if !more {
			break
		}
		if tok.term >= 0 {
			for first < end && span[first%snippetSpan].n <= n-snippetSpan {
				t := span[first%snippetSpan].term
				if counts[t]--; counts[t] == 0 {
					distinct--
				}
				first++
			}
			h := spanHit{n: n, term: tok.term}
			if n > snippetLead {
				h.from = leads[n%snippetLead] // the start of word n-snippetLead
			}
			span[end%snippetSpan] = h
			end++
			if counts[tok.term] == 0 {
				distinct++
			}
			counts[tok.term]++
			if hits := end - first; distinct > bestD || (distinct == bestD && hits > bestH) {
				bestD, bestH, from = distinct, hits, span[first%snippetSpan].from
				ok = true
			}
		}
		leads[n%snippetLead] = tok.start
		n++
	}
	// to: SnippetLength characters on, back to the end of the last word
	// that fits, unless none does.
	to, chars := len(text), 0
	for i := range text[from:] {
		if chars == SnippetLength {
			to = from + i
			break
		}
		chars++
	}
	marks, cut := q.marks(text, from, to)
	if to < len(text) && cut > from {
		to = cut
	}
	inner := strings.TrimFunc(text[from:to], unicode.IsSpace)
	if inner == "" {
		return "", ok
	}
	lo := from + strings.Index(text[from:to], inner)
	hi := lo + len(inner)
	var b strings.Builder
	b.Grow(hi - lo + len(marks)*len("<mark></mark>") + 16)
	if lo > 0 {
		b.WriteString("… ")
	}
	write(&b, text, marks, lo, hi)
	if strings.IndexFunc(text[hi:], notSpace) >= 0 {
		b.WriteString(" …")
	}
	return b.String(), ok
}

func notSpace(r rune) bool { return !unicode.IsSpace(r) }

// write writes text[from:to] escaped, with the matched words in it marked
// (a word cut at to is marked up to to) and runs of white space made one
// space.
func write(b *strings.Builder, text string, toks []token, from, to int) {
	at := from
	for _, tok := range toks {
		if tok.end <= from || tok.term < 0 {
			continue
		}
		if tok.start >= to {
			break
		}
		start, end := max(tok.start, from), min(tok.end, to)
		writeText(b, text[at:start])
		b.WriteString("<mark>")
		escape(b, text[start:end])
		b.WriteString("</mark>")
		at = end
	}
	writeText(b, text[at:to])
}

// writeText writes s escaped, each run of white space as one space.
func writeText(b *strings.Builder, s string) {
	space := false
	plain := 0 // start of the run of s not yet written
	for i := 0; i < len(s); {
		c, size := rune(s[i]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRuneInString(s[i:])
		}
		if !isSpace(c) {
			if space {
				b.WriteByte(' ')
				plain, space = i, false
			}
		} else if !space {
			escape(b, s[plain:i])
			space = true
		}
		i += size
	}
	if space {
		b.WriteByte(' ')
	} else {
		escape(b, s[plain:])
	}
}

// isSpace is unicode.IsSpace, without a call for ASCII.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r'
	}
	return unicode.IsSpace(r)
}

// escape writes s as html.EscapeString escapes it, without a copy of it.
func escape(b *strings.Builder, s string) {
	plain := 0
	for i := 0; i < len(s); i++ {
		var e string
		switch s[i] {
		case '&':
			e = "&amp;"
		case '\'':
			e = "&#39;"
		case '<':
			e = "&lt;"
		case '>':
			e = "&gt;"
		case '"':
			e = "&#34;"
		default:
			continue
		}
		b.WriteString(s[plain:i])
		b.WriteString(e)
		plain = i + 1
	}
	b.WriteString(s[plain:])
}
