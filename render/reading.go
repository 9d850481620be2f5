package render

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"

	"quire/internal/slug"
)

// reading is what a document's Markdown gets beyond CommonMark and GFM so
// that it reads well inside a page (product.md section 14):
//
//   - Headings move one level down (# is h2, h6 stays h6): the page's title
//     is its only h1. Each gets an id ("h-" and a slug of its text, so that
//     it never clashes with an id of the page around it) and a § link to
//     itself.
//   - A document with tocMinHeadings headings or more starts with a table
//     of contents.
//   - Fenced code blocks that name a language are highlighted on the
//     server with chroma, with classes only (the CSP forbids inline
//     styles; static/highlight.css colours them), within the bounds of
//     highlightLimits. Other blocks stay plain.
//
// It works on the syntax tree after goldmark parsed it, in one pass that is
// linear in the tree, and in node renderers; limits.go keeps the
// parse itself linear.
type reading struct{}

// Extend adds reading to a goldmark built by hand (newMarkdown) or with
// goldmark.WithExtensions (the tests' reference renderer).
func (reading) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(readingTransformer{}, 1000)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(readingRenderer{}, 100)))
}

// highlightLimits bound chroma's work in one document. Its lexers are
// regular expressions with backtracking, and on input made to be slow
// their work grows faster than the input with a large constant: a block of
// 4 KiB of lines holding a tab costs the Java lexer 3.8 s (13 times what
// 1 KiB costs), 4 KiB of "[[" PowerShell's 2.2 s and 4 KiB of "((" the
// Makefile lexer 5.5 s, on a busy 2-core machine (BenchmarkRenderCode).
// No bound on bytes alone keeps that small, so there are three:
//
//   - a block is highlighted only when it names a language of
//     highlightLanguages (common ones, without the worst lexers) and is at
//     most blockBytes long;
//   - the blocks of a document are highlighted until they reach
//     totalBytes; later ones are plain;
//   - highlighting a document stops after budget of time, checked between
//     two tokens: the block being highlighted and all later ones are then
//     plain, and the render cache keeps it only for a while
//     (retryIncomplete), so that a later view tries again.
//
// The work of highlighting is then bounded by a constant per document
// (budget, plus one token of a block of blockBytes), whatever its size.
type highlightBounds struct {
	blockBytes, totalBytes int
	budget                 time.Duration
}

var highlightLimits = highlightBounds{blockBytes: 16 << 10, totalBytes: 128 << 10, budget: 100 * time.Millisecond}

// highlightRun is the state of highlighting one document: what is left of
// its bytes and time, and whether a block was left plain for lack of time.
type highlightRun struct {
	bounds   highlightBounds
	left     int
	deadline time.Time // set when the first block starts
	cut      bool
	now      func() time.Time // time.Now; the tests' clock
}

// expired reports whether the run's time is up, marking it cut if so.
func (h *highlightRun) expired() bool {
	if h.cut {
		return true
	}
	now := time.Now
	if h.now != nil {
		now = h.now
	}
	if h.deadline.IsZero() {
		h.deadline = now().Add(h.bounds.budget)
	}
	if !now().Before(h.deadline) {
		h.cut = true
	}
	return h.cut
}

// highlightRunKey holds, in goldmark's parser context, the *highlightRun of
// a render (renderBounded). Without one a render gets highlightLimits.
var highlightRunKey = parser.NewContextKey()

// codeHighlight is what a fenced code block to highlight carries.
type codeHighlight struct {
	lexer chroma.Lexer
	run   *highlightRun
}

// tocMinHeadings is how many headings a document needs for a table of
// contents, and tocMaxEntries how many it lists at most.
const (
	tocMinHeadings = 3
	tocMaxEntries  = 200
)

// headingIDPrefix starts every heading's id.
const headingIDPrefix = "h-"

// attrLexer holds, on a fenced code block, the lexer that highlights it.
// It is not an HTML attribute: readingRenderer renders these blocks itself
// and writes no attributes.
var attrLexer = []byte("quire-lexer")

// readingState is what reading keeps of a whole document: its heading
// ids, its table of contents and how many headings it has. renderMarkdown
// shares one between the pieces of a document in the parser's context of
// each, under readingStateKey, and renders the table of contents itself
// (without one, the transformer puts it first in the document).
type readingState struct {
	ids      headingIDs
	toc      tocNode
	headings int
}

