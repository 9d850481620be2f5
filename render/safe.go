package render

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// safeHTML renders Markdown's syntax tree as the HTML that the sanitiser
// would make of goldmark's own rendering, without rendering it twice:
// goldmark with raw HTML off writes a known set of elements whose text it
// escapes, so the only markup that depends on what a writer wrote is in the
// attributes of links and images (URLs, titles, alt texts). safeHTML
// applies the sanitiser's rules to those (sanitizer in render.go: the
// schemes and relative URLs of validURL, titles and alt texts matching
// bluemonday.Paragraph, rel="nofollow noreferrer", a link or image left
// without attributes dropped) and writes everything in the form the
// sanitiser writes it: text and attribute values escaped as html.EscapeString
// escapes them, raw HTML (goldmark's "raw HTML omitted" comments) left out,
// attributes the sanitiser drops (the alignment of table cells, the start
// of an ordered list) not written.
//
// The sanitiser re-parsed the whole output with an HTML tokenizer and
// checked every attribute against its policy: at 2 MiB of prose that was
// about half the time of a render. TestSafeHTMLIsWhatTheSanitiserKeeps
// and FuzzSafeHTML hold the two to the same bytes, on every construct of
// Markdown and on hostile input, and check that the sanitiser changes
// nothing in what safeHTML writes.
//
// It registers a function for every kind of node the parser of newMarkdown
// makes; a node of a kind without one writes nothing of its own (goldmark
// renders its children). reading.go and mention.go render their own nodes
// (the table of contents, fenced code, mentions) in the same form. Line
// ends are read as the sanitiser's tokenizer reads them: "\r\n" and "\r"
// are "\n" (newlines, droppedTag).
type safeHTML struct{}

func (safeHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindDocument, renderNothing)
	reg.Register(ast.KindHeading, renderHeading)
	reg.Register(ast.KindBlockquote, renderTags("<blockquote>\n", "</blockquote>\n"))
	reg.Register(ast.KindCodeBlock, renderCodeBlock)
	reg.Register(ast.KindFencedCodeBlock, renderCodeBlock) // reading's renderFencedCode in newMarkdown
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindList, renderList)
	reg.Register(ast.KindListItem, renderListItem)
	reg.Register(ast.KindParagraph, renderTags("<p>", "</p>\n"))
	reg.Register(ast.KindTextBlock, renderTextBlock)
	reg.Register(ast.KindThematicBreak, renderTags("<hr>\n", ""))
	reg.Register(ast.KindLinkReferenceDefinition, renderSkip)

	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindCodeSpan, renderCodeSpan)
	reg.Register(ast.KindEmphasis, renderEmphasis)
	reg.Register(ast.KindImage, renderImage)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindText, renderText)
	reg.Register(ast.KindString, renderString)

	reg.Register(extast.KindTable, renderTags("<table>\n", "</table>\n"))
	reg.Register(extast.KindTableHeader, renderTableHeader)
	reg.Register(extast.KindTableRow, renderTableRow)
	reg.Register(extast.KindTableCell, renderTableCell)
	reg.Register(extast.KindStrikethrough, renderTags("<del>", "</del>"))
	reg.Register(extast.KindTaskCheckBox, renderTaskCheckBox)
}

func renderNothing(util.BufWriter, []byte, ast.Node, bool) (ast.WalkStatus, error) {
	return ast.WalkContinue, nil
}

func renderSkip(util.BufWriter, []byte, ast.Node, bool) (ast.WalkStatus, error) {
	return ast.WalkSkipChildren, nil
}

// renderRawHTML writes nothing for inline raw HTML: goldmark writes a
// comment, which the sanitiser drops.
func renderRawHTML(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		droppedTag(w)
	}
	return ast.WalkSkipChildren, nil
}

