package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

// repeat returns s repeated to n bytes.
func repeat(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n]
}

// pathological are inputs on which goldmark's work, left alone, grows
// faster than their length (quadratic), and others that probe the same
// parsers.
var pathological = []struct {
	name      string
	make      func(n int) string
	quadratic bool
}{
	{"block quotes in block quotes", func(n int) string { return strings.Repeat(">", n) + " x" }, true},
	{"lists in block quotes", func(n int) string { return repeat("> - ", n) }, true},
	{"ordered lists in lists", func(n int) string { return repeat("1. ", n) }, true},
	{"bullet lists in lists", func(n int) string { return repeat("+ ", n) }, true},
	{"indented list items", func(n int) string { return strings.Repeat(" ", n) + "- x" }, false},
	{"a deeper list item on each line", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(strings.Repeat(" ", i) + "- x\n")
		}
		return b.String()
	}, false},
	{"emphasis closers that match no opener", func(n int) string { return repeat("*a_", n) }, true},
	{"emphasis inside links", func(n int) string { return "*" + repeat("[*a](b) ", n) }, true},
	{"emphasis inside links after a word", func(n int) string { return "*x " + repeat("[a *b*](c) ", n) }, true},
	{"emphasis runs", func(n int) string { return repeat("*", n) }, false},
	{"emphasis openers", func(n int) string { return repeat("_a", n) }, false},
	{"a long run of emphasis around a word", func(n int) string {
		return strings.Repeat("*", n/2) + "a" + strings.Repeat("*", n/2)
	}, false},
	{"emphasis in emphasis", func(n int) string {
		return strings.Repeat("*a **a ", n/14) + "b" + strings.Repeat(" a** a*", n/14)
	}, false},
	{"strikethrough", func(n int) string { return repeat("~a", n) }, false},
	{"unclosed link destinations", func(n int) string { return repeat("[a](", n) }, true},
	{"unclosed empty link destinations", func(n int) string { return repeat("[](", n) }, true},
	{"unclosed link titles", func(n int) string { return repeat("[a](x (", n) }, true},
	{"unclosed angle destinations", func(n int) string { return repeat("[a](<b", n) }, false},
	{"link openers", func(n int) string { return repeat("[", n) }, false},
	{"image openers", func(n int) string { return repeat("![", n) }, false},
	{"nested brackets with a reference", func(n int) string {
		return "[a]: /u\n\n" + strings.Repeat("[", n/4) + strings.Repeat("a]", n/4)
	}, true},
	{"nested links", func(n int) string { return strings.Repeat("[", n/5) + "a" + strings.Repeat("](b)", n/5) }, false},
	{"nested images", func(n int) string { return strings.Repeat("![", n/6) + "a" + strings.Repeat("](b)", n/6) }, false},
	{"code spans without a closing run", func(n int) string {
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			b.WriteString("e" + strings.Repeat("`", i))
		}
		return b.String()
	}, true},
	{"backticks", func(n int) string { return repeat("`a", n) }, false},
	{"autolinks", func(n int) string { return repeat("<http://a", n) }, false},
	{"raw HTML", func(n int) string { return repeat("<a ", n) }, false},
	{"a wide table of short rows", func(n int) string {
		cols := n / 10
		var b strings.Builder
		b.WriteString(strings.Repeat("|a", cols) + "|\n" + strings.Repeat("|-", cols) + "|\n")
		for b.Len() < n {
			b.WriteString("x\n")
		}
		return b.String()
	}, true},
	{"escaped pipes in code in a table", func(n int) string { return "|a|\n|-|\n" + repeat("|`\\|`|\n", n) }, true},
	{"a table of many rows", func(n int) string {
		var b strings.Builder
		b.WriteString(strings.Repeat("|a", 50) + "|\n" + strings.Repeat("|-", 50) + "|\n")
		for b.Len() < n {
			b.WriteString(strings.Repeat("|b", 50) + "|\n")
		}
		return b.String()
	}, false},
	{"link reference definitions in one paragraph", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "[r%d]: /u\n", i)
		}
		return b.String()
	}, true},
}

// markdownWork parses and renders src, returning the work the limits let
// goldmark do, the length of the HTML and the depth of the syntax tree
// (goldmark's renderer recurses that deep).
func markdownWork(md goldmark.Markdown, src string) (work, out, depth int) {
	pc := parser.NewContext()
	pc.Set(workKey, &work)
	doc := md.Parser().Parse(text.NewReader([]byte(src)), parser.WithContext(pc))
	var buf bytes.Buffer
	if err := md.Renderer().Render(&buf, []byte(src), doc); err != nil {
		panic(err)
	}
	return work, buf.Len(), treeDepth(doc)
}

