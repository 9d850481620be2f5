// Package render turns a document's content into the HTML shown to
// readers: Markdown (goldmark, kept to linear work by limits.go, with the
// reading extensions of reading.go: headings, a table of contents,
// highlighted code), HTML sanitised, plain text escaped. Cache keeps
// renders for the pages.
//
// It is used by the pages and by what needs a document's text as readers
// see it (package anchor); it imports none of quire's service packages.
package render

import (
	"bytes"
	"context"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders CommonMark with GitHub's tables, strikethrough, task
// lists and autolinks. Raw HTML in Markdown is left out, and what it
// renders is what the sanitiser keeps of goldmark's own HTML (safe.go).
//
// It is goldmark with extension.GFM, assembled by hand so that the parsers
// whose work can grow faster than their input are wrapped in the limits of
// limits.go. The priorities are goldmark's own.
var markdown = newMarkdown(&markdownLimits, true)

// markdownWithoutLinkify is markdown without GFM's extended autolinks
// (www.example.com, https://example.com, ada@example.com without "<>"),
// for text that parses the same without them (markdownFor). Their parser
// is called at every blank and line start, and goldmark cuts the text
// there to call it; without it, prose parses some 10 % faster.
var markdownWithoutLinkify = newMarkdown(&markdownLimits, false)

// markdownFor returns the markdown to parse src with: without linkify
// when linkify finds nothing in src and changes nothing else. It finds
// nothing without "http", "www.", "ftp:" or "@" (it looks for those, in
// lower case). What else it changes is where goldmark cuts a line's text:
// at every blank, and goldmark trims the blanks at the end of the last cut
// only, so a line that ends with two blanks or more keeps all but the last
// with linkify, and none without it (FuzzSafeHTML found it). Such lines,
// and "\r" (goldmark's line ends are then more than "\n"), keep linkify.
func markdownFor(src []byte) goldmark.Markdown {
	if bytes.IndexByte(src, '@') >= 0 || bytes.Contains(src, []byte("www.")) ||
		bytes.Contains(src, []byte("http")) || bytes.Contains(src, []byte("ftp:")) ||
		bytes.IndexByte(src, '\r') >= 0 || endsInBlanks(src) {
		return markdown
	}
	return markdownWithoutLinkify
}

// endsInBlanks reports whether a line of src ends with two blanks (goldmark's
// util.IsSpace but line ends: space, tab, vertical tab, form feed).
func endsInBlanks(src []byte) bool {
	blank := func(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }
	for start := 0; start <= len(src); {
		end := len(src)
		if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
			end = start + i
		}
		if end-start >= 2 && blank(src[end-1]) && blank(src[end-2]) {
			return true
		}
		start = end + 1
	}
	return false
}

// newMarkdown is goldmark within lim, rendering with safeHTML, with or
// without linkify.
func newMarkdown(lim *limits, linkify bool) goldmark.Markdown {
	return newMarkdownRendering(lim, renderer.NewRenderer(renderer.WithNodeRenderers(
		util.Prioritized(safeHTML{}, 1000),
	)), linkify)
}

// newMarkdownRendering is goldmark within lim, rendering with r (the tests
// compare safeHTML with goldmark's own renderer and the sanitiser).
func newMarkdownRendering(lim *limits, r renderer.Renderer, linkify bool) goldmark.Markdown {
	inline := []util.PrioritizedValue{
		util.Prioritized(extension.NewTaskCheckBoxParser(), 0),
		util.Prioritized(codeSpanLimit{parser.NewCodeSpanParser(), lim}, 100),
		util.Prioritized(linkLimit{parser.NewLinkParser(), lim}, 200),
		util.Prioritized(parser.NewAutoLinkParser(), 300),
		util.Prioritized(parser.NewRawHTMLParser(), 400),
		util.Prioritized(delimiterLimit{parser.NewEmphasisParser(), lim}, 500),
		util.Prioritized(delimiterLimit{extension.NewStrikethroughParser(), lim}, 500),
	}
	if linkify {
		inline = append(inline, util.Prioritized(extension.NewLinkifyParser(), 999))
	}
	return goldmark.New(
		goldmark.WithParser(parser.NewParser(
			parser.WithBlockParsers(blockParsers(lim)...),
			parser.WithInlineParsers(inline...),
			parser.WithParagraphTransformers(paragraphTransformers(lim)...),
			parser.WithASTTransformers(
				util.Prioritized(escapedPipes{lim}, 0),
			),
		)),
		goldmark.WithRenderer(r),
		// Headings, a table of contents and highlighted code
		// (reading.go); mentions shown as names (mention.go).
		goldmark.WithExtensions(reading{}, mentions{}),
	)
}

