// Package anchor reads a document's text as its readers see it and finds
// the passages that comments are about in it (product.md section 18).
//
// # The reading text
//
// A document's reading text is the text of its rendered, sanitised content
// (package render, the renderer of the document page), read in the order of
// the HTML:
//
//   - the text of every text node, entities decoded, as the DOM has it
//     (Node.textContent, not innerText, which depends on the style sheet);
//     U+0000 is dropped, as a browser drops it;
//   - one space at the start and at the end of every block element: p,
//     h1 to h6, ul, ol, li, dl, dt, dd, pre, blockquote, table, caption,
//     thead, tbody, tfoot, tr, th, td, div, section, article, aside, nav,
//     header, footer, main, address, figure, figcaption, details, summary,
//     dialog, fieldset, legend, hgroup, menu, dir, and at br and hr (the
//     list is blockElements). Every other element (a, em, strong, code,
//     span, ...) adds nothing: "a<em>b</em>c" reads "abc";
//   - nothing of what the renderer adds to find one's way: the table of
//     contents (the element details of class "toc", with all it holds) and
//     the § links of headings (the elements a of class "anchor");
//   - nothing of elements without text (img, input, ...): no alt text;
//   - then every run of white space collapsed to one space and the result
//     trimmed. White space is what unicode.IsSpace says: U+0009 to U+000D,
//     U+0020, U+0085, U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029,
//     U+202F, U+205F, U+3000. (JavaScript's \s differs: it has U+FEFF and
//     not U+0085.)
//
// This is the contract with the page's script, which computes the same
// text from the rendered DOM to turn a selection into an anchor and an
// anchor into a highlight. The code of highlighted blocks reads as written
// (highlighting adds spans only), so the text does not depend on whether
// highlighting ran out of time. Known difference: HTML content that puts
// text inside a table but outside its cells, which a browser moves before
// the table, reads here where it was written.
//
// # Anchors
//
// An anchor is a quote with up to 64 characters of the text before it
// (prefix) and after it (suffix), each passed through Normalize. Normalize
// collapses white space but does not trim: a prefix keeps the space that
// separates it from the quote, so that prefix+quote+suffix is a passage of
// the text as it was. Index.Find finds a quote again in a text that may
// have changed:
//
//  1. where prefix+quote+suffix occurs, when it occurs exactly once;
//  2. else where the quote occurs, when it occurs exactly once;
//  3. else nowhere (-1): the quote is gone, or it is ambiguous.
//
// In a script: s occurs exactly once in t when i = t.indexOf(s) is not -1
// and t.indexOf(s, i+1) is -1 (occurrences may overlap).
package anchor

import (
	"bytes"
	"context"
	"index/suffixarray"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"quire/render"
)

// blockElements are the elements with a space at their start and end in
// the reading text.
var blockElements = func() map[atom.Atom]bool {
	m := map[atom.Atom]bool{}
	for _, a := range []atom.Atom{
		atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Ul, atom.Ol, atom.Li, atom.Dl, atom.Dt, atom.Dd, atom.Pre, atom.Blockquote,
		atom.Table, atom.Caption, atom.Thead, atom.Tbody, atom.Tfoot, atom.Tr, atom.Th, atom.Td,
		atom.Div, atom.Section, atom.Article, atom.Aside, atom.Nav, atom.Header, atom.Footer,
		atom.Main, atom.Address, atom.Figure, atom.Figcaption, atom.Details, atom.Summary,
		atom.Dialog, atom.Fieldset, atom.Legend, atom.Hgroup, atom.Menu, atom.Dir,
		atom.Br, atom.Hr,
	} {
		m[a] = true
	}
	return m
}()

// Text returns the reading text of a document's content (see the package
// documentation). It costs one render without highlighting and one pass of
// the HTML tokenizer, both linear in the content.
func Text(contentType, content string) string {
	out, err := render.WithoutHighlighting(context.Background(), contentType, content)
	if err != nil {
		// Only a cancelled context fails a render, and this one is never
		// cancelled.
		return ""
	}
	return htmlText(string(out))
}

// htmlText is the reading text of rendered HTML.
func htmlText(s string) string {
	var w spaceWriter
	w.b.Grow(len(s) / 2)
	z := html.NewTokenizer(strings.NewReader(s))
	// skip is the element whose content is left out (the table of contents,
	// a § link) and depth how many elements of its name are open in it.
	var skip atom.Atom
	depth := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return strings.TrimSuffix(w.b.String(), " ")
		case html.TextToken:
			if skip == 0 {
				t := z.Text()
				if bytes.IndexByte(t, 0) >= 0 {
					t = bytes.ReplaceAll(t, []byte{0}, nil)
				}
				w.write(t)
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if skip == atom.A && a == atom.A && tt == html.StartTagToken {
				// Links do not nest: a browser ends the one open at the
				// start of the next.
				skip = 0
			}
			if skip != 0 {
				if a == skip && tt == html.StartTagToken {
					depth++
				} else if a == skip && tt == html.EndTagToken {
					if depth--; depth == 0 {
						skip = 0
					}
				}
				continue
			}
			if tt == html.StartTagToken && hasAttr && (a == atom.Details || a == atom.A) && navigation(z, a) {
				skip, depth = a, 1
				if blockElements[a] {
					w.space()
				}
				continue
			}
			if blockElements[a] {
				w.space()
			}
		}
	}
}