func treeDepth(n ast.Node) int {
	depth := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		depth = max(depth, treeDepth(c))
	}
	return depth + 1
}

// maxTreeDepth is above what the limits allow for an input of n bytes:
// 16 block quotes and list items (two nodes each), 64 links and images, 16
// elements from one run of 32 emphasis markers, and an element for each
// two of the runs a paragraph may have, sqrt(128*n).
func maxTreeDepth(n int) int {
	return 256 + int(math.Sqrt(float64(32*n)))
}

// TestMarkdownWorkGrowsLinearly holds the renderer's work, as counted by
// the limits, and its output to the length of the input: four times the
// input may cost four times as much, not sixteen. Without the limits, the
// same count grows with the square of the input, which shows that it sees
// the work that the limits save.
func TestMarkdownWorkGrowsLinearly(t *testing.T) {
	t.Parallel()
	unlimited := newMarkdown(&limits{off: true}, true)
	for _, tc := range pathological {
		t.Run(tc.name+" cost in proportion to their length", func(t *testing.T) {
			const n = 8 << 10
			w1, o1, _ := markdownWork(markdown, tc.make(n))
			w4, o4, d4 := markdownWork(markdown, tc.make(4*n))
			if w4 > 5*w1+1024 || w4 > 128*4*n {
				t.Errorf("work %d for %d bytes, %d for %d bytes", w1, n, w4, 4*n)
			}
			if d4 > maxTreeDepth(4*n) {
				t.Errorf("the tree is %d deep", d4)
			}
			if o4 > 5*o1+1024 {
				t.Errorf("%d bytes of HTML for %d bytes, %d for %d bytes", o1, n, o4, 4*n)
			}
		})
		if !tc.quadratic {
			continue
		}
		t.Run(tc.name+" cost the square of their length without the limits", func(t *testing.T) {
			const n = 256
			w1, _, _ := markdownWork(unlimited, tc.make(n))
			w4, _, _ := markdownWork(unlimited, tc.make(4*n))
			if w4 < 6*w1 {
				t.Errorf("work %d for %d bytes, %d for %d bytes", w1, n, w4, 4*n)
			}
		})
	}
}

// written are documents as people write them: the limits must leave their
// rendering as goldmark with GFM renders them.
var written = map[string]string{
	"headings and paragraphs":     "# Title\n\nSome *emphasis*, **strong**, ***both***, _under_ and ~~struck~~ text.\n\n## Section\n\nText with `code` and a [link](https://example.com \"title\").\n\nSetext\n======\n",
	"lists three deep":            "- one\n  - two\n    - three\n    - three b\n  - two b\n- one b\n\n1. first\n2. second\n   1. nested\n      - deeper\n",
	"block quotes":                "> quoted\n> > nested\n> > > three\n>\n> - a list in a quote\n> - [ ] a task\n",
	"code":                        "```go\nfunc main() { fmt.Println(\"*not emphasis*\") }\n```\n\n    indented code\n\nInline `` code with ` backtick ``.\n",
	"tables":                      "| Name | Value | Note |\n| :--- | ---: | :---: |\n| a | 1 | `x \\| y` |\n| b | 2 |\n| c | 3 | **bold** |\n",
	"task lists":                  "- [x] done\n- [ ] to do\n  - [ ] nested\n",
	"links and references":        "See [the docs][docs], [docs][], [Docs] and ![an image](/img.png \"Image\").\n\n[docs]: https://example.com/docs \"The docs\"\n\nAutolinks: <https://example.com>, https://example.org and www.example.net.\n",
	"html in markdown":            "<div>raw <b>html</b></div>\n\nText <span onclick=\"x()\">inline</span> and <script>alert(1)</script>.\n",
	"many links in one paragraph": strings.Repeat("[link](https://example.com/a_(b)) and *emphasis* and `code`\n", 200),
	"many definitions in one paragraph": func() string {
		var b strings.Builder
		for i := range 300 {
			fmt.Fprintf(&b, "[r%d]: https://example.com/%d \"Title %d\"\n", i, i, i)
		}
		b.WriteString("\n[r0], [r150] and [r299].\n")
		return b.String()
	}(),
	"a long table":                  "| a | b |\n|---|---|\n" + strings.Repeat("| `x` | *y* |\n", 500),
	"quotes and lists sixteen deep": strings.Repeat("> ", 8) + strings.Repeat("- ", 8) + "x\n",
}

