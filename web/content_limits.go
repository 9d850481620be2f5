package web

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// goldmark's parser is linear on ordinary Markdown but not on every input:
// each nested container re-scans the rest of its line ("> > > ..."), each
// emphasis closer walks back over every unmatched opener ("*a_*a_..."), each
// "](" scans the rest of its line for a destination and the rest of its
// paragraph for a title ("[a]([a](..."), and a table pads every short row to
// the width of its delimiter row (3,000x the input in output). A document of
// 40 KB could cost a second, one of the body limit minutes. The wrappers
// below stop goldmark before the work grows faster than the input: past a
// limit, the marker is left as the text it was written as. The limits are
// far above what a written document uses, so such documents render as they
// did.

const (
	// maxNesting bounds block quotes and list items nested in one another.
	// Past it a ">" or list marker is text of the innermost block.
	maxNesting = 16
	// maxDelimiters bounds the runs of "*", "_" and "~" that may become
	// emphasis or strikethrough in one paragraph (or heading, or table
	// cell): matching them costs up to maxDelimiters steps each. Later runs
	// are text.
	maxDelimiters = 256
	// linkScanPerByte and linkScanSlack give each paragraph a budget of
	// bytes that link destinations and titles which turn out not to be
	// links may scan: the slack plus a multiple of the paragraph's length.
	// A "](" whose scan would overrun the budget is text. Links that parse
	// consume what they scanned, so they cost nothing from the budget.
	linkScanPerByte = 4
	linkScanSlack   = 64 << 10
	// maxOpenBrackets bounds the "[" and "![" of one block still waiting
	// for their "]": each "]" looks through what follows its "[" for a link
	// (links may not nest). Later ones are text.
	maxOpenBrackets = 64
	// refChunkLines is how many lines of a paragraph the parser of link
	// reference definitions ("[a]: /url") sees at once: it copies the rest
	// of its paragraph for every definition it takes out.
	refChunkLines = 128
	// tableCellsPerByte and tableCellSlack bound the cells of a table
	// (rows times columns, short rows included, as goldmark pads them) by
	// the length of its source. A paragraph that would make a bigger table
	// stays a paragraph.
	tableCellsPerByte = 2
	tableCellSlack    = 4096
)

// nestingLimit wraps the parsers of block quotes and lists.
type nestingLimit struct{ parser.BlockParser }

func (p nestingLimit) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if nesting(parent) >= maxNesting {
		return nil, parser.NoChildren
	}
	return p.BlockParser.Open(parent, reader, pc)
}

// nesting counts the block quotes and list items n is in, n included. It
// walks at most maxNesting levels of them, since no deeper ones are made.
func nesting(n ast.Node) int {
	depth := 0
	for ; n != nil; n = n.Parent() {
		switch n.Kind() {
		case ast.KindBlockquote, ast.KindListItem:
			depth++
		}
	}
	return depth
}

// inlineBudget is what is left to spend in the block being parsed. Inline
// parsers are called block by block with that block as the parent, so a
// new parent starts a new budget.
type inlineBudget struct {
	block      ast.Node
	delimiters int
	linkScan   int
	brackets   int         // "[" open
	backticks  map[int]int // length of a run of "`" -> where its last run starts
}

var inlineBudgetKey = parser.NewContextKey()

func budgetOf(parent ast.Node, pc parser.Context) *inlineBudget {
	b, _ := pc.Get(inlineBudgetKey).(*inlineBudget)
	if b == nil {
		b = &inlineBudget{}
		pc.Set(inlineBudgetKey, b)
	}
	if b.block != parent {
		size := 0
		lines := parent.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			size += seg.Len()
		}
		*b = inlineBudget{block: parent, linkScan: linkScanSlack + linkScanPerByte*size}
	}
	return b
}

// delimiterLimit wraps the parsers of emphasis and strikethrough.
type delimiterLimit struct{ parser.InlineParser }

