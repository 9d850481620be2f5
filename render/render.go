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
	"context"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
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
var markdown = newMarkdown(&markdownLimits)

// newMarkdown is goldmark within lim, rendering with safeHTML.
func newMarkdown(lim *limits) goldmark.Markdown {
	return newMarkdownRendering(lim, renderer.NewRenderer(renderer.WithNodeRenderers(
		util.Prioritized(safeHTML{}, 1000),
	)))
}

// newMarkdownRendering is goldmark within lim, rendering with r (the tests
// compare safeHTML with goldmark's own renderer and the sanitiser).
func newMarkdownRendering(lim *limits, r renderer.Renderer) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithParser(parser.NewParser(
			parser.WithBlockParsers(
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
			),
			parser.WithInlineParsers(
				util.Prioritized(extension.NewTaskCheckBoxParser(), 0),
				util.Prioritized(codeSpanLimit{parser.NewCodeSpanParser(), lim}, 100),
				util.Prioritized(linkLimit{parser.NewLinkParser(), lim}, 200),
				util.Prioritized(parser.NewAutoLinkParser(), 300),
				util.Prioritized(parser.NewRawHTMLParser(), 400),
				util.Prioritized(delimiterLimit{parser.NewEmphasisParser(), lim}, 500),
				util.Prioritized(delimiterLimit{extension.NewStrikethroughParser(), lim}, 500),
				util.Prioritized(extension.NewLinkifyParser(), 999),
			),
			parser.WithParagraphTransformers(
				util.Prioritized(refLimit{parser.LinkReferenceParagraphTransformer, lim}, 100),
				util.Prioritized(tableLimit{extension.NewTableParagraphTransformer(), lim}, 200),
			),
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
		src := []byte(content)
		run := &highlightRun{bounds: hl, left: hl.totalBytes}
		pc := parser.NewContext()
		pc.Set(highlightRunKey, run)
		doc := markdown.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		// Prose renders to about twice its length.
		buf := htmlBuffer{b: make([]byte, 0, 2*len(src)+512)}
		if err := markdown.Renderer().Render(&buf, src, doc); err != nil {
			// goldmark fails only on a failing writer; htmlBuffer does
			// not. Show the source rather than nothing.
			return plainHTML(content), true, nil
		}
		return template.HTML(newlines(buf.b)), !run.cut, nil
	case "html":
		return template.HTML(shiftHTMLHeadings(sanitizer.Sanitize(content))), true, nil
	default:
		return plainHTML(content), true, nil
	}
}

// plainHTML shows text as it is: escaped, with its line breaks kept.
func plainHTML(content string) template.HTML {
	var b strings.Builder
	b.WriteString(`<pre class="plain">`)
	template.HTMLEscape(&b, []byte(content))
	b.WriteString(`</pre>`)
	return template.HTML(b.String())
}