// blockParsers are newMarkdown's parsers of blocks.
func blockParsers(lim *limits) []util.PrioritizedValue {
	return []util.PrioritizedValue{
		util.Prioritized(parser.NewSetextHeadingParser(), 100),
		util.Prioritized(parser.NewThematicBreakParser(), 200),
		util.Prioritized(nestingLimit{parser.NewListParser(), lim}, 300),
		util.Prioritized(parser.NewListItemParser(), 400),
		util.Prioritized(parser.NewCodeBlockParser(), 500),
		util.Prioritized(parser.NewATXHeadingParser(), 600),
		util.Prioritized(parser.NewFencedCodeBlockParser(), 700),
		util.Prioritized(nestingLimit{parser.NewBlockquoteParser(), lim}, 800),
		util.Prioritized(parser.NewHTMLBlockParser(), 900),
		util.Prioritized(parser.NewParagraphParser(), 1000),
	}
}

// paragraphTransformers are newMarkdown's: link reference definitions and
// tables.
func paragraphTransformers(lim *limits) []util.PrioritizedValue {
	return []util.PrioritizedValue{
		util.Prioritized(refLimit{parser.LinkReferenceParagraphTransformer, lim}, 100),
		util.Prioritized(tableLimit{extension.NewTableParagraphTransformer(), lim}, 200),
	}
}

// sanitizer keeps the formatting a document needs (headings, lists, tables,
// links, images, code) and drops everything that runs or loads: script and
// style elements, event-handler attributes, javascript: and other unsafe
// URLs, frames, forms and style attributes.
var sanitizer = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	allowReading(p)  // what reading.go writes: classes of code, § links and contents
	allowMentions(p) // mention.go: a mention's span
	// The disabled check boxes of Markdown task lists.
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.RequireNoReferrerOnLinks(true)
	return p
}()

// Content turns a document's content into the HTML shown to readers:
// Markdown rendered as the sanitiser keeps it (safe.go), HTML sanitised,
// plain text escaped.
//
// Each stage takes time linear in its input (limits.go), so a
// render is bounded; ctx is checked between the stages, so that a request
// whose client went away stops at the next one. It returns ctx's error then.
func Content(ctx context.Context, contentType, content string) (template.HTML, error) {
	html, _, err := renderBounded(ctx, contentType, content, highlightLimits)
	return html, err
}

// WithoutHighlighting is Content with the code of Markdown left plain: the
// same elements and the same text, without the classes of highlighting,
// and without its cost. It is for reading the text of a render (package
// anchor), not for showing it.
func WithoutHighlighting(ctx context.Context, contentType, content string) (template.HTML, error) {
	html, _, err := renderBounded(ctx, contentType, content, highlightBounds{})
	return html, err
}

// renderBounded is Content with the bounds of code highlighting
// given. complete is false when highlighting ran out of time: the same
// content renders otherwise on a less busy server, so the render cache
// keeps such a render only for a while.
func renderBounded(ctx context.Context, contentType, content string, hl highlightBounds) (_ template.HTML, complete bool, _ error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	switch contentType {
	case "markdown":
		html, complete, _, err := renderMarkdown(ctx, []byte(content), hl, pieceBytes)
		if err != nil {
			return "", false, err
		}
		return template.HTML(html), complete, nil
	case "html":
		return template.HTML(shiftHTMLHeadings(sanitizer.Sanitize(content))), true, nil
	default:
		return plainHTML(content), true, nil
	}
}

// pieceBytes is the least length of the pieces a long Markdown document is
// parsed and rendered in, one after the other.
const pieceBytes = 64 << 10