func (p delimiterLimit) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	b := budgetOf(parent, pc)
	if b.delimiters >= maxDelimiters {
		return nil
	}
	n := p.InlineParser.Parse(parent, block, pc)
	if n != nil {
		b.delimiters++
	}
	return n
}

// linkLimit wraps the parser of links and images.
type linkLimit struct{ parser.InlineParser }

func (p linkLimit) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	b := budgetOf(parent, pc)
	if line[0] != ']' {
		if b.brackets >= maxOpenBrackets {
			return nil
		}
		n := p.InlineParser.Parse(parent, block, pc)
		if n != nil {
			b.brackets++
		}
		return n
	}
	// goldmark takes the last open "[" off its list at every "]", link or
	// not.
	b.brackets = max(b.brackets-1, 0)
	if len(line) < 2 || line[1] != '(' {
		return p.InlineParser.Parse(parent, block, pc)
	}
	cost, ok := inlineLinkCost(block.Source(), seg.Start+2, b.linkScan)
	if !ok {
		// Spent: every later "](" of the block is text, so that none
		// scans up to the rest of the budget again.
		b.linkScan = 0
		return nil
	}
	n := p.InlineParser.Parse(parent, block, pc)
	if n == nil {
		b.linkScan -= cost
	}
	return n
}

// CloseBlock passes the end of a block on: the link parser turns the
// brackets left open into text there.
func (p linkLimit) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if cb, ok := p.InlineParser.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
}

// inlineLinkCost returns how many bytes of src goldmark may read to parse
// the destination and title of an inline link that start at i, or false
// when that could be more than budget (it then reads at most budget). It reads what goldmark reads, or more:
// the destination up to a space, a line end or an unbalanced ")", then
// the title up to its closing quote or parenthesis, across lines.
func inlineLinkCost(src []byte, i, budget int) (int, bool) {
	start := i
	limit := min(len(src), i+max(budget, 0))
	for i < limit && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if i < limit && src[i] == '<' {
		for i < limit && src[i] != '>' && src[i] != '\n' {
			i++
		}
	} else {
		open := 0
	dest:
		for ; i < limit; i++ {
			switch src[i] {
			case '\\':
				i++
			case '(':
				open++
			case ')':
				if open--; open < 0 {
					break dest
				}
			case ' ', '\t', '\n', '\r', '\v', '\f':
				break dest
			}
		}
	}
	for i < limit && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	if i < limit && (src[i] == '"' || src[i] == '\'' || src[i] == '(') {
		closer := src[i]
		if closer == '(' {
			closer = ')'
		}
		for i++; i < limit && src[i] != closer; i++ {
			if src[i] == '\\' {
				i++
			}
		}
	}
	if i >= limit && limit < len(src) {
		return 0, false
	}
	return i - start, true
}

// codeSpanLimit wraps the parser of code spans. goldmark looks for the
// closing run of backticks up to the end of the block, and when there is
// none the opening run is text; "a`b``c```..." costs the square of its
// length. The runs of a block are listed once, so an opening run without
// a closing one is known at once.
type codeSpanLimit struct{ parser.InlineParser }

func (p codeSpanLimit) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	n := 0
	for n < len(line) && line[n] == '`' {
		n++
	}
	b := budgetOf(parent, pc)
	if b.backticks == nil {
		b.backticks = backtickRuns(parent, block.Source())
	}
	if last, ok := b.backticks[n]; ok && last > seg.Start {
		return p.InlineParser.Parse(parent, block, pc)
	}
	block.Advance(n)
	return ast.NewTextSegment(seg.WithStop(seg.Start + n))
}

// backtickRuns maps the length of each run of backticks in the lines of a
// block to the position where its last run starts.
func backtickRuns(block ast.Node, src []byte) map[int]int {
	runs := map[int]int{}
	lines := block.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		line := seg.Value(src)
		for j := 0; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			k := j
			for k < len(line) && line[k] == '`' {
				k++
			}
			runs[k-j] = seg.Start + j
			j = k
		}
	}
	return runs
}

// tableLimit wraps the transformer that turns paragraphs into tables.
type tableLimit struct{ parser.ParagraphTransformer }

