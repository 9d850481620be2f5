package textsearch

import (
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// page is 20 search results with bodies of size bytes of markdown, in
// which the two words of the benchmarks' search are common.
func page(size int) [][3]string {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := strings.Fields("the release deploy incident rollback cluster node page owner review draft status " +
		"database backup restore schema index query latency error budget alert runbook oncall service team")
	docs := make([][3]string, 20)
	for i := range docs {
		var c strings.Builder
		for c.Len() < size {
			if r.IntN(12) == 0 {
				c.WriteString("\n\n## ")
			}
			c.WriteString(vocab[r.IntN(len(vocab))])
			c.WriteByte(' ')
		}
		// As the stores read it: at most size characters.
		docs[i] = [3]string{fmt.Sprintf("Runbook %d: database restore", i), "How to restore a backup", Prefix(c.String(), size)}
	}
	return docs
}

// BenchmarkHighlightPage is the highlights of one page of search results
// as docs.List computes them: 20 documents of about 1.5 KB (the bench
// harness's size) and of 32 KiB (ContentWindow, the most a highlight
// reads), two search words found in the body; "before" is the rule as it
// was computed before (oldHighlight), "after" as it is.
//
//	go test ./textsearch -run '^$' -bench HighlightPage -count 5
func BenchmarkHighlightPage(b *testing.B) {
	for _, size := range []int{1500, ContentWindow} {
		docs := page(size)
		for _, impl := range []struct {
			name string
			f    func(q Query, title, summary, content string) Highlight
		}{{"before", oldHighlight}, {"after", Query.Highlight}} {
			b.Run(fmt.Sprintf("body=%d/%s", size, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(docs) * size))
				for b.Loop() {
					q := NewQuery("restore latency")
					for _, d := range docs {
						impl.f(q, d[0], d[1], d[2])
					}
				}
			})
		}
	}
}

// TestHighlightAsBefore checks, on random texts and searches, that the
// highlight is exactly the one the earlier computation (oldHighlight, which
// split the whole text into words first) gave.
func TestHighlightAsBefore(t *testing.T) {
	pieces := []string{"<", "&", " ", " ", " ", "\n\n", "\t", ".", "-", "deploy", "Deploy", "DEPLOYED", "dep", "de",
		"release", "rel", "é", "e\u0301", "\u0301", "Café", "日本", "🙂", "\u00a0", "—", "x", "ſ", "İ", "ı", "\xff",
		"a", "b", "word", "words", "2026", "\u0300x", "Ωmega", "ωmega", "ﬁle", "𐐀", strings.Repeat("long", 30),
		"'", `"`, ">", "\v\f\r", "\u0085", "\u2003", "&amp;"}
	searches := []string{"deploy release", "dep", "cafe", "CAFÉ x", "日本", "a b word", "ωmega 2026", "file",
		"s", "i", "𐐨", "long", "deployed release words 2026 a b x", "nothing"}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		var text strings.Builder
		n := r.IntN(40)
		if i%10 == 0 {
			n = r.IntN(600)
		}
		for range n {
			text.WriteString(pieces[r.IntN(len(pieces))])
		}
		var summary string
		if r.IntN(2) == 0 {
			summary = pieces[r.IntN(len(pieces))] + " " + pieces[r.IntN(len(pieces))]
		}
		q := NewQuery(searches[r.IntN(len(searches))])
		title := pieces[r.IntN(len(pieces))] + pieces[r.IntN(len(pieces))]
		if got, want := q.Highlight(title, summary, text.String()), oldHighlight(q, title, summary, text.String()); got != want {
			t.Fatalf("highlight of %q, %q, %q for %q:\n got  %+v\n want %+v", title, summary, text.String(), q.terms, got, want)
		}
	}
}

// oldHighlight, oldSnippet, oldTokens, oldWrite and oldWriteText are the highlight as it was
// computed before: every word of the text kept, then the best span looked
// for among them all. They are kept for TestHighlightAsBefore and the
// benchmark's comparison.
func oldHighlight(q Query, title, summary, content string) Highlight {
	content = Prefix(content, ContentWindow)
	snippet, ok := oldSnippet(q, content)
	if !ok {
		if s, ok := oldSnippet(q, summary); ok || content == "" {
			snippet = s
		}
	}
	var b strings.Builder
	oldWrite(&b, title, oldTokens(q, title), 0, len(title))
	return Highlight{Title: b.String(), Snippet: snippet}
}

func oldTokens(q Query, text string) []token {
	var (
		toks   = make([]token, 0, len(text)/6+1)
		word   []byte
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

func oldSnippet(q Query, text string) (snippet string, ok bool) {
	toks := oldTokens(q, text)
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
	oldWrite(&b, text, toks, lo, hi)
	if hi < len(text) && strings.TrimFunc(text[hi:], unicode.IsSpace) != "" {
		b.WriteString(" …")
	}
	return b.String(), best >= 0
}

func oldWrite(b *strings.Builder, text string, toks []token, from, to int) {
	at := from
	for _, tok := range toks {
		if tok.end <= from || tok.term < 0 {
			continue
		}
		if tok.start >= to {
			break
		}
		start, end := max(tok.start, from), min(tok.end, to)
		oldWriteText(b, text[at:start])
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(text[start:end]))
		b.WriteString("</mark>")
		at = end
	}
	oldWriteText(b, text[at:to])
}

func oldWriteText(b *strings.Builder, s string) {
	space := false
	plain := 0
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