var readingStateKey = parser.NewContextKey()

func newReadingState() *readingState {
	return &readingState{ids: headingIDs{seen: map[string]bool{}, next: map[string]int{}}}
}

type readingTransformer struct{}

func (readingTransformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	hl, _ := pc.Get(highlightRunKey).(*highlightRun)
	if hl == nil {
		hl = &highlightRun{bounds: highlightLimits, left: highlightLimits.totalBytes}
	}
	state, piece := pc.Get(readingStateKey).(*readingState)
	if !piece {
		state = newReadingState()
	}
	var (
		toc      = &state.toc
		ids      = &state.ids
		headings []*ast.Heading
		blocks   []*ast.FencedCodeBlock
	)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			headings = append(headings, n)
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock:
			blocks = append(blocks, n)
			return ast.WalkSkipChildren, nil
		}
		if c := n.FirstChild(); c != nil && c.Type() == ast.TypeInline {
			// A paragraph's text, a table cell's: no headings in there.
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, h := range headings {
		h.Level = min(h.Level+1, 6)
		title := plainText(h, src)
		id := ids.make(title)
		h.SetAttributeString("id", []byte(id))
		anchor := ast.NewLink()
		anchor.Destination = []byte("#" + id)
		anchor.Title = []byte("Link to this section")
		anchor.SetAttributeString("class", []byte("anchor"))
		anchor.AppendChild(anchor, ast.NewString([]byte("§")))
		h.AppendChild(h, anchor)
		if len(toc.entries) < tocMaxEntries {
			toc.entries = append(toc.entries, tocEntry{level: h.Level, id: id, title: title})
		}
	}
	state.headings += len(headings)
	if !piece && state.headings >= tocMinHeadings {
		doc.InsertBefore(doc, doc.FirstChild(), toc)
	}
	for _, b := range blocks {
		size := 0
		for i := 0; i < b.Lines().Len(); i++ {
			seg := b.Lines().At(i)
			size += seg.Len()
		}
		if size > hl.bounds.blockBytes || size > hl.left {
			continue
		}
		if l := lexerFor(string(b.Language(src))); l != nil {
			b.SetAttribute(attrLexer, &codeHighlight{lexer: l, run: hl})
			hl.left -= size
		}
	}
}

// plainText is the text of a heading without its markup, as one line.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

// headingIDs hands out unique ids. A clash takes the next free number of
// its slug ("a", "a-1", "a-2"); next remembers where each slug's count is,
// so that n equal headings cost n steps, not n*n (goldmark's own generator
// starts from 1 every time).
type headingIDs struct {
	seen   map[string]bool
	next   map[string]int
	probes int // ids tried in all, for the tests
}

// maxSlug bounds the slug of a heading (slug.Max).
const maxSlug = slug.Max

func (g *headingIDs) make(title string) string {
	slug := slugOf(title)
	id := headingIDPrefix + slug
	if g.seen[id] {
		n := g.next[slug]
		for {
			n++
			g.probes++
			id = headingIDPrefix + slug + "-" + strconv.Itoa(n)
			if !g.seen[id] {
				break
			}
		}
		g.next[slug] = n
	}
	g.seen[id] = true
	return id
}

// slugOf makes an id of a heading (package slug, shared with the
// importer's wikilinks).
func slugOf(title string) string { return slug.Of(title) }

// tocNode is the table of contents, the first block of a long document.
type tocNode struct {
	ast.BaseBlock
	entries []tocEntry
}

type tocEntry struct {
	level     int
	id, title string
}

var kindTOC = ast.NewNodeKind("TableOfContents")

func (n *tocNode) Kind() ast.NodeKind { return kindTOC }

func (n *tocNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

type readingRenderer struct{}

func (readingRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindTOC, renderTOC)
	reg.Register(ast.KindFencedCodeBlock, renderFencedCode)
}