func (t tableLimit) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	lines := node.Lines()
	size := 0
	for i := range lines.Len() {
		seg := lines.At(i)
		size += seg.Len()
	}
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		cols := delimiterColumns(seg.Value(src))
		if cols == 0 {
			continue
		}
		rows := lines.Len() - i + 1
		if rows*cols > tableCellSlack+tableCellsPerByte*size {
			return
		}
		break
	}
	t.ParagraphTransformer.Transform(node, reader, pc)
}

// delimiterColumns returns the number of columns of a table's delimiter
// row ("| --- | :-: |"), or 0 when line cannot be one.
func delimiterColumns(line []byte) int {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || bytes.IndexByte(line, '-') < 0 {
		return 0
	}
	for _, c := range line {
		switch c {
		case '|', '-', ':', ' ', '\t':
		default:
			return 0
		}
	}
	line = bytes.TrimPrefix(line, []byte("|"))
	line = bytes.TrimSuffix(line, []byte("|"))
	return bytes.Count(line, []byte("|")) + 1
}

// escapedPipes does what extension.NewTableASTTransformer does: in a code
// span in a table cell, "\|" is a "|" (the backslash only kept the pipe from
// ending the cell). goldmark's version compares every such span with every
// escaped pipe of the document, the square of their number.
type escapedPipes struct{}

func (escapedPipes) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	inCell := false
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.Kind() {
		case extast.KindTableCell:
			inCell = entering
		case ast.KindCodeSpan:
			if entering && inCell {
				unescapePipes(n, src)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

// unescapePipes splits the texts of a code span around the backslash of
// each "\|".
func unescapePipes(span ast.Node, src []byte) {
	for c := span.FirstChild(); c != nil; {
		next := c.NextSibling()
		t, ok := c.(*ast.Text)
		if !ok {
			c = next
			continue
		}
		seg := t.Segment
		var n ast.Node = t
		for i := seg.Start; i < seg.Stop; i++ {
			if src[i] != '\\' || i+1 >= len(src) || src[i+1] != '|' {
				continue
			}
			cur := n.(*ast.Text).Segment
			n1 := ast.NewRawTextSegment(cur.WithStop(i))
			n2 := ast.NewRawTextSegment(cur.WithStart(i + 1))
			span.InsertAfter(span, n, n1)
			span.InsertAfter(span, n1, n2)
			span.RemoveChild(span, n)
			n = n2
			i++
		}
		c = next
	}
}

// refLimit wraps the parser of link reference definitions ("[a]: /url"),
// which copies the rest of its paragraph for each definition it takes out
// of it. A paragraph of many lines is given to it refChunkLines at a time,
// from its start, as long as it finds definitions. A definition longer than
// a chunk (its title spanning more than refChunkLines lines) is text there.
type refLimit struct{ parser.ParagraphTransformer }

func (t refLimit) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() <= refChunkLines {
		t.ParagraphTransformer.Transform(node, reader, pc)
		return
	}
	all := append([]text.Segment(nil), lines.Sliced(0, lines.Len())...)
	parent := node.Parent()
	i := 0
	for i < len(all) {
		n := min(refChunkLines, len(all)-i)
		chunk := ast.NewParagraph()
		chunk.Lines().AppendAll(all[i : i+n])
		chunk.SetBlankPreviousLines(i == 0 && node.HasBlankPreviousLines())
		parent.InsertBefore(parent, node, chunk)
		t.ParagraphTransformer.Transform(chunk, reader, pc)
		left := chunk.Lines().Len()
		if chunk.Parent() != nil {
			parent.RemoveChild(parent, chunk)
		}
		// Definitions come first; the next chunk starts at the first line
		// that was not one, in case a definition began there that the end
		// of the chunk cut.
		i += n - left
		if left == n || (left > 0 && i+left == len(all)) {
			break
		}
	}
	if i == len(all) {
		parent.RemoveChild(parent, node)
		return
	}
	lines.SetSliced(0, 0)
	lines.AppendAll(all[i:])
}
