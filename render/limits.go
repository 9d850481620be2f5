package render

import (
	"bytes"
	"math"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// goldmark's parser is linear in ordinary Markdown but not in every input.
// Its work grows with the square of the input when each nested container
// re-scans the rest of its line ("> > > ..."), each emphasis closer walks
// back over every unmatched opener ("*a_*a_..."), each "](" scans the rest
// of its line for a destination and of its paragraph for a title
// ("[a]([a](..."), each "]" looks through all that follows its "[", a code
// span looks for its closing run to the end of the paragraph, each link
// definition copies the rest of its paragraph, and escaped pipes in tables
// are compared pairwise; a table pads every short row to the width of its
// delimiter row (3,000 times the input in output), and a run of n "*"
// nests n/2 elements. 40 KB of ">" cost a second, 150 KB a minute and more.
// The wrappers below stop goldmark before its work grows faster than the
// input: past a limit, the marker is left as the text it was written as.
// The limits are far above what written documents reach, and those render
// as goldmark renders them.

// limits are the bounds the wrappers keep goldmark in.
type limits struct {
	// nesting bounds block quotes and list items nested in one another.
	// Past it a ">" or list marker is text of the innermost block.
	nesting int
	// delimiters and delimiterWorkPerByte bound the runs of "*", "_" and
	// "~" that may become emphasis or strikethrough in one paragraph (or
	// heading, or table cell): matching d of them costs up to d*d/2 steps,
	// which may reach delimiterWorkPerByte times the paragraph's length,
	// or delimiters*delimiters/2 in a short one. Later runs are text.
	delimiters, delimiterWorkPerByte int
	// delimiterRun bounds the length of one run of "*", "_" or "~": a
	// run of n around a word nests n/2 elements, and a longer run is text.
	delimiterRun int
	// brackets bounds the "[" and "![" of one block still waiting for
	// their "]": each "]" looks through what follows its "[" for a link
	// (links may not nest). Later ones are text.
	brackets int
	// linkScanPerByte and linkScanSlack give each paragraph a budget of
	// work for its links: the bytes that destinations and titles which turn
	// out not to be links scan, and the nodes that links walk back over to
	// an emphasis marker before them ("*" then "[*a](b)" many times). The
	// budget is the slack plus a multiple of the paragraph's length. A "]"
	// whose work would overrun it is text, and so is every later one of the
	// paragraph that would cost anything. The scan of a link that parses
	// costs nothing: the link consumes what it scanned.
	linkScanPerByte, linkScanSlack int
	// tableCellsPerByte and tableCellSlack bound the cells of a table
	// (rows times columns, short rows included, as goldmark pads them) by
	// the length of its source. A paragraph that would make a bigger table
	// stays a paragraph.
	tableCellsPerByte, tableCellSlack int
	// refChunkLines is how many lines of a paragraph the parser of link
	// reference definitions ("[a]: /url") sees at once: it copies the rest
	// of its paragraph for every definition it takes out.
	refChunkLines int

	// off passes everything to goldmark as it is, only counting the work:
	// the tests use it to show what the limits save.
	off bool
}

// markdownLimits are the limits of the renderer. They are far above what a
// written document reaches.
var markdownLimits = limits{
	nesting:              16,
	delimiters:           256,
	delimiterWorkPerByte: 64,
	delimiterRun:         32,
	brackets:             64,
	linkScanPerByte:      4,
	linkScanSlack:        16 << 10,
	tableCellsPerByte:    2,
	tableCellSlack:       4096,
	refChunkLines:        128,
}

// workKey holds, in goldmark's parser context, an *int that the wrappers
// add the work they let goldmark do to, in steps of about a byte read or
// a node visited: an upper bound that the tests hold to the input's size.
var workKey = parser.NewContextKey()

func addWork(pc parser.Context, n int) {
	if w, ok := pc.Get(workKey).(*int); ok {
		*w += n
	}
}

// nestingLimit wraps the parsers of block quotes and lists.
// Every level of nesting has goldmark try the starts of blocks on the rest
// of the line.
type nestingLimit struct {
	parser.BlockParser
	lim *limits
}

func (p nestingLimit) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, _ := reader.PeekLine()
	addWork(pc, len(line))
	if !p.lim.off && nesting(parent) >= p.lim.nesting {
		return nil, parser.NoChildren
	}
	return p.BlockParser.Open(parent, reader, pc)
}

// nesting counts the block quotes and list items n is in, n included. It
// walks at most limits.nesting levels of them, since no deeper ones are
// made.
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
	maxDelims  int
	opens      []int // the "[" open: where the last emphasis marker before each starts, or -1
	// backticks[n] is where the last run of n "`" of the block starts, plus
	// one (0: there is none); listed is whether they are listed yet.
	backticks []int
	listed    bool
}

var inlineBudgetKey = parser.NewContextKey()

