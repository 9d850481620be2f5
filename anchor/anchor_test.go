package anchor_test

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"quire/anchor"
	"quire/render"
)

// documents are contents with the reading text they must have.
var documents = []struct {
	name, contentType, content, want string
}{
	{"markdown headings without their § links", "markdown",
		"# Install\n\nRun it.\n\n## Then\n\nUse it.\n", "Install Run it. Then Use it."},
	{"a long document's table of contents is not text", "markdown",
		"Intro.\n\n# Setup\n\n## Linux & *macOS*\n\n# Use\n", "Intro. Setup Linux & macOS Use"},
	{"emphasis across words joins its neighbours", "markdown",
		"Some *emphasis across words*, **strong**, ~~struck~~ and x*y*z.\n", "Some emphasis across words, strong, struck and xyz."},
	{"links, code spans, images and autolinks", "markdown",
		"A [link](https://example.com \"title\") and `code` and ![alt text](/i.png) and <https://example.org>.\n",
		"A link and code and and https://example.org."},
	{"lists, nested, and task lists", "markdown",
		"- one\n- two\n  - three\n1. first\n2. second\n\n- [x] done\n- [ ] to do\n", "one two three first second done to do"},
	{"tables, cell by cell", "markdown",
		"| Name | Value |\n| :--- | ---: |\n| a | `1` |\n| b **c** | 2 |\n", "Name Value a 1 b c 2"},
	{"highlighted code reads as written, white space collapsed", "markdown",
		"```go\nfunc main() {\n\tfmt.Println(\"hi\")  // say\n}\n```\n\nAfter.\n", `func main() { fmt.Println("hi") // say } After.`},
	{"plain code blocks and indented code", "markdown",
		"```\n<b>not bold</b>\n```\n\n    indented\n    code\n", "<b>not bold</b> indented code"},
	{"block quotes, breaks and rules", "markdown",
		"> quoted\n> more\n\nline one  \nline two\\\nline three\n\n---\n\nend\n", "quoted more line one line two line three end"},
	{"raw HTML in Markdown is left out", "markdown",
		"Text <span>inline</span> and <script>alert(1)</script>.\n\n<div>block</div>\n", "Text inline and alert(1)."},
	{"entities are decoded", "markdown", "A &amp; B &lt;c&gt; &copy;\n", "A & B <c> ©"},
	{"an empty document", "markdown", "", ""},
	{"HTML: inline elements join, blocks and breaks separate", "html",
		"<p>a<em>b</em>c</p><div>d</div>e<br>f<hr>g<span>h</span><section><p>i</p></section>", "abc d e f gh i"},
	{"HTML: table cells and rows", "html",
		"<table><caption>Cap</caption><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>", "Cap A B 1 2"},
	{"HTML: no-break spaces and other white space collapse", "html",
		"<p>a&nbsp;&nbsp;b\u3000c\u2009d\u0085e</p>", "a b c d e"},
	{"HTML: what the sanitiser drops is not text", "html",
		"<p>kept</p><script>gone()</script><style>p{}</style><img src=x alt=\"no alt\"><p onclick=\"x()\">on</p>", "kept on"},
	{"HTML: class anchor on a link and toc on details are navigation", "html",
		"<h1>T<a class=\"anchor\" href=\"#t\">§</a></h1><details class=\"toc\"><summary>S</summary><p>in</p></details><p>after</p>", "T after"},
	{"HTML: a NUL is dropped, as a browser drops it", "html", "<p>a\x00b</p>", "ab"},
	{"HTML: headings and lists", "html",
		"<h1>One</h1><ul><li>a</li><li>b<ol><li>c</li></ol></li></ul>", "One a b c"},
	{"plain text keeps its words, not its layout", "plain",
		"  first line\n\n\tsecond   line <b>\n", "first line second line <b>"},
	{"multi-byte text", "markdown",
		"# Größe ändern\n\n日本語の テキスト — ✓ emoji 🎉 here\n", "Größe ändern 日本語の テキスト — ✓ emoji 🎉 here"},
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, d := range documents {
		t.Run(d.name, func(t *testing.T) {
			if got := anchor.Text(d.contentType, d.content); got != d.want {
				t.Errorf("Text(%q, %q)\n got %q\nwant %q", d.contentType, d.content, got, d.want)
			}
		})
	}
}