// droppedTag stands for a tag or comment of goldmark's HTML that the
// sanitiser drops. The text before and after it were two tokens for the
// sanitiser's tokenizer, which reads the line ends of each on its own: a
// "\r" that ends the first is a line end, not half of a "\r\n" with a
// "\n" that starts the second. So the line ends that end the output are
// read here as the tokenizer reads them (newlines reads the rest).
func droppedTag(w util.BufWriter) {
	h, ok := w.(*htmlBuffer)
	if !ok {
		return
	}
	i := len(h.b)
	for i > 0 && (h.b[i-1] == '\r' || h.b[i-1] == '\n') {
		i--
	}
	if bytes.IndexByte(h.b[i:], '\r') >= 0 {
		h.b = h.b[:i+len(newlines(h.b[i:]))]
	}
}

// renderTags writes open on entering a node and closing on leaving it.
func renderTags(open, closing string) renderer.NodeRendererFunc {
	return func(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			_, _ = w.WriteString(open)
		} else {
			_, _ = w.WriteString(closing)
		}
		return ast.WalkContinue, nil
	}
}

func renderHeading(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Heading)
	level := "0123456"[min(max(n.Level, 0), 6)]
	if !entering {
		_, _ = w.WriteString("</h")
		_ = w.WriteByte(level)
		_, _ = w.WriteString(">\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<h")
	_ = w.WriteByte(level)
	// The id reading gives it; the sanitiser keeps any id with a letter or
	// digit in it (bluemonday's pattern is not anchored), and reading's
	// start with "h-".
	if id, ok := n.AttributeString("id"); ok {
		if id, ok := id.([]byte); ok && headingIDAllowed(id) {
			writeAttr(w, "id", id)
		}
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

// headingIDAllowed is the sanitiser's rule for ids: some letter, digit,
// ":", "-", "_" or ".".
func headingIDAllowed(id []byte) bool {
	for _, c := range id {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ':' || c == '-' || c == '_' || c == '.' {
			return true
		}
	}
	return false
}

func renderCodeBlock(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		_, _ = w.WriteString("</code></pre>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<pre><code>")
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		writeEscaped(w, seg.Value(src))
	}
	return ast.WalkContinue, nil
}

// renderHTMLBlock writes what is left of goldmark's "<!-- raw HTML omitted
// -->" lines once the sanitiser dropped the comments: their line ends.
func renderHTMLBlock(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering || node.(*ast.HTMLBlock).HasClosure() {
		droppedTag(w)
		_ = w.WriteByte('\n')
	}
	return ast.WalkContinue, nil
}

// renderList writes a list; the start of an ordered list is an attribute
// the sanitiser drops.
func renderList(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	tag := "ul>\n"
	if node.(*ast.List).IsOrdered() {
		tag = "ol>\n"
	}
	if entering {
		_ = w.WriteByte('<')
	} else {
		_, _ = w.WriteString("</")
	}
	_, _ = w.WriteString(tag)
	return ast.WalkContinue, nil
}

func renderListItem(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		_, _ = w.WriteString("</li>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<li>")
	if fc := n.FirstChild(); fc != nil {
		if _, ok := fc.(*ast.TextBlock); !ok {
			_ = w.WriteByte('\n')
		}
	}
	return ast.WalkContinue, nil
}

func renderTextBlock(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering && n.NextSibling() != nil && n.FirstChild() != nil {
		_ = w.WriteByte('\n')
	}
	return ast.WalkContinue, nil
}

func renderCodeSpan(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		_, _ = w.WriteString("</code>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<code>")
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			continue
		}
		value := t.Segment.Value(src)
		if len(value) > 0 && value[len(value)-1] == '\n' {
			writeEscaped(w, value[:len(value)-1])
			_ = w.WriteByte(' ')
		} else {
			writeEscaped(w, value)
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderEmphasis(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	tag := "em>"
	if node.(*ast.Emphasis).Level == 2 {
		tag = "strong>"
	}
	if entering {
		_ = w.WriteByte('<')
	} else {
		_, _ = w.WriteString("</")
	}
	_, _ = w.WriteString(tag)
	return ast.WalkContinue, nil
}

func renderText(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Text)
	value := n.Segment.Value(src)
	if n.IsRaw() {
		writeEscaped(w, value)
		return ast.WalkContinue, nil
	}
	writeText(w, value)
	if n.HardLineBreak() {
		_, _ = w.WriteString("<br>\n")
	} else if n.SoftLineBreak() {
		_ = w.WriteByte('\n')
	}
	return ast.WalkContinue, nil
}

// renderString writes a string node. goldmark writes one marked as code
// as it is, unescaped; none of the parsers of newMarkdown makes one, and
// it is escaped here all the same.
func renderString(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.String)
	if n.IsRaw() || n.IsCode() {
		writeEscaped(w, n.Value)
	} else {
		writeText(w, n.Value)
	}
	return ast.WalkContinue, nil
}