// renderTOC writes the table of contents as nested lists, one level of list
// for each level of heading under the highest one there is.
func renderTOC(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*tocNode)
	top := 6
	for _, e := range n.entries {
		top = min(top, e.level)
	}
	// In the form the sanitiser writes (safe.go): attributes with values,
	// links with their rel.
	w.WriteString(`<details class="toc" open=""><summary>Contents</summary>` + "\n")
	depth := 0
	for _, e := range n.entries {
		d := e.level - top + 1
		if d > depth {
			w.WriteString("<ol>")
			depth++
			for depth < d {
				w.WriteString("<li><ol>")
				depth++
			}
		} else {
			w.WriteString("</li>\n")
			for depth > d {
				w.WriteString("</ol></li>\n")
				depth--
			}
		}
		w.WriteString(`<li><a href="#` + e.id + `"` + linkRel + `>`)
		template.HTMLEscape(w, []byte(e.title))
		w.WriteString("</a>")
	}
	w.WriteString("</li>")
	for ; depth > 1; depth-- {
		w.WriteString("</ol></li>")
	}
	w.WriteString("</ol>\n</details>\n")
	return ast.WalkSkipChildren, nil
}

// renderFencedCode writes a fenced code block, highlighted when the
// transformer chose a lexer for it. A lexer that fails leaves the block
// plain.
func renderFencedCode(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	var code bytes.Buffer
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		code.Write(seg.Value(src))
	}
	w.WriteString("<pre><code>")
	if v, ok := n.AttributeString(string(attrLexer)); ok {
		if html, ok := highlight(v.(*codeHighlight), code.String()); ok {
			w.Write(html)
			w.WriteString("</code></pre>\n")
			return ast.WalkSkipChildren, nil
		}
	}
	template.HTMLEscape(w, code.Bytes())
	w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// highlight writes code as HTML with a span of class "hl-..." around each
