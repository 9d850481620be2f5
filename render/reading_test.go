package render

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// untimed are the bounds of highlighting in bytes, with all the time in
// the world: what a test sees highlighted must not depend on how busy the
// machine is (TestHighlightingIsBounded tests the time budget).
var untimed = highlightBounds{blockBytes: highlightLimits.blockBytes, totalBytes: highlightLimits.totalBytes, budget: time.Hour}

// render is Content of Markdown with untimed bounds, failing the
// test on an error.
func render(t testing.TB, src string) string {
	t.Helper()
	out, _, err := renderBounded(context.Background(), "markdown", src, untimed)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// elements returns every element of s, parsed as a fragment of a page.
func elements(t testing.TB, s string) []*html.Node {
	t.Helper()
	nodes, err := html.ParseFragment(strings.NewReader(s), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		t.Fatal(err)
	}
	var out []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return out
}

func attrOf(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// highlighted counts the spans of highlighted code in s.
func highlighted(t testing.TB, s string) int {
	n := 0
	for _, e := range elements(t, s) {
		if c, _ := attrOf(e, "class"); e.Data == "span" && strings.HasPrefix(c, "hl-") {
			n++
		}
	}
	return n
}

func TestCodeIsHighlightedWithClassesOnly(t *testing.T) {
	t.Parallel()
	const src = "```go\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name + \"\\n\"\n}\n```\n\n" +
		"```python\ndef greet(name):\n    return f\"hello {name}\"  # a comment\n```\n\n" +
		"```yaml\nkey: value\nlist: [1, 2]\n```\n"
	out := render(t, src)
	t.Run("each language's tokens get classes", func(t *testing.T) {
		for _, want := range []string{
			`<span class="hl-c">// Greet says hello.</span>`,
			`<span class="hl-k">func</span> <span class="hl-nf">Greet</span>`,
			`<span class="hl-kt">string</span>`,
			`<span class="hl-k">def</span> <span class="hl-nf">greet</span>`,
			`<span class="hl-c"># a comment</span>`,
			`<span class="hl-m">1</span>`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("no %s in\n%s", want, out)
			}
		}
	})
	t.Run("no style attribute and no class outside the list", func(t *testing.T) {
		for _, e := range elements(t, out) {
			if _, ok := attrOf(e, "style"); ok {
				t.Errorf("<%s> has a style attribute", e.Data)
			}
			if c, ok := attrOf(e, "class"); ok && !highlightClassPattern.MatchString(c) {
				t.Errorf("<%s class=%q>", e.Data, c)
			}
		}
	})
	t.Run("the code reads as written", func(t *testing.T) {
		var code []string
		for _, e := range elements(t, out) {
			if e.Data == "code" {
				var b strings.Builder
				var walk func(n *html.Node)
				walk = func(n *html.Node) {
					if n.Type == html.TextNode {
						b.WriteString(n.Data)
					}
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						walk(c)
					}
				}
				walk(e)
				code = append(code, b.String())
			}
		}
		want := []string{
			"// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name + \"\\n\"\n}\n",
			"def greet(name):\n    return f\"hello {name}\"  # a comment\n",
			"key: value\nlist: [1, 2]\n",
		}
		if diff := cmp.Diff(want, code); diff != "" {
			t.Errorf("code (-want +got):\n%s", diff)
		}
	})
	t.Run("a block without a language, or with one not on the list, is plain", func(t *testing.T) {
		for _, lang := range []string{"", "makefile", "nosuchlanguage", strings.Repeat("go", 1000)} {
			out := render(t, "```"+lang+"\nfunc main() {}\n```\n")
			if highlighted(t, out) != 0 || !strings.Contains(out, "<pre><code>func main() {}\n</code></pre>") {
				t.Errorf("language %.20q: %s", lang, out)
			}
		}
	})
	t.Run("markup in code is escaped, highlighted or not", func(t *testing.T) {
		for _, lang := range []string{"html", "go", ""} {
			out := render(t, "```"+lang+"\n<script>alert(1)</script>\n```\n")
			if strings.Contains(out, "<script") || !strings.Contains(out, "&lt;") {
				t.Errorf("%s: %s", lang, out)
			}
		}
	})
	t.Run("classes written by hand in HTML are dropped unless they are highlighting's", func(t *testing.T) {
		out, err := Content(context.Background(), "html",
			`<span class="hl-k">kept</span><span class="evil">x</span><span class="hl-k evil">y</span><p class="anchor">z</p><a class="toc" href="/">w</a>`)
		if err != nil {
			t.Fatal(err)
		}
		want := `<span class="hl-k">kept</span><span>x</span><span>y</span><p>z</p><a href="/" rel="nofollow noreferrer">w</a>`
		if diff := cmp.Diff(want, string(out)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestHighlightingIsBounded(t *testing.T) {
	t.Parallel()
	block := func(n int) string {
		line := "x := f(1) // c\n"
		return "```go\n" + repeat(line, n-n%len(line)) + "```\n\n"
	}
	// The rules in bytes are tested on small bounds: highlighting the
	// production limits' megabytes through chroma under -race took
	// minutes and proved no more ("the production limits are wired"
	// checks that renders get highlightLimits).
	small := highlightBounds{blockBytes: 1 << 10, totalBytes: 4 << 10, budget: time.Hour}
	renderSmall := func(t *testing.T, src string) string {
		t.Helper()
		out, _, err := renderBounded(context.Background(), "markdown", src, small)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	t.Run("a block over the limit is plain", func(t *testing.T) {
		if n := highlighted(t, renderSmall(t, block(small.blockBytes))); n == 0 {
			t.Error("a block at the limit is not highlighted")
		}
		if n := highlighted(t, renderSmall(t, block(small.blockBytes+16))); n != 0 {
			t.Errorf("a block over the limit has %d highlighted spans", n)
		}
	})
	t.Run("blocks past the document's total are plain", func(t *testing.T) {
		per := 256
		fit := small.totalBytes / (per - per%15)
		// Counted by block, not by span: chroma gives each of its
		// patterns 250 ms to match, and on a machine busy enough a token
		// may be left plain (an error token) inside a highlighted block.
		out := renderSmall(t, strings.Repeat(block(per), 3*fit))
		blocks := strings.Split(out, "<pre")[1:]
		if len(blocks) != 3*fit {
			t.Fatalf("%d blocks rendered, want %d", len(blocks), 3*fit)
		}
		for i, b := range blocks {
			if n := highlighted(t, "<pre"+b); (n > 0) != (i < fit) {
				t.Errorf("block %d of %d has %d highlighted spans; the first %d fit the total", i+1, 3*fit, n, fit)
			}
		}
	})
	t.Run("the production limits are wired", func(t *testing.T) {
		if highlightLimits.blockBytes <= small.blockBytes || highlightLimits.totalBytes < 4*highlightLimits.blockBytes || highlightLimits.budget <= 0 {
			t.Fatalf("highlightLimits %+v", highlightLimits)
		}
		if c := NewCache(CacheBytes, CacheEntry, 0); c.highlight != highlightLimits {
			t.Errorf("a server's render cache highlights within %+v, not highlightLimits %+v", c.highlight, highlightLimits)
		}
		// A block just over the production limit is plain, with all the
		// time in the world (within the budget, a busy machine would leave
		// it plain anyway). Not the other side: under -race chroma takes
		// seconds on the limit's 16 KiB; the small bounds above test it.
		if n := highlighted(t, render(t, block(highlightLimits.blockBytes+16))); n != 0 {
			t.Errorf("a block over highlightLimits has %d highlighted spans", n)
		}
	})
	t.Run("a document out of time is plain from there on, and not complete", func(t *testing.T) {
		src := block(64) + block(64)
		out, complete, err := renderBounded(context.Background(), "markdown", src, highlightBounds{blockBytes: 1 << 10, totalBytes: 1 << 10, budget: 0})
		if err != nil {
			t.Fatal(err)
		}
		if n := highlighted(t, string(out)); n != 0 || complete {
			t.Errorf("%d spans, complete %v; want 0, false", n, complete)
		}
		if !strings.Contains(string(out), "<pre><code>x := f(1) // c\n") {
			t.Errorf("the blocks are not shown plain: %s", out)
		}
		_, complete, _ = renderBounded(context.Background(), "markdown", src, untimed)
		if !complete {
			t.Error("a render in time is not complete")
		}
	})
	t.Run("time that runs out within a block leaves that block plain", func(t *testing.T) {
		// A clock that moves past the deadline after a few tokens.
		start, calls := time.Now(), 0
		run := &highlightRun{bounds: untimed, now: func() time.Time {
			calls++
			if calls > 5 {
				return start.Add(2 * untimed.budget)
			}
			return start
		}}
		code := repeat("x := f(1) // c\n", 1<<10)
		if out, ok := highlight(&codeHighlight{lexer: lexerFor("go"), run: run}, code); ok || !run.cut {
			t.Errorf("highlighted %d bytes, cut %v: %.200s", len(out), run.cut, out)
		}
		if calls > 7 {
			t.Errorf("the clock was read %d times after the time was up", calls-6)
		}
	})
}

func TestHeadings(t *testing.T) {
	t.Parallel()
	t.Run("every level moves one down, h6 stays h6", func(t *testing.T) {
		out := render(t, "# one\n\n## two\n\n### three\n\n#### four\n\n##### five\n\n###### six\n\nSetext\n======\n")
		var got []string
		for _, e := range elements(t, out) {
			if len(e.Data) == 2 && e.Data[0] == 'h' {
				got = append(got, e.Data)
			}
		}
		if diff := cmp.Diff([]string{"h2", "h3", "h4", "h5", "h6", "h6", "h2"}, got); diff != "" {
			t.Errorf("heading elements (-want +got):\n%s", diff)
		}
	})
	t.Run("each heading has a unique id and a § link to it", func(t *testing.T) {
		out := render(t, "# Install the *server*\n\n## Install the server\n\n## Install the server-1\n\n## Install the server\n\n## Ünïcode — only\n\n## 日本語\n\n## `code` & <b>html</b>\n")
		var ids, anchors []string
		for _, e := range elements(t, out) {
			if id, ok := attrOf(e, "id"); ok && e.Data[0] == 'h' {
				ids = append(ids, id)
			}
			if c, _ := attrOf(e, "class"); c == "anchor" {
				href, _ := attrOf(e, "href")
				anchors = append(anchors, href)
			}
		}
		want := []string{"h-install-the-server", "h-install-the-server-1", "h-install-the-server-1-1", "h-install-the-server-2", "h-n-code-only", "h-section", "h-code-html"}
		if diff := cmp.Diff(want, ids); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
		for i := range want {
			want[i] = "#" + want[i]
		}
		if diff := cmp.Diff(want, anchors); diff != "" {
			t.Errorf("§ links (-want +got):\n%s", diff)
		}
	})
	t.Run("n equal headings get ids in n steps", func(t *testing.T) {
		g := headingIDs{seen: map[string]bool{}, next: map[string]int{}}
		for range 1000 {
			g.make("Same")
		}
		if g.probes != 999 || len(g.seen) != 1000 {
			t.Errorf("%d ids tried for %d ids", g.probes, len(g.seen))
		}
	})
	t.Run("an id is never longer than the bound", func(t *testing.T) {
		id := (&headingIDs{seen: map[string]bool{}, next: map[string]int{}}).make(strings.Repeat("word ", 1000))
		if len(id) > len(headingIDPrefix)+maxSlug {
			t.Errorf("id of %d bytes", len(id))
		}
	})
}

func TestHTMLHeadingsMoveDownToo(t *testing.T) {
	t.Parallel()
	out, err := Content(context.Background(), "html", `<H1 id="a">One</H1><h2>Two</h2><h5>Five</h5><h6>Six</h6><p>h1 <code>&lt;h1&gt;</code></p><header>x</header>`)
	if err != nil {
		t.Fatal(err)
	}
	want := `<h2 id="a">One</h2><h3>Two</h3><h6>Five</h6><h6>Six</h6><p>h1 <code>&lt;h1&gt;</code></p>x`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTableOfContents(t *testing.T) {
	t.Parallel()
	t.Run("two headings have none", func(t *testing.T) {
		if out := render(t, "# a\n\n## b\n"); strings.Contains(out, "toc") {
			t.Errorf("%s", out)
		}
	})
	t.Run("three headings or more have one first, nested by level", func(t *testing.T) {
		out := render(t, "Intro.\n\n# Setup\n\n## Linux & *macOS*\n\n### Deeper\n\n## Windows\n\n# Use\n")
		want := `<details class="toc" open=""><summary>Contents</summary>` + "\n" +
			`<ol><li><a href="#h-setup" rel="nofollow noreferrer">Setup</a>` +
			`<ol><li><a href="#h-linux-macos" rel="nofollow noreferrer">Linux &amp; macOS</a>` +
			`<ol><li><a href="#h-deeper" rel="nofollow noreferrer">Deeper</a></li>` + "\n" +
			`</ol></li>` + "\n" +
			`<li><a href="#h-windows" rel="nofollow noreferrer">Windows</a></li>` + "\n" +
			`</ol></li>` + "\n" +
			`<li><a href="#h-use" rel="nofollow noreferrer">Use</a></li></ol>` + "\n" +
			`</details>` + "\n"
		if !strings.HasPrefix(out, want) {
			t.Errorf("contents (-want +got):\n%s", cmp.Diff(want, out[:min(len(out), len(want)+200)]))
		}
	})
	t.Run("a document that starts deeper than it goes on still nests", func(t *testing.T) {
		out := render(t, "### c\n\n# a\n\n## b\n")
		// Two levels of list with an empty item lead to c, one more holds b.
		lists := strings.Count(out, "<ol>")
		if lists != strings.Count(out, "</ol>") || lists != 4 {
			t.Errorf("%d lists opened, %d closed: %s", lists, strings.Count(out, "</ol>"), out)
		}
	})
	t.Run("its entries are bounded", func(t *testing.T) {
		out := render(t, strings.Repeat("# a\n\n", 1000))
		toc, _, _ := strings.Cut(out, "</details>")
		if n := strings.Count(toc, "<li>"); n != tocMaxEntries {
			t.Errorf("%d entries", n)
		}
	})
}

func TestTaskListsAndTables(t *testing.T) {
	t.Parallel()
	out := render(t, "- [x] done\n- [ ] to do\n\n| Name | Value |\n| :--- | ---: |\n| a | `1` |\n")
	for _, want := range []string{
		`<li><input checked="" disabled="" type="checkbox"> done</li>`,
		`<li><input disabled="" type="checkbox"> to do</li>`,
		"<table>\n<thead>\n<tr>\n<th>Name</th>",
		"<td><code>1</code></td>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	for _, e := range elements(t, out) {
		if e.Data == "input" {
			if _, ok := attrOf(e, "disabled"); !ok {
				t.Error("a task's check box is not disabled")
			}
		}
	}
}

func TestIncompleteRendersAreRenderedAgainLater(t *testing.T) {
	t.Parallel()
	c := NewCache(1<<20, 1<<20, 0)
	const src = "```go\nx := 1\n```\n"
	key := renderKey("markdown", src)
	c.highlight.budget = 0
	out, err := c.Render(context.Background(), "markdown", src)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "hl-") || c.len() != 1 {
		t.Fatalf("a render out of time: %s, %d kept", out, c.len())
	}
	c.highlight = untimed
	if again, _ := c.Render(context.Background(), "markdown", src); again != out {
		t.Errorf("a view within %v renders again: %s", retryIncomplete, again)
	}
	c.entries[key].Value.(*renderEntry).retryAt = time.Now().Add(-time.Second)
	later, _ := c.Render(context.Background(), "markdown", src)
	if !strings.Contains(string(later), `<span class="hl-m">1</span>`) {
		t.Errorf("a view after %v is not rendered again: %s", retryIncomplete, later)
	}
	if e := c.entries[key].Value.(*renderEntry); e.html != later || !e.retryAt.IsZero() || c.size != len(later)+len(key) {
		t.Errorf("the complete render did not replace the other: kept %q, retry at %v, size %d", e.html, e.retryAt, c.size)
	}
}

// codeDocument is n bytes of Markdown: paragraphs and code blocks of
// lang, each block of block bytes of line.
func codeDocument(n, block int, lang, line string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Step %d: run this.\n\n```%s\n%s```\n\n", i, lang, repeat(line, block-block%len(line)))
	}
	return b.String()[:n]
}

// mixedDocument is n bytes of Markdown as documentation is written:
// sections with headings, paragraphs with emphasis, code spans, links and
// autolinks, lists, a table and a quote, without code blocks.
func mixedDocument(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nThe *service* reads its **configuration** from `config.yaml` when it starts; "+
			"see [the guide](/documents/guide-%d \"Guide\") and https://example.com/docs/%d for the details. "+
			"It's written for teams that keep their \"how we work\" pages in one place.\n\n"+
			"- Install the `quire` binary\n- Run `quire migrate`, then **start** it\n  - with `--demo` for a [demo](/demo)\n\n"+
			"1. First step\n2. Second step, with _emphasis_ and ~~an old name~~\n\n"+
			"| Option | Default | Meaning |\n|---|:-:|---|\n| `addr` | `:8080` | where it *listens* |\n| `db` | `quire.db` | the [SQLite](https://sqlite.org) file |\n\n"+
			"> Back up the database **before** an upgrade.\n\n", i, i, i)
	}
	return b.String()[:n]
}

// BenchmarkRenderCode renders documents at the 2 MiB body limit, to
// compare with BenchmarkRender: code in blocks of 4 KiB and 16 KiB,
// Markdown without code, and blocks made to be slow for their lexer; each
// highlighted within the limits, and plain (all blocks, for comparison).
// "spans" is how many highlighted spans the last render had: what the
// time budget let through.
//
//	go test ./render -run '^$' -bench 'Render' -benchtime 5x -count 3 -benchmem
func BenchmarkRenderCode(b *testing.B) {
	const size = 2 << 20
	goLine := "if err := run(ctx, args); err != nil { return fmt.Errorf(\"run %s: %w\", name, err) } // why\n"
	cases := []struct{ name, src string }{
		{"go blocks", codeDocument(size, 4<<10, "go", goLine)},
		{"prose", repeat("Some *emphasis*, a [link](/documents/x) and `code` in a paragraph.\n\n", size)},
		{"mixed", mixedDocument(size)},
		{"java blocks of tab lines", codeDocument(size, 4<<10, "java", "\t\n")},
		{"go blocks of 16 KiB", codeDocument(size, 16<<10, "go", goLine)},
		{"rust raw strings", codeDocument(size, 16<<10, "rust", `r#"`)},
	}
	plain := highlightLimits
	plain.budget = 0 // out of time before the first block: every block plain
	for _, tc := range cases {
		for _, mode := range []struct {
			name   string
			bounds highlightBounds
		}{{"highlighted", highlightLimits}, {"plain", plain}} {
			b.Run(tc.name+"/"+mode.name, func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				b.SetBytes(int64(len(tc.src)))
				spans := 0
				for b.Loop() {
					out, _, err := renderBounded(ctx, "markdown", tc.src, mode.bounds)
					if err != nil {
						b.Fatal(err)
					}
					spans = strings.Count(string(out), `<span class="hl-`)
				}
				b.ReportMetric(float64(spans), "spans")
			})
		}
	}
	b.Run("one java block of 1 KiB of tab lines without the time budget", func(b *testing.B) {
		// What the time budget saves: the bounds in bytes alone would let
		// a document have 128 such blocks.
		src := "```java\n" + strings.Repeat("\t\n", 512) + "```\n"
		bounds := highlightLimits
		bounds.budget = time.Hour
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			out, _, err := renderBounded(context.Background(), "markdown", src, bounds)
			if err != nil {
				b.Fatal(err)
			}
			if !strings.Contains(string(out), "<pre><code>\t\n") {
				b.Fatalf("not rendered: %.100s", out)
			}
		}
	})
}