func budgetOf(parent ast.Node, pc parser.Context, lim *limits) *inlineBudget {
	b, _ := pc.Get(inlineBudgetKey).(*inlineBudget)
	if b == nil {
		b = &inlineBudget{}
		pc.Set(inlineBudgetKey, b)
	}
	if b.block != parent {
		size := blockSize(parent)
		// The lists of the last block are cleared and kept: a document
		// has thousands of blocks.
		*b = inlineBudget{
			block:     parent,
			maxDelims: max(lim.delimiters, int(math.Sqrt(float64(2*lim.delimiterWorkPerByte*size)))),
			linkScan:  lim.linkScanSlack + lim.linkScanPerByte*size,
			opens:     b.opens[:0],
			backticks: b.backticks[:0],
		}
	}
	return b
}

// delimiterLimit wraps the parsers of emphasis and strikethrough. goldmark
// matches each closing run with the opening runs before it, one by one.
type delimiterLimit struct {
	parser.InlineParser
	lim *limits
}

func (p delimiterLimit) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	b := budgetOf(parent, pc, p.lim)
	addWork(pc, 1)
	if !p.lim.off && b.delimiters >= b.maxDelims {
		return nil
	}
	line, seg := block.PeekLine()
	run := 0
	for run < len(line) && line[run] == line[0] {
		run++
	}
	if !p.lim.off && run > p.lim.delimiterRun {
		block.Advance(run)
		return ast.NewTextSegment(seg.WithStop(seg.Start + run))
	}
	n := p.InlineParser.Parse(parent, block, pc)
	if n != nil {
		addWork(pc, b.delimiters)
		b.delimiters++
	}
	return n
}

// linkLimit wraps the parser of links and images.
type linkLimit struct {
	parser.InlineParser
	lim *limits
}

func (p linkLimit) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	b := budgetOf(parent, pc, p.lim)
	addWork(pc, 1)
	if line[0] != ']' {
		if !p.lim.off && len(b.opens) >= p.lim.brackets {
			return nil
		}
		bottom := -1
		if d := pc.LastDelimiter(); d != nil {
			bottom = d.Segment.Start
		}
		n := p.InlineParser.Parse(parent, block, pc)
		if n != nil {
			b.opens = append(b.opens, bottom)
		}
		return n
	}
	if len(b.opens) == 0 {
		return p.InlineParser.Parse(parent, block, pc) // no "[" to close
	}
	// goldmark takes the last open "[" off its list at every "]", link or
	// not, and looks for links in what follows it. A link it makes takes
	// the emphasis markers after its "[" in, walking back over every node
	// to the last marker before the "[" (at most one node a byte). "](" has
	// it scan a destination and a title.
	bottom := b.opens[len(b.opens)-1]
	walk := 0
	if d := pc.LastDelimiter(); d != nil && bottom >= 0 && d.Segment.Start > bottom {
		walk = seg.Start - bottom
	}
	budget := b.linkScan
	if p.lim.off {
		budget = math.MaxInt32
	}
	scan, ok := 0, walk <= budget
	if ok && len(line) >= 2 && line[1] == '(' {
		lines := parent.Lines()
		end := lines.At(lines.Len() - 1)
		scan, ok = inlineLinkCost(block.Source()[:end.Stop], seg.Start+2, budget-walk)
	}
	if !ok {
		addWork(pc, len(b.opens)+scan)
		// Spent: every later "]" of the block that would cost anything is
		// text, so that none scans up to the rest of the budget again.
		b.linkScan = 0
		return nil
	}
	addWork(pc, len(b.opens)+walk+scan)
	b.opens = b.opens[:len(b.opens)-1]
	n := p.InlineParser.Parse(parent, block, pc)
	if n == nil {
		b.linkScan -= scan
	} else {
		b.linkScan -= walk
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

// inlineLinkCost returns how many bytes of src (which ends where the block
// does) goldmark may read to parse
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
		return limit - start, false
	}
	return i - start, true
}

// codeSpanLimit wraps the parser of code spans. goldmark looks for the
// closing run of backticks up to the end of the block, and when there is
// none the opening run is text: runs of one backtick, then two, then
// three, and so on, cost the square of their length. The runs of a block are listed once, so an opening run without
// a closing one is known at once.
type codeSpanLimit struct {
	parser.InlineParser
	lim *limits
}

func (p codeSpanLimit) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	n := 0
	for n < len(line) && line[n] == '`' {
		n++
	}
	b := budgetOf(parent, pc, p.lim)
	if !b.listed {
		b.backticks = backtickRuns(b.backticks, parent, block.Source())
		b.listed = true
		addWork(pc, blockSize(parent))
	}
	addWork(pc, n)
	if n < len(b.backticks) && b.backticks[n]-1 > seg.Start {
		return p.InlineParser.Parse(parent, block, pc)
	}
	if p.lim.off {
		lines := parent.Lines()
		end := lines.At(lines.Len() - 1)
		addWork(pc, end.Stop-seg.Start)
		return p.InlineParser.Parse(parent, block, pc)
	}
	block.Advance(n)
	return ast.NewTextSegment(seg.WithStop(seg.Start + n))
}