// run of tokens that has a colour (highlightClass). ok is false when the
// lexer fails on it or the run's time is up.
func highlight(h *codeHighlight, code string) (out []byte, ok bool) {
	if h.run.expired() {
		return nil, false
	}
	defer func() {
		// A lexer is third-party code run on what anyone may write: one
		// that panics shows the block plain rather than failing the page.
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	it, err := h.lexer.Tokenise(nil, code)
	if err != nil {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(len(code) * 2)
	class := ""
	var run bytes.Buffer
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if class != "" {
			b.WriteString(`<span class="hl-` + class + `">`)
		}
		template.HTMLEscape(&b, run.Bytes())
		if class != "" {
			b.WriteString("</span>")
		}
		run.Reset()
	}
	for tok := it(); tok != chroma.EOF; tok = it() {
		if h.run.expired() {
			return nil, false
		}
		c := highlightClass(tok.Type)
		if c != class {
			flush()
			class = c
		}
		run.WriteString(tok.Value)
	}
	flush()
	// chroma ends the text with a newline that the block may not have.
	out = b.Bytes()
	if !strings.HasSuffix(code, "\n") {
		out = bytes.TrimSuffix(out, []byte("\n"))
	}
	return out, true
}

// highlightClasses name the colours of static/highlight.css, after
// Pygments' short names. Tokens of any other type are plain text.
var highlightClasses = map[chroma.TokenType]string{
	chroma.Keyword:             "k",
	chroma.KeywordType:         "kt",
	chroma.KeywordConstant:     "kc",
	chroma.Name:                "",
	chroma.NameFunction:        "nf",
	chroma.NameClass:           "nc",
	chroma.NameBuiltin:         "nb",
	chroma.NameTag:             "nt",
	chroma.NameAttribute:       "na",
	chroma.NameDecorator:       "nd",
	chroma.NameConstant:        "no",
	chroma.NameVariable:        "nv",
	chroma.LiteralString:       "s",
	chroma.LiteralStringEscape: "se",
	chroma.LiteralNumber:       "m",
	chroma.Literal:             "l",
	chroma.Comment:             "c",
	chroma.CommentPreproc:      "cp",
	chroma.Operator:            "o",
	chroma.GenericInserted:     "gi",
	chroma.GenericDeleted:      "gd",
	chroma.GenericHeading:      "gh",
	chroma.GenericSubheading:   "gu",
	chroma.GenericEmph:         "ge",
	chroma.GenericStrong:       "gs",
}

// highlightClass is the class of a token type: its own, else its
// subcategory's (all strings, all numbers), else its category's.
func highlightClass(t chroma.TokenType) string {
	for _, k := range []chroma.TokenType{t, t.SubCategory(), t.Category()} {
		if c, ok := highlightClasses[k]; ok {
			return c
		}
	}
	return ""
}

// highlightLanguages are the languages highlighted, by the names a fence
// may give them (```go). chroma has hundreds of lexers of uneven cost; these
// are common ones of documentation. Left out: lexers whose work on a few
// KiB made to be slow runs to seconds or minutes, such as Makefile and HCL
// (Terraform).
var highlightLanguages = map[string]string{
	"go": "go", "golang": "go",
	"python": "python", "py": "python",
	"javascript": "javascript", "js": "javascript", "jsx": "react",
	"typescript": "typescript", "ts": "typescript", "tsx": "typescript",
	"json": "json",
	"yaml": "yaml", "yml": "yaml",
	"toml": "toml", "ini": "ini",
	"bash": "bash", "sh": "bash", "shell": "bash", "zsh": "bash",
	"console": "console", "shell-session": "console",
	"powershell": "powershell", "ps1": "powershell",
	"sql":  "sql",
	"html": "html", "xml": "xml", "css": "css", "scss": "scss",
	"c": "c", "cpp": "cpp", "c++": "cpp", "csharp": "csharp", "cs": "csharp",
	"java": "java", "kotlin": "kotlin", "kt": "kotlin", "scala": "scala", "swift": "swift",
	"ruby": "ruby", "rb": "ruby", "php": "php", "perl": "perl", "lua": "lua",
	"rust": "rust", "rs": "rust",
	"diff": "diff", "patch": "diff",
	"dockerfile": "docker", "docker": "docker",
	"markdown": "markdown", "md": "markdown",
	"graphql": "graphql", "protobuf": "protobuf", "proto": "protobuf",
	"nginx":   "nginx",
	"haskell": "haskell", "elixir": "elixir", "erlang": "erlang", "r": "r", "dart": "dart",
}

// lexerFor returns the lexer of a fence's language, nil for none.
func lexerFor(lang string) chroma.Lexer {
	name, ok := highlightLanguages[strings.ToLower(lang)]
	if !ok {
		return nil
	}
	return lexers.Get(name)
}

// highlightClassPattern matches the classes of highlightClasses.
var highlightClassPattern = func() *regexp.Regexp {
	var names []string
	for _, c := range highlightClasses {
		if c != "" {
			names = append(names, regexp.QuoteMeta(c))
		}
	}
	return regexp.MustCompile(fmt.Sprintf(`^hl-(%s)$`, strings.Join(names, "|")))
}()

// allowReading lets through the sanitiser what reading writes and nothing
// more: the classes of highlighted code on spans, the § links' class, and
// the table of contents' class. Heading ids are standard attributes it
// keeps already.
func allowReading(p *bluemonday.Policy) {
	p.AllowAttrs("class").Matching(highlightClassPattern).OnElements("span")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^anchor$`)).OnElements("a")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^toc$`)).OnElements("details")
}

// shiftHTMLHeadings moves the headings of sanitised HTML content one level
// down, as reading does for Markdown (h1 is h2, h6 stays h6), so that the
// page's title stays its only h1. It is one pass of the tokenizer, linear
// in the HTML; everything else is copied as it is.
func shiftHTMLHeadings(s string) string {
	if !strings.Contains(s, "<h") && !strings.Contains(s, "</h") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/64)
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return b.String()
		}
		raw := z.Raw()
		if tt == html.StartTagToken || tt == html.EndTagToken {
			name, _ := z.TagName()
			if len(name) == 2 && name[0] == 'h' && '1' <= name[1] && name[1] <= '5' {
				// The sanitiser writes tags in lower case, as "<hN" or
				// "</hN", with the level at a fixed place.
				at := 2
				if tt == html.EndTagToken {
					at = 3
				}
				if len(raw) > at && raw[at] == name[1] {
					b.Write(raw[:at])
					b.WriteByte(name[1] + 1)
					b.Write(raw[at+1:])
					continue
				}
			}
		}
		b.Write(raw)
	}
}