// renderMarkdown renders Markdown with safeHTML. A document longer than
// twice piece is parsed and rendered in pieces of at least piece bytes
// where it can be cut (nextCut), one after the other, so that the syntax
// tree of one piece is garbage before the next is parsed: a tree takes
// about 50 times the bytes of its source, and the collector scans it on
// every cycle while it lives (at 2 MiB, most of a render's time went to
// allocation and collection). The pieces share what is the whole
// document's: heading ids and the table of contents (reading.go), the
// bounds of highlighting, the sanitiser's state (safe.go), whether it has
// mentions (mention.go); the HTML is the same to the byte
// (TestPiecesRenderAsTheWhole, FuzzSafeHTML). It returns how many pieces
// it rendered.
func renderMarkdown(ctx context.Context, src []byte, hl highlightBounds, piece int) (_ []byte, complete bool, pieces int, _ error) {
	run := &highlightRun{bounds: hl, left: hl.totalBytes}
	reading := newReadingState()
	state := &renderState{}
	mentions := bytes.Contains(src, []byte("mention:"))
	// Prose renders to about twice its length.
	buf := htmlBuffer{b: make([]byte, 0, 2*len(src)+512)}
	cuttable := len(src) >= 2*piece && cuttable(src)
	for from := 0; from < len(src) || pieces == 0; {
		to := len(src)
		if cuttable {
			if cut := nextCut(src, from+piece); cut > 0 && len(src)-cut >= piece {
				to = cut
			}
		}
		part := src[from:to:to]
		pc := parser.NewContext()
		pc.Set(highlightRunKey, run)
		pc.Set(readingStateKey, reading)
		pc.Set(mentionsKey, mentions)
		md := markdownFor(part)
		doc := md.Parser().Parse(text.NewReader(part), parser.WithContext(pc))
		if to < len(src) && !endsAtCut(doc, len(part)) {
			// Cut inside a block that a blank line does not end: the
			// document is rendered again, whole (no byte is parsed more
			// than twice).
			cuttable, from, pieces, buf.b = false, 0, 0, buf.b[:0]
			run = &highlightRun{bounds: hl, left: hl.totalBytes}
			reading, state = newReadingState(), &renderState{}
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, false, pieces, err
		}
		doc.SetAttribute(renderStateName, state)
		if from == 0 && to == len(src) && reading.headings >= tocMinHeadings {
			_, _ = renderTOC(&buf, nil, &reading.toc, true) // the whole document in one piece
		}
		if err := md.Renderer().Render(&buf, part, doc); err != nil {
			// goldmark fails only on a failing writer; htmlBuffer does
			// not. Show the source rather than nothing.
			return []byte(plainHTML(string(src))), true, pieces, nil
		}
		pieces++
		from = to
	}
	if pieces > 1 && reading.headings >= tocMinHeadings { // known once all are parsed
		toc := htmlBuffer{b: make([]byte, 0, len(buf.b)+64*len(reading.toc.entries)+128)}
		_, _ = renderTOC(&toc, nil, &reading.toc, true)
		buf.b = append(toc.b, buf.b...)
	}
	return newlines(buf.b), !run.cut, pieces, nil
}

// cuttable reports whether a document may be parsed in pieces: not when it
// has link reference definitions ("[a]: /url" holds for the whole
// document) or a "\r" (goldmark's line ends are then more than "\n").
func cuttable(src []byte) bool {
	return !bytes.Contains(src, []byte("]:")) && bytes.IndexByte(src, '\r') < 0
}

// nextCut returns the first place at or after at where a piece of a
// document may end, or -1: the start of a line that starts with an ASCII
// letter after a blank line. Such a line can only start a paragraph, and
// the blank line has ended every block before it but those that end with
// a closing line: fenced code and some raw HTML. Whether that is so is
// known when the piece is parsed (endsAtCut).
func nextCut(src []byte, at int) int {
	for at < len(src) {
		i := bytes.Index(src[at:], []byte("\n\n"))
		if i < 0 {
			return -1
		}
		at += i + 2
		if at < len(src) && ('a' <= src[at] && src[at] <= 'z' || 'A' <= src[at] && src[at] <= 'Z') {
			return at
		}
	}
	return -1
}

// endsAtCut reports whether the last block of a piece of size bytes that
// ends at a cut (nextCut) has ended before the cut. Fenced code and raw
// HTML of the kinds that end with a closing line take every line up to
// one, blank lines included: without it, such a block goes on to the end
// of the piece, blank line and all, and in the whole document it would go
// on past the cut.
func endsAtCut(doc ast.Node, size int) bool {
	last := doc.LastChild()
	if last == nil || last.Kind() != ast.KindFencedCodeBlock && last.Kind() != ast.KindHTMLBlock {
		return true
	}
	lines := last.Lines()
	return lines.Len() == 0 || lines.At(lines.Len()-1).Stop < size
}

// mentionsKey holds, in the parser's context, whether the whole document
// has "mention:" in it (mention.go).
var mentionsKey = parser.NewContextKey()

// plainHTML shows text as it is: escaped, with its line breaks kept.
func plainHTML(content string) template.HTML {
	var b strings.Builder
	b.WriteString(`<pre class="plain">`)
	template.HTMLEscape(&b, []byte(content))
	b.WriteString(`</pre>`)
	return template.HTML(b.String())
}