func TestWrittenMarkdownRendersAsBefore(t *testing.T) {
	t.Parallel()
	// The reference is goldmark with GFM and what reading.go adds,
	// without the limits; both highlight untimed.
	stock := goldmark.New(goldmark.WithExtensions(extension.GFM, reading{}))
	for name, src := range written {
		t.Run(name+" renders as goldmark with GFM renders it", func(t *testing.T) {
			var want bytes.Buffer
			pc := parser.NewContext()
			pc.Set(highlightRunKey, &highlightRun{bounds: untimed, left: untimed.totalBytes})
			if err := stock.Convert([]byte(src), &want, parser.WithContext(pc)); err != nil {
				t.Fatal(err)
			}
			got := render(t, src)
			if diff := cmp.Diff(string(sanitizer.SanitizeBytes(want.Bytes())), got); diff != "" {
				t.Errorf("HTML (-before +now):\n%s", diff)
			}
		})
	}
}

func TestRenderStopsWithItsRequest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Content(ctx, "markdown", "# Title"); !errors.Is(err, context.Canceled) {
		t.Errorf("render of a cancelled request: %v, want context.Canceled", err)
	}
}

func TestRenderCache(t *testing.T) {
	t.Parallel()
	c := NewCache(1000, 300, 0)
	ctx := context.Background()
	t.Run("a render is kept and found again", func(t *testing.T) {
		a, _ := c.Render(ctx, "markdown", "# A")
		b, _ := c.Render(ctx, "markdown", "# A")
		if a != b || c.len() != 1 {
			t.Errorf("renders %q and %q, %d kept", a, b, c.len())
		}
	})
	t.Run("the content type is part of the key", func(t *testing.T) {
		h, _ := c.Render(ctx, "text", "# A")
		if !strings.Contains(string(h), `<pre class="plain">`) {
			t.Errorf("text rendered as %q", h)
		}
	})
	t.Run("a render too big is not kept", func(t *testing.T) {
		before := c.len()
		c.Render(ctx, "text", strings.Repeat("x", 400))
		if c.len() != before {
			t.Errorf("%d kept, want %d", c.len(), before)
		}
	})
	t.Run("the bytes kept stay within the bound", func(t *testing.T) {
		for i := range 50 {
			c.Render(ctx, "markdown", fmt.Sprintf("paragraph %d", i))
		}
		if c.size > 1000 {
			t.Errorf("%d bytes kept", c.size)
		}
		if _, ok := c.entries[renderKey("markdown", "paragraph 49")]; !ok {
			t.Error("the newest render was dropped")
		}
	})
}

// pathologicalSeeds are the shapes of the pathological inputs, small.
func pathologicalSeeds() []string {
	var seeds []string
	for _, tc := range pathological {
		seeds = append(seeds, tc.make(2<<10), tc.make(128))
	}
	for _, src := range written {
		seeds = append(seeds, src)
	}
	return seeds
}

// FuzzRenderContent renders Markdown: it must not panic, must leave
// nothing in the HTML that runs, and must stay within work and output in
// proportion to the input.
func FuzzRenderContent(f *testing.F) {
	for _, s := range pathologicalSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		work, _, depth := markdownWork(markdown, src)
		if work > 512*len(src)+4096 {
			t.Errorf("work %d for %d bytes", work, len(src))
		}
		if depth > maxTreeDepth(len(src)) {
			t.Errorf("the tree is %d deep", depth)
		}
		out, err := Content(context.Background(), "markdown", src)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 64*len(src)+1024 {
			t.Errorf("%d bytes of HTML for %d bytes", len(out), len(src))
		}
		checkSanitised(t, string(out))
	})
}

// checkSanitised fails when html has an element or attribute that runs
// script.
func checkSanitised(t *testing.T, s string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			switch string(name) {
			case "script", "style", "iframe", "object", "embed", "form":
				t.Fatalf("HTML has <%s>: %q", name, s)
			}
			for more {
				var key, val []byte
				key, val, more = z.TagAttr()
				k := strings.ToLower(string(key))
				v := strings.ToLower(strings.TrimSpace(string(val)))
				if strings.HasPrefix(k, "on") || k == "style" ||
					((k == "href" || k == "src") && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:"))) {
					t.Fatalf("HTML has %s=%q: %q", key, val, s)
				}
			}
		}
	}
}

// BenchmarkRender renders 150 KB of ">", the document of issue 13.
func BenchmarkRender(b *testing.B) {
	src := strings.Repeat(">", 150_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Content(ctx, "markdown", src); err != nil {
			b.Fatal(err)
		}
	}
}