// navigation reports whether the start tag z is at, an a or a details
// element, is one that the renderer adds to find one's way.
func navigation(z *html.Tokenizer, a atom.Atom) bool {
	want := "anchor"
	if a == atom.Details {
		want = "toc"
	}
	for more := true; more; {
		var key, val []byte
		key, val, more = z.TagAttr()
		if string(key) == "class" {
			for _, c := range strings.Fields(string(val)) {
				if c == want {
					return true
				}
			}
		}
	}
	return false
}

// Normalize collapses every run of white space (unicode.IsSpace) in s to
// one space, as Text does. It does not trim: a prefix keeps the space that
// ends it, a suffix the one that starts it. A quote holds no text when
// strings.TrimSpace(Normalize(quote)) is empty.
func Normalize(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) && (r != ' ' || (i+1 < len(s) && isSpaceAt(s, i+1))) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s // nothing to collapse
	}
	w := spaceWriter{started: true, inSpace: i > 0 && s[i-1] == ' '}
	w.b.Grow(len(s))
	w.b.WriteString(s[:i])
	w.write([]byte(s[i:]))
	return w.b.String()
}

func isSpaceAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

// spaceWriter collects text with every run of white space collapsed to one
// space, and none at the start unless started. It copies other bytes as they are, invalid
// UTF-8 included, so that a quote and the text it was taken from agree
// byte for byte.
type spaceWriter struct {
	b       strings.Builder
	inSpace bool // the last byte written is a space
	started bool // something was written: a space is kept from here on
}

func (w *spaceWriter) space() {
	if w.started && !w.inSpace {
		w.b.WriteByte(' ')
		w.inSpace = true
	}
}

func (w *spaceWriter) write(p []byte) {
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ' || ('\t' <= c && c <= '\r'):
				w.space()
			default:
				w.b.WriteByte(c)
				w.inSpace, w.started = false, true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if unicode.IsSpace(r) {
			w.space()
		} else {
			w.b.Write(p[i : i+size])
			w.inSpace, w.started = false, true
		}
		i += size
	}
}

// Index finds quotes in one text. Build it once per text, then call Find
// for each anchor: the first few lookups scan the text; later ones use a
// suffix array built once (linear in the text), each in time
// O(m log n) for a needle of m bytes in a text of n, asking for at most two
// occurrences. Re-anchoring every thread of a document costs work linear in
// the text plus the total length of the anchors, never the text times the
// number of threads.
type Index struct {
	text string
	sa   *suffixarray.Index

	// The work done, for the tests: bytes scanned by the first lookups,
	// bytes put in the suffix array, and the lookups in it with the total
	// length of their needles.
	scanned, indexed, lookups, needles int
}

// scanLookups is how many lookups scan the text before the suffix array is
// built: a scan is far cheaper than building the array, so a text asked
// for one anchor (a new comment) is never indexed.
const scanLookups = 4

// NewIndex returns an index of text, a reading text.
func NewIndex(text string) *Index {
	return &Index{text: text}
}

// Find returns the byte offset in the text of the quote with its prefix
// immediately before and its suffix immediately after, when that passage
// occurs exactly once; else of the quote, when it occurs exactly once;
// else -1. An empty quote is never found.
func (x *Index) Find(quote, prefix, suffix string) int {
	if quote == "" {
		return -1
	}
	if prefix != "" || suffix != "" {
		if at, ok := x.once(prefix + quote + suffix); ok {
			return at + len(prefix)
		}
	}
	if at, ok := x.once(quote); ok {
		return at
	}
	return -1
}

// once returns where s occurs in the text, when it occurs exactly once.
func (x *Index) once(s string) (int, bool) {
	if len(s) > len(x.text) {
		return -1, false
	}
	if x.sa == nil && x.lookups < scanLookups {
		x.lookups++
		i := strings.Index(x.text, s)
		if i < 0 {
			x.scanned += len(x.text)
			return -1, false
		}
		j := strings.Index(x.text[i+1:], s)
		if j < 0 {
			x.scanned += len(x.text)
		} else {
			x.scanned += i + 1 + j + len(s)
		}
		return i, j < 0
	}
	if x.sa == nil {
		x.sa = suffixarray.New([]byte(x.text))
		x.indexed += len(x.text)
	}
	x.lookups++
	x.needles += len(s)
	hits := x.sa.Lookup([]byte(s), 2)
	if len(hits) != 1 {
		return -1, false
	}
	return hits[0], true
}
