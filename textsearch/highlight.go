package textsearch

import (
	"bytes"
	"html"
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
}

// NewQuery returns the query of the free text search.
func NewQuery(search string) Query {
	var q Query
	for _, w := range Words(search) {
		if !q.has(w) {
			q.terms = append(q.terms, []byte(w))
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

// tokens splits text into words exactly as Words does, keeping where each
// word is and which term it matches.
func (q Query) tokens(text string) []token {
	var (
		// Words of plain text average some six bytes with their
		// separator: one allocation, in proportion to the text.
		toks   = make([]token, 0, len(text)/6+1)
		word   []byte // the folded word
		start  = -1
		inWord bool
		buf    [utf8.UTFMax]byte
	)
	end := func(at int) {
		if len(word) > 0 {
			toks = append(toks, token{start: start, end: at, term: q.match(word)})
		}
		word, inWord = word[:0], false
	}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			// ASCII, most of any text: letters and digits fold to
			// lower case, everything else separates.
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				end(i)
				i++
				continue
			}
			if !inWord {
				start, inWord = i, true
			}
			word = append(word, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if isTokenChar(r) || (inWord && isDiacritic(r)) {
			if !inWord {
				start, inWord = i, true
			}
			if f := foldRune(r); f != 0 {
				word = append(word, buf[:utf8.EncodeRune(buf[:], f)]...)
			}
		} else {
			end(i)
		}
		i += size
	}
	end(len(text))
	return toks
}

func (q Query) match(word []byte) int {
	for i, t := range q.terms {
		if bytes.HasPrefix(word, t) {
			return i
		}
	}
	return -1
}

// Mark returns all of text, HTML-escaped, with its matched words marked.
func (q Query) Mark(text string) string {
	var b strings.Builder
	write(&b, text, q.tokens(text), 0, len(text))
	return b.String()
}

// Snippet returns at most SnippetLength characters of text around its best
// match, HTML-escaped, with the matched words marked, runs of white space
// made one space, and an ellipsis where text was left out; ok reports
// whether anything matched (without a match, the snippet is the start of
// text).
func (q Query) Snippet(text string) (snippet string, ok bool) {
	toks := q.tokens(text)
	best, bestDistinct, bestHits := -1, 0, 0
	counts := make([]int, len(q.terms))
	distinct, hits := 0, 0
	for e, tok := range toks {
		if tok.term >= 0 {
			if counts[tok.term] == 0 {
				distinct++
			}
			counts[tok.term]++
			hits++
		}
		if s := e - snippetSpan; s >= 0 && toks[s].term >= 0 {
			t := toks[s].term
			counts[t]--
			if counts[t] == 0 {
				distinct--
			}
			hits--
		}
		if distinct > bestDistinct || (distinct == bestDistinct && hits > bestHits) {
			best, bestDistinct, bestHits = e, distinct, hits
		}
	}
	from := 0
	if best >= 0 {
		first := max(best-snippetSpan+1, 0)
		for toks[first].term < 0 {
			first++
		}
		if lead := first - snippetLead; lead > 0 {
			from = toks[lead].start
		}
	}
	// to: SnippetLength characters on, back to the end of the last word
	// that fits, unless none does.
	to, n := len(text), 0
	for i := range text[from:] {
		if n == SnippetLength {
			to = from + i
			break
		}
		n++
	}
	if to < len(text) {
		cut := -1
		for _, tok := range toks {
			if tok.start >= to {
				break
			}
			if tok.start >= from && tok.end <= to {
				cut = tok.end
			}
		}
		if cut > from {
			to = cut
		}
	}
	var b strings.Builder
	inner := strings.TrimFunc(text[from:to], unicode.IsSpace)
	if inner == "" {
		return "", best >= 0
	}
	lo := from + strings.Index(text[from:to], inner)
	hi := lo + len(inner)
	if lo > 0 {
		b.WriteString("… ")
	}
	write(&b, text, toks, lo, hi)
	if hi < len(text) && strings.TrimFunc(text[hi:], unicode.IsSpace) != "" {
		b.WriteString(" …")
	}
	return b.String(), best >= 0
}

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
		b.WriteString(html.EscapeString(text[start:end]))
		b.WriteString("</mark>")
		at = end
	}
	writeText(b, text[at:to])
}

// writeText writes s escaped, each run of white space as one space.
func writeText(b *strings.Builder, s string) {
	space := false
	plain := 0 // start of the run of s not yet written
	for i, r := range s {
		if !unicode.IsSpace(r) {
			if space {
				b.WriteByte(' ')
				plain, space = i, false
			}
			continue
		}
		if !space {
			b.WriteString(html.EscapeString(s[plain:i]))
			space = true
		}
	}
	if space {
		b.WriteByte(' ')
	} else {
		b.WriteString(html.EscapeString(s[plain:]))
	}
}