// domText is the reading text as the page's script computes it: a walk of
// the DOM the browser builds from the rendered (highlighted) HTML.
func domText(t *testing.T, rendered string) string {
	t.Helper()
	nodes, err := html.ParseFragment(strings.NewReader(rendered), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]bool{}
	for _, b := range strings.Fields("p h1 h2 h3 h4 h5 h6 ul ol li dl dt dd pre blockquote table caption thead tbody tfoot tr th td div section article aside nav header footer main address figure figcaption details summary dialog fieldset legend hgroup menu dir br hr") {
		blocks[b] = true
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			class := ""
			for _, a := range n.Attr {
				if a.Key == "class" {
					class = " " + a.Val + " "
				}
			}
			if (n.Data == "a" && strings.Contains(class, " anchor ")) || (n.Data == "details" && strings.Contains(class, " toc ")) {
				b.WriteString(" ")
				return
			}
			if blocks[n.Data] {
				b.WriteString(" ")
				defer b.WriteString(" ")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// TestTextIsWhatTheBrowserReads holds Text, one pass of the tokenizer over
// a render without highlighting, to a walk of the DOM that a browser builds
// from the page's render, with highlighting.
func TestTextIsWhatTheBrowserReads(t *testing.T) {
	t.Parallel()
	extra := []struct{ contentType, content string }{
		{"html", "<p>unclosed <b>bold <i>both</b> italic</i><p>next<li>item<div>in</div>"},
		{"html", "<ul><li>a<li>b</ul><dl><dt>t<dd>d</dl><table><tr><td>x<td>y</table>"},
		{"html", "<p><a class=\"anchor\" href=\"#a\">§<a href=\"#b\">link</a> after</p><details class=\"toc\"><details>in</details>still in</details>out"},
		{"markdown", "```python\ndef f(x):\n    return x  # c\n```\n\n```yaml\na: [1, 2]\n```\n"},
		{"markdown", strings.Repeat("> ", 20) + "deep\n\n" + strings.Repeat("- ", 20) + "list\n"},
	}
	for _, d := range documents {
		extra = append(extra, struct{ contentType, content string }{d.contentType, d.content})
	}
	for _, d := range extra {
		page, err := render.Content(context.Background(), d.contentType, d.content)
		if err != nil {
			t.Fatal(err)
		}
		// strings.Fields splits at the same white space as unicode.IsSpace.
		if got, want := anchor.Text(d.contentType, d.content), domText(t, string(page)); got != want {
			t.Errorf("%s %.40q:\n tokenizer %q\n       DOM %q", d.contentType, d.content, got, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain words", "plain words"},
		{"  leading and trailing  ", " leading and trailing "},
		{"a\n\n\tb", "a b"},
		{"the ", "the "},
		{" the", " the"},
		{"a\u00a0\u00a0b\u3000c\u2028d\u0085e", "a b c d e"},
		{"日本語\u3000 テキスト", "日本語 テキスト"},
		{"bad \xff\xfe  utf-8", "bad \xff\xfe utf-8"},
		{"\x00kept  \x00too", "\x00kept \x00too"}, // only Text drops what a browser drops
	} {
		if got := anchor.Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	t.Run("a quote of white space holds no text", func(t *testing.T) {
		if got := anchor.Normalize(" \n\u00a0"); strings.TrimSpace(got) != "" {
			t.Errorf("%q", got)
		}
	})
	t.Run("it is what Text makes of the same text", func(t *testing.T) {
		for _, d := range documents {
			if d.contentType != "plain" {
				continue
			}
			if got, want := strings.TrimSpace(anchor.Normalize(d.content)), anchor.Text("plain", d.content); got != want {
				t.Errorf("%q vs %q", got, want)
			}
		}
	})
}

const story = "the cat sat on the mat. the cat ran. Größe ändern — 日本語 テキスト 日本語. aaa"

func TestFind(t *testing.T) {
	t.Parallel()
	at := func(sub string, n int) int {
		i := -1
		for range n {
			i += 1 + strings.Index(story[i+1:], sub)
		}
		return i
	}
	for _, tc := range []struct {
		name                  string
		quote, prefix, suffix string
		want                  int
	}{
		{"the suffix picks the second of two", "cat", "the ", " ran", at("cat", 2)},
		{"the prefix and suffix pick the first of two", "cat", "the ", " sat", at("cat", 1)},
		{"a prefix alone picks", "the", "mat. ", "", at("the", 3)},
		{"the only occurrence when the context changed", "sat", "a dog ", " under", at("sat", 1)},
		{"the only occurrence without context", "mat", "", "", at("mat", 1)},
		{"gone", "dog", "the ", " sat", -1},
		{"several and no context matches", "cat", "a ", " slept", -1},
		{"several and no context", "the", "", "", -1},
		{"the passage with its context occurs twice", "cat", "the ", "", -1},
		{"overlapping occurrences are several", "aa", "", "", -1},
		{"at the very start", "the cat sat", "", " on", 0},
		{"at the very end", "aaa", ". ", "", len(story) - 3},
		{"the whole text", story, "", "", 0},
		{"multi-byte, by byte offset", "日本語", "— ", " テ", at("日本語", 1)},
		{"multi-byte, the second", "日本語", "テキスト ", ".", at("日本語", 2)},
		{"multi-byte, only once", "ändern", "Grösse ", "", at("ändern", 1)},
		{"an empty quote", "", "the ", "cat", -1},
		{"longer than the text", story + "!", "", "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Once with the first lookups, which scan the text, once with
			// the suffix array.
			scanned := anchor.NewIndex(story)
			indexed := anchor.NewIndex(story)
			for range anchor.ScanLookups {
				indexed.Find("not in the story", "", "")
			}
			for _, x := range []*anchor.Index{scanned, indexed} {
				if got := x.Find(tc.quote, tc.prefix, tc.suffix); got != tc.want {
					t.Errorf("Find(%q, %q, %q) = %d, want %d (suffix array %v)", tc.quote, tc.prefix, tc.suffix, got, tc.want, x.Work().Indexed > 0)
				}
			}
			if w := indexed.Work(); w.Lookups > anchor.ScanLookups && w.Indexed != len(story) {
				t.Errorf("the suffix array was not used: %+v", w)
			}
		})
	}
}

// reanchorCase is a reading text of about size bytes with n anchors taken
// from it as a browser takes them: a quote of a few words with 64 bytes of
// text before and after. Half the quotes occur more than once.
func reanchorCase(size, n int) (text string, quotes [][3]string, want []int) {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Paragraph %d says that the service restarts — ünïcödé %d. ", i, i*7919%1000)
	}
	text = b.String()
	for i := range n {
		at := (i*len(text)/n + 17)
		for !utf8.RuneStart(text[at]) {
			at++
		}
		end := at + 24
		if i%2 == 0 {
			// "the service restarts" occurs in every paragraph.
			at = strings.Index(text[at:], "the service") + at
			end = at + len("the service restarts")
		}
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
		p := max(0, at-64)
		for !utf8.RuneStart(text[p]) {
			p++
		}
		s := min(len(text), end+64)
		for s < len(text) && !utf8.RuneStart(text[s]) {
			s++
		}
		quotes = append(quotes, [3]string{text[at:end], text[p:at], text[end:s]})
		want = append(want, at)
	}
	return text, quotes, want
}

// reanchorWork finds every anchor of a case again and returns the work the
// index did: the bytes scanned and indexed, and the bytes of needles looked
// up times the steps of a binary search in the suffix array.
func reanchorWork(t *testing.T, size, n int) int {
	text, quotes, want := reanchorCase(size, n)
	x := anchor.NewIndex(text)
	for i, q := range quotes {
		if got := x.Find(q[0], q[1], q[2]); got != want[i] {
			t.Fatalf("anchor %d (%q) found at %d, want %d", i, q[0], got, want[i])
		}
	}
	w := x.Work()
	if w.Lookups > 2*n {
		t.Errorf("%d lookups for %d anchors", w.Lookups, n)
	}
	return w.Scanned + w.Indexed + w.Needles*bits.Len(uint(len(text)))
}

// TestReanchorWorkGrowsLinearly re-anchors 250 threads on 128 KiB and
// 1,000 on 512 KiB (2,000 threads on a 1 MiB document scaled down): four
// times the text and the threads may cost four times the work (and a
// logarithm), not sixteen.
func TestReanchorWorkGrowsLinearly(t *testing.T) {
	t.Parallel()
	w1 := reanchorWork(t, 128<<10, 250)
	w4 := reanchorWork(t, 512<<10, 1000)
	if w4 > 5*w1 {
		t.Errorf("work %d for 250 threads on 128 KiB, %d for 1,000 on 512 KiB: %.1f times", w1, w4, float64(w4)/float64(w1))
	}
}

// BenchmarkReanchor finds 2,000 threads again in a 1 MiB document: the
// index and the lookups alone, and with the reading text of the content.
//
//	go test ./anchor -run '^$' -bench Reanchor -benchmem
func BenchmarkReanchor(b *testing.B) {
	text, quotes, _ := reanchorCase(1<<20, 2000)
	find := func() {
		x := anchor.NewIndex(text)
		for _, q := range quotes {
			x.Find(q[0], q[1], q[2])
		}
	}
	b.Run("index and find", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			find()
		}
	})
	b.Run("reading text, index and find", func(b *testing.B) {
		// The text as Markdown paragraphs: Text of it is text.
		content := strings.ReplaceAll(text, ". Paragraph", ".\n\nParagraph")
		if got := anchor.Text("markdown", content); got != strings.TrimSpace(text) {
			b.Fatalf("the reading text differs: %.100q", got)
		}
		b.ReportAllocs()
		for b.Loop() {
			anchor.Text("markdown", content)
			find()
		}
	})
}