// blockSize is the length of the lines of a block.
func blockSize(block ast.Node) int {
	size := 0
	lines := block.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		size += seg.Len()
	}
	return size
}

// backtickRuns lists the runs of backticks in the lines of a block in
// runs (emptied first): runs[n] is where the last run of n backticks
// starts, plus one, or 0 when there is none. It is as long as the longest
// run, at most the block's length.
func backtickRuns(runs []int, block ast.Node, src []byte) []int {
	runs = runs[:0]
	lines := block.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		line := seg.Value(src)
		for j := 0; j < len(line); {
			if line[j] != '`' {
				k := bytes.IndexByte(line[j:], '`')
				if k < 0 {
					break
				}
				j += k
			}
			k := j
			for k < len(line) && line[k] == '`' {
				k++
			}
			for len(runs) <= k-j {
				runs = append(runs, 0)
			}
			runs[k-j] = seg.Start + j + 1
			j = k
		}
	}
	return runs
}

// tableLimit wraps the transformer that turns paragraphs into tables.
type tableLimit struct {
	parser.ParagraphTransformer
	lim *limits
}

func (t tableLimit) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	lines := node.Lines()
	addWork(pc, lines.Len())
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		cols := delimiterColumns(seg.Value(src))
		if cols == 0 {
			continue
		}
		rows := lines.Len() - i + 1
		if !t.lim.off && rows*cols > t.lim.tableCellSlack+t.lim.tableCellsPerByte*blockSize(node) {
			return
		}
		addWork(pc, rows*cols)
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
type escapedPipes struct{ lim *limits }

func (e escapedPipes) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	if !bytes.Contains(src, []byte(`\|`)) {
		return // no escaped pipe anywhere: nothing to do, and no tree to walk
	}
	inCell := false
	texts, pipes := 0, 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.Kind() {
		case extast.KindTableCell:
			inCell = entering
		case ast.KindCodeSpan:
			if entering && inCell {
				t, p := unescapePipes(n, src, !e.lim.off)
				texts += t
				pipes += p
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	if e.lim.off {
		addWork(pc, texts*pipes)
		extension.NewTableASTTransformer().Transform(doc, reader, pc)
		return
	}
	addWork(pc, texts+pipes)
}

// unescapePipes splits the texts of a code span around the backslash of
// each "\|", when split is true; it returns how many texts and escaped
// pipes it saw.
func unescapePipes(span ast.Node, src []byte, split bool) (texts, pipes int) {
	for c := span.FirstChild(); c != nil; {
		next := c.NextSibling()
		t, ok := c.(*ast.Text)
		if !ok {
			c = next
			continue
		}
		texts++
		seg := t.Segment
		var n ast.Node = t
		for i := seg.Start; i < seg.Stop; i++ {
			if src[i] != '\\' || i+1 >= len(src) || src[i+1] != '|' {
				continue
			}
			pipes++
			if split {
				cur := n.(*ast.Text).Segment
				n1 := ast.NewRawTextSegment(cur.WithStop(i))
				n2 := ast.NewRawTextSegment(cur.WithStart(i + 1))
				span.InsertAfter(span, n, n1)
				span.InsertAfter(span, n1, n2)
				span.RemoveChild(span, n)
				n = n2
			}
			i++
		}
		c = next
	}
	return texts, pipes
}

// refLimit wraps the parser of link reference definitions ("[a]: /url"),
// which copies the rest of its paragraph for each definition it takes out
// of it. A paragraph of many lines is given to it limits.refChunkLines at a
// time, from its start, as long as it finds definitions. A definition
// longer than a chunk (a title spanning more lines) is text there.
type refLimit struct {
	parser.ParagraphTransformer
	lim *limits
}

func (t refLimit) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if t.lim.off || lines.Len() <= t.lim.refChunkLines {
		before := lines.Len()
		t.ParagraphTransformer.Transform(node, reader, pc)
		addWork(pc, before*(1+before-node.Lines().Len()))
		return
	}
	all := append([]text.Segment(nil), lines.Sliced(0, lines.Len())...)
	parent := node.Parent()
	i := 0
	for i < len(all) {
		n := min(t.lim.refChunkLines, len(all)-i)
		chunk := ast.NewParagraph()
		chunk.Lines().AppendAll(all[i : i+n])
		chunk.SetBlankPreviousLines(i == 0 && node.HasBlankPreviousLines())
		parent.InsertBefore(parent, node, chunk)
		t.ParagraphTransformer.Transform(chunk, reader, pc)
		left := chunk.Lines().Len()
		addWork(pc, n*(1+n-left))
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
