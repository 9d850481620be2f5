package web

import (
	"bytes"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders CommonMark with GitHub's tables, strikethrough, task
// lists and autolinks. Raw HTML in Markdown is left out by goldmark (it is
// not in unsafe mode), and what it renders is sanitised like HTML content
// all the same.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// sanitizer keeps the formatting a document needs (headings, lists, tables,
// links, images, code) and drops everything that runs or loads: script and
// style elements, event-handler attributes, javascript: and other unsafe
// URLs, frames, forms and style attributes.
var sanitizer = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	// The disabled check boxes of Markdown task lists.
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.RequireNoReferrerOnLinks(true)
	return p
}()

// renderContent turns a document's content into the HTML shown to readers:
// Markdown rendered then sanitised, HTML sanitised, plain text escaped.
func renderContent(contentType, content string) template.HTML {
	switch contentType {
	case "markdown":
		var buf bytes.Buffer
		if err := markdown.Convert([]byte(content), &buf); err != nil {
			// goldmark fails only on a failing writer; a bytes.Buffer
			// does not. Show the source rather than nothing.
			return plainHTML(content)
		}
		return template.HTML(sanitizer.SanitizeBytes(buf.Bytes()))
	case "html":
		return template.HTML(sanitizer.Sanitize(content))
	default:
		return plainHTML(content)
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