// TestFencedCodeShapes adds code to the pathological shapes: the limits
// must keep them linear with highlighting too.
func TestFencedCodeShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(n int) string
	}{
		{"one huge go block", func(n int) string { return "```go\n" + repeat("x := 1\n", n) + "\n```\n" }},
		{"many small go blocks", func(n int) string { return repeat("```go\nx\n```\n", n) }},
		{"unclosed fences", func(n int) string { return repeat("```go\n", n) }},
		{"many headings", func(n int) string { return repeat("# a\n", n) }},
	} {
		t.Run(tc.name+" render in proportion to their length", func(t *testing.T) {
			const n = 8 << 10
			w1, o1, _ := markdownWork(markdown, tc.make(n))
			w4, o4, _ := markdownWork(markdown, tc.make(4*n))
			if w4 > 5*w1+1024 {
				t.Errorf("work %d for %d bytes, %d for %d bytes", w1, n, w4, 4*n)
			}
			if o4 > 5*o1+1024 {
				t.Errorf("%d bytes of HTML for %d bytes, %d for %d bytes", o1, n, o4, 4*n)
			}
			out := render(t, tc.make(4*n))
			if len(out) > 64*4*n {
				t.Errorf("%d bytes of HTML for %d bytes", len(out), 4*n)
			}
		})
	}
}

func TestWithoutHighlightingLeavesCodePlain(t *testing.T) {
	t.Parallel()
	const src = "# Title\n\n```go\nx := 1\n```\n"
	if n := highlighted(t, render(t, src)); n == 0 {
		t.Fatal("the code is not highlighted in the first place")
	}
	out, err := WithoutHighlighting(context.Background(), "markdown", src)
	if err != nil {
		t.Fatal(err)
	}
	want := `<h2 id="h-title">Title<a href="#h-title" title="Link to this section" class="anchor" rel="nofollow noreferrer">§</a></h2>` + "\n" +
		"<pre><code>x := 1\n</code></pre>\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