func renderTableHeader(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<thead>\n<tr>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("</tr>\n</thead>\n")
	if n.NextSibling() != nil {
		_, _ = w.WriteString("<tbody>\n")
	}
	return ast.WalkContinue, nil
}

func renderTableRow(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<tr>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("</tr>\n")
	if n.Parent().LastChild() == n {
		_, _ = w.WriteString("</tbody>\n")
	}
	return ast.WalkContinue, nil
}

// renderTableCell writes a cell without its alignment: goldmark writes it
// as a style attribute, which the sanitiser drops.
func renderTableCell(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	header := n.Parent().Kind() == extast.KindTableHeader
	switch {
	case entering && header:
		_, _ = w.WriteString("<th>")
	case entering:
		_, _ = w.WriteString("<td>")
	case header:
		_, _ = w.WriteString("</th>\n")
	default:
		_, _ = w.WriteString("</td>\n")
	}
	return ast.WalkContinue, nil
}

func renderTaskCheckBox(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	if node.(*extast.TaskCheckBox).IsChecked {
		_, _ = w.WriteString(`<input checked="" disabled="" type="checkbox"> `)
	} else {
		_, _ = w.WriteString(`<input disabled="" type="checkbox"> `)
	}
	return ast.WalkContinue, nil
}

// linkRel is what the sanitiser adds to every link with an href.
const linkRel = ` rel="nofollow noreferrer"`

// linkHref returns the href of a link or image as the sanitiser keeps it:
// goldmark's (its destination escaped as a URL, emptied when goldmark deems
// it dangerous), then the sanitiser's rule, validURL. ok is false when the
// sanitiser drops it.
func linkHref(dest []byte) (string, bool) {
	escaped := util.URLEscape(dest, true)
	if dangerousURL(escaped) {
		return validURL("")
	}
	return validURL(string(escaped))
}

// dangerousURL is goldmark's html.IsDangerousURL without its allocations
// (it lower-cases a copy of each prefix it compares): the schemes
// javascript:, vbscript:, file: and data: but for data:image/ of PNG, GIF,
// JPEG and WebP. goldmark's URLs are escaped to ASCII first, so folding
// ASCII case is its lower-casing.
func dangerousURL(u []byte) bool {
	if hasPrefixFold(u, "data:image/") {
		v := u[len("data:image/"):]
		return !hasPrefixFold(v, "png;") && !hasPrefixFold(v, "gif;") &&
			!hasPrefixFold(v, "jpeg;") && !hasPrefixFold(v, "webp;")
	}
	return hasPrefixFold(u, "javascript:") || hasPrefixFold(u, "vbscript:") ||
		hasPrefixFold(u, "file:") || hasPrefixFold(u, "data:")
}

