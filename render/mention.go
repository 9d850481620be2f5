package render

import (
	"bytes"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Mentions (product.md section 19) are written [@Name](mention:USER-ID)
// and shown as the person's name: <span class="mention">@Name</span>. A
// link of the scheme mention: is not a place to go (the sanitiser would
// drop its href and leave a bare <a>), so mentions turns each such link of
// the syntax tree into a mention node, in one pass over the tree, linear
// in it like reading's. Only a link whose destination is exactly mention:
// and an id of quire's form becomes one; any other mention: link is left
// to the sanitiser, which drops its href.
type mentions struct{}

func (mentions) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(mentionTransformer{}, 900)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(mentionRenderer{}, 100)))
}

// mentionDestination is a mention's destination: mention: and a user id.
var mentionDestination = regexp.MustCompile(`^mention:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

var kindMention = ast.NewNodeKind("Mention")

// mentionNode replaces a mention's link; its children are the link's (the
// text "@Name").
type mentionNode struct{ ast.BaseInline }

func (n *mentionNode) Kind() ast.NodeKind         { return kindMention }
func (n *mentionNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

type mentionTransformer struct{}

func (mentionTransformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	// A link's destination is the bytes written in the source (character
	// references are resolved only when it is rendered), so without
	// "mention:" in the source there is no mention, and no need to walk
	// the whole tree for one. When this is a piece of a document
	// (renderMarkdown), the document was looked at once for all pieces.
	has, ok := pc.Get(mentionsKey).(bool)
	if !ok {
		has = bytes.Contains(reader.Source(), []byte("mention:"))
	}
	if !has {
		return
	}
	var links []*ast.Link
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering && bytes.HasPrefix(l.Destination, []byte("mention:")) &&
			mentionDestination.Match(l.Destination) {
			links = append(links, l)
		}
		return ast.WalkContinue, nil
	})
	for _, l := range links {
		m := &mentionNode{}
		for c := l.FirstChild(); c != nil; {
			next := c.NextSibling()
			m.AppendChild(m, c) // moves c from l to m
			c = next
		}
		l.Parent().ReplaceChild(l.Parent(), l, m)
	}
}

type mentionRenderer struct{}

func (mentionRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindMention, func(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			_, _ = w.WriteString(`<span class="mention">`)
		} else {
			_, _ = w.WriteString(`</span>`)
		}
		return ast.WalkContinue, nil
	})
}

// allowMentions lets the mention's span through the sanitiser.
func allowMentions(p *bluemonday.Policy) {
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^mention$`)).OnElements("span")
}