// hasPrefixFold reports whether s starts with prefix (lower case ASCII),
// in any case.
func hasPrefixFold(s []byte, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := range len(prefix) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// validURL is the sanitiser's check of a URL (bluemonday's validURL under
// AllowStandardURLs): trimmed, without white space, parsed by net/url,
// either relative and not empty or of the schemes mailto, http and https.
// It returns the URL as net/url writes it again, as the sanitiser does.
func validURL(raw string) (string, bool) {
	if plainURL(raw) {
		return raw, true
	}
	return parsedURL(raw)
}

// parsedURL is validURL for any URL.
func parsedURL(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	// bluemonday lets white space through in data: URLs only, and data:
	// is none of the schemes allowed.
	if strings.ContainsAny(raw, " \t\n") {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch u.Scheme {
	case "mailto", "http", "https":
		return u.String(), true
	case "":
		s := u.String()
		return s, s != ""
	}
	return "", false
}

// plainURL reports whether validURL keeps raw as it is, without parsing
// it: a path of letters, digits and "-._~/" (not starting with "//"),
// absolute or after "http://" or "https://" and a host of letters, digits,
// "-" and ".". Such a URL has no scheme to check and nothing that net/url
// writes otherwise, and it is the common case (TestPlainURLs).
func plainURL(raw string) bool {
	path := raw
	if rest, ok := strings.CutPrefix(raw, "https://"); ok {
		path = rest
	} else if rest, ok := strings.CutPrefix(raw, "http://"); ok {
		path = rest
	}
	if len(path) < len(raw) { // the host, up to the path
		host := len(path)
		if i := strings.IndexByte(path, '/'); i >= 0 {
			host = i
		}
		if host == 0 {
			return false
		}
		for i := range host {
			if c := path[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
				return false
			}
		}
		path = path[host:]
	} else if raw == "" || strings.HasPrefix(raw, "//") {
		return false
	}
	for i := range len(path) {
		if c := path[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
			return false
		}
	}
	return true
}

// renderState is what rendering one document remembers between nodes:
// the sanitiser's stack of closing tags to skip. A link or image left
// without attributes is dropped, and the end tag "</a>" is dropped with it
// when the last element dropped is a link; an image has no end tag, so
// after one is dropped the end tags of dropped links are kept. safeHTML
// follows that to the byte.
type renderState struct {
	skipped []byte // 'a' or 'i' (img), in the order dropped
}

var renderStateName = []byte("quire-render-state")

// stateOf returns the render state of the document of n, made on first use.
func stateOf(n ast.Node) *renderState {
	doc := n.OwnerDocument()
	if doc == nil {
		return &renderState{}
	}
	if v, ok := doc.Attribute(renderStateName); ok {
		return v.(*renderState)
	}
	st := &renderState{}
	doc.SetAttribute(renderStateName, st)
	return st
}

// closeLink writes the end tag of a link, unless the sanitiser would skip
// it: when the last element it dropped is a link (that one or an outer one:
// the sanitiser does not tell them apart).
func closeLink(w util.BufWriter, n ast.Node) {
	if st := stateOf(n); len(st.skipped) > 0 && st.skipped[len(st.skipped)-1] == 'a' {
		st.skipped = st.skipped[:len(st.skipped)-1]
		droppedTag(w)
		return
	}
	_, _ = w.WriteString("</a>")
}

func renderLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !entering {
		closeLink(w, n)
		return ast.WalkContinue, nil
	}
	href, hasHref := linkHref(n.Destination)
	var title []byte
	hasTitle := false
	if n.Title != nil {
		title = resolveText(nil, n.Title)
		hasTitle = bluemonday.Paragraph.Match(title)
	}
	class, hasClass := n.AttributeString("class")
	if hasClass {
		c, ok := class.([]byte)
		hasClass = ok && string(c) == "anchor"
	}
	if !hasHref && !hasTitle && !hasClass {
		st := stateOf(n)
		st.skipped = append(st.skipped, 'a')
		droppedTag(w)
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<a")
	if hasHref {
		writeAttr(w, "href", []byte(href))
	}
	if hasTitle {
		writeAttr(w, "title", title)
	}
	if hasClass {
		_, _ = w.WriteString(` class="anchor"`)
	}
	if hasHref {
		_, _ = w.WriteString(linkRel)
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	u := util.URLEscape(n.URL(src), false)
	var raw []byte
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(u), []byte("mailto:")) {
		raw = append(raw, "mailto:"...)
	}
	if !dangerousURL(u) {
		raw = append(raw, u...)
	}
	href, ok := validURL(string(raw))
	if !ok {
		st := stateOf(n)
		st.skipped = append(st.skipped, 'a')
		droppedTag(w)
		writeEscaped(w, n.Label(src))
		closeLink(w, n)
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	writeEscaped(w, []byte(href))
	_, _ = w.WriteString(`"` + linkRel + `>`)
	writeEscaped(w, n.Label(src))
	closeLink(w, n)
	return ast.WalkContinue, nil
}

func renderImage(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	href, hasSrc := linkHref(n.Destination)
	alt := attrNUL(altText(nil, src, n))
	hasAlt := bluemonday.Paragraph.Match(alt)
	var title []byte
	hasTitle := false
	if n.Title != nil {
		title = resolveText(nil, n.Title)
		hasTitle = bluemonday.Paragraph.Match(title)
	}
	if !hasSrc && !hasAlt && !hasTitle {
		st := stateOf(n)
		st.skipped = append(st.skipped, 'i')
		droppedTag(w)
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString("<img")
	if hasSrc {
		writeAttr(w, "src", []byte(href))
	}
	if hasAlt {
		writeAttr(w, "alt", alt)
	}
	if hasTitle {
		writeAttr(w, "title", title)
	}
	_ = w.WriteByte('>')
	return ast.WalkSkipChildren, nil
}

// altText appends the text of an image's description to dst as goldmark
// writes it into the alt attribute, unescaped: the text of every Text and
// String under n, soft line breaks as "\n" and hard ones as "<br>\n" (which
// the sanitiser's pattern then refuses).
func altText(dst, src []byte, n ast.Node) []byte {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.String:
			if c.IsRaw() || c.IsCode() {
				dst = append(dst, c.Value...)
			} else {
				dst = resolveText(dst, c.Value)
			}
		case *ast.Text:
			v := c.Segment.Value(src)
			if c.IsRaw() {
				dst = append(dst, v...)
				continue
			}
			dst = resolveText(dst, v)
			if c.HardLineBreak() {
				dst = append(dst, "<br>\n"...)
			} else if c.SoftLineBreak() {
				dst = append(dst, '\n')
			}
		default:
			dst = altText(dst, src, c)
		}
	}
	return dst
}

// attrNUL returns an attribute value as the tokenizer reads it: a NUL
// is U+FFFD.
func attrNUL(v []byte) []byte {
	if bytes.IndexByte(v, 0) < 0 {
		return v
	}
	return bytes.ReplaceAll(v, []byte{0}, []byte("\ufffd"))
}

// escapes are the escapes of html.EscapeString, which the sanitiser writes
// text and attribute values with, and the U+FFFD that its tokenizer reads a
// NUL as; other bytes are written as they are. A "\r" (which EscapeString
// escapes) never reaches it: the tokenizer reads each as a line end, and
// so does renderBounded (newlines).
var escapes = [256]string{
	'&':  "&amp;",
	'\'': "&#39;",
	'<':  "&lt;",
	'>':  "&gt;",
	'"':  "&#34;",
	0:    "\ufffd",
}

// writeAttr writes the attribute name="value", its value escaped as the
// sanitiser writes it.
func writeAttr(w util.BufWriter, name string, value []byte) {
	_ = w.WriteByte(' ')
	_, _ = w.WriteString(name)
	_, _ = w.WriteString(`="`)
	writeEscaped(w, value)
	_ = w.WriteByte('"')
}

// writeEscaped writes b escaped as the sanitiser writes text.
func writeEscaped(w util.BufWriter, b []byte) {
	start := 0
	for i, c := range b {
		if e := escapes[c]; e != "" {
			_, _ = w.Write(b[start:i])
			_, _ = w.WriteString(e)
			start = i + 1
		}
	}
	_, _ = w.Write(b[start:])
}

// writeText writes Markdown text escaped as the sanitiser writes it, with
// its backslash escapes and character references resolved as goldmark
// resolves them.
func writeText(w util.BufWriter, b []byte) {
	if bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b, '&') < 0 && bytes.IndexByte(b, 0) < 0 {
		writeEscaped(w, b)
		return
	}
	writeEscaped(w, resolveText(make([]byte, 0, len(b)), b))
}

// resolveText appends source to dst as goldmark's html.Writer writes it,
// unescaped: a backslash before punctuation dropped, NUL as U+FFFD, and
// numeric and named character references replaced by their characters.
// It is goldmark's defaultWriter.Write (renderer/html, MIT licence),
// writing the text instead of escaping it.
func resolveText(dst, source []byte) []byte {
	escaped := false
	var ok bool
	limit := len(source)
	n := 0
	for i := 0; i < limit; i++ {
		c := source[i]
		if escaped {
			if util.IsPunct(c) {
				dst = append(dst, source[n:i-1]...)
				n = i
				escaped = false
				continue
			}
		}
		if c == '\x00' {
			dst = append(dst, source[n:i]...)
			dst = append(dst, "\ufffd"...)
			n = i + 1
			escaped = false
			continue
		}
		if c == '&' {
			pos := i
			next := i + 1
			if next < limit && source[next] == '#' {
				nnext := next + 1
				if nnext < limit {
					nc := source[nnext]
					// code point like #x22;
					if nnext < limit && nc == 'x' || nc == 'X' {
						start := nnext + 1
						i, ok = util.ReadWhile(source, [2]int{start, limit}, util.IsHexDecimal)
						if ok && i < limit && source[i] == ';' && i-start < 7 {
							v, _ := strconv.ParseUint(util.BytesToReadOnlyString(source[start:i]), 16, 32)
							dst = append(dst, source[n:pos]...)
							n = i + 1
							dst = utf8.AppendRune(dst, util.ToValidRune(rune(v)))
							continue
						}
						// code point like #1234;
					} else if nc >= '0' && nc <= '9' {
						start := nnext
						i, ok = util.ReadWhile(source, [2]int{start, limit}, util.IsNumeric)
						if ok && i < limit && i-start < 8 && source[i] == ';' {
							v, _ := strconv.ParseUint(util.BytesToReadOnlyString(source[start:i]), 10, 32)
							dst = append(dst, source[n:pos]...)
							n = i + 1
							dst = utf8.AppendRune(dst, util.ToValidRune(rune(v)))
							continue
						}
					}
				}
			} else {
				start := next
				i, ok = util.ReadWhile(source, [2]int{start, limit}, util.IsAlphaNumeric)
				// entity reference
				if ok && i < limit && source[i] == ';' {
					name := util.BytesToReadOnlyString(source[start:i])
					entity, ok := util.LookUpHTML5EntityByName(name)
					if ok {
						dst = append(dst, source[n:pos]...)
						n = i + 1
						dst = append(dst, entity.Characters...)
						continue
					}
				}
			}
			i = next - 1
		}
		if c == '\\' {
			escaped = true
			continue
		}
		escaped = false
	}
	return append(dst, source[n:]...)
}

// newlines turns the line ends "\r\n" and "\r" of html into "\n", as the
// sanitiser's tokenizer reads them in text and attribute values (goldmark
// writes no "\r" anywhere else).
func newlines(html []byte) []byte {
	if bytes.IndexByte(html, '\r') < 0 {
		return html
	}
	out := html[:0]
	for i := 0; i < len(html); i++ {
		c := html[i]
		if c == '\r' {
			c = '\n'
			if i+1 < len(html) && html[i+1] == '\n' {
				i++
			}
		}
		out = append(out, c)
	}
	return out
}

// htmlBuffer is the util.BufWriter goldmark renders into: a byte slice,
// without the copy of a bufio.Writer in front of a bytes.Buffer.
type htmlBuffer struct{ b []byte }

func (h *htmlBuffer) Write(p []byte) (int, error) {
	h.b = append(h.b, p...)
	return len(p), nil
}

func (h *htmlBuffer) WriteString(s string) (int, error) {
	h.b = append(h.b, s...)
	return len(s), nil
}

func (h *htmlBuffer) WriteByte(c byte) error {
	h.b = append(h.b, c)
	return nil
}

func (h *htmlBuffer) WriteRune(r rune) (int, error) {
	n := len(h.b)
	h.b = utf8.AppendRune(h.b, r)
	return len(h.b) - n, nil
}

func (h *htmlBuffer) Available() int { return cap(h.b) - len(h.b) }
func (h *htmlBuffer) Buffered() int  { return 0 }
func (h *htmlBuffer) Flush() error   { return nil }
