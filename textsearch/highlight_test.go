package textsearch_test

import (
	"html"
	"math/rand/v2"
	"strings"
	"testing"

	"quire/textsearch"
)

func TestHighlight(t *testing.T) {
	long := strings.Repeat("filler words here ", 40)
	for _, tc := range []struct {
		name, search, title, summary, content string
		want                                  textsearch.Highlight
	}{
		{"marks words and prefixes, folded as the index folds them", "deploy cafe",
			"Deploying the Café", "", "How we <b>deploy</b> & roll back at the café.",
			textsearch.Highlight{Title: "<mark>Deploying</mark> the <mark>Café</mark>",
				Snippet: "How we &lt;b&gt;<mark>deploy</mark>&lt;/b&gt; &amp; roll back at the <mark>café</mark>."}},
		{"escapes markup and quotes, never strips it", "x",
			`<script>"a" 'b'</script>`, "", `<img src=x onerror="alert(1)">`,
			textsearch.Highlight{Title: "&lt;script&gt;&#34;a&#34; &#39;b&#39;&lt;/script&gt;",
				Snippet: "&lt;img src=<mark>x</mark> onerror=&#34;alert(1)&#34;&gt;"}},
		{"takes the snippet around the best match, with ellipses", "needle thread",
			"Title", "", long + "a needle and a thread " + long,
			textsearch.Highlight{Title: "Title"}},
		{"falls back to the summary when only it matches", "runbook",
			"Ops", "The runbook for oncall", "Nothing to see.",
			textsearch.Highlight{Title: "Ops", Snippet: "The <mark>runbook</mark> for oncall"}},
		{"starts the content when nothing in the text matches (a tag did)", "oncall",
			"Ops", "Summary", "Line one.\n\n  Line two.",
			textsearch.Highlight{Title: "Ops", Snippet: "Line one. Line two."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := textsearch.NewQuery(tc.search).Highlight(tc.title, tc.summary, tc.content)
			if tc.want.Snippet == "" && tc.want.Title == "Title" {
				if !strings.HasPrefix(got.Snippet, "… ") || !strings.HasSuffix(got.Snippet, " …") ||
					!strings.Contains(got.Snippet, "a <mark>needle</mark> and a <mark>thread</mark>") {
					t.Errorf("snippet %q", got.Snippet)
				}
				if n := len([]rune(strings.NewReplacer("<mark>", "", "</mark>", "", "… ", "", " …", "").Replace(got.Snippet))); n > textsearch.SnippetLength {
					t.Errorf("snippet of %d characters", n)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	if got := textsearch.Prefix("héllo", 2); got != "hé" {
		t.Errorf("Prefix = %q", got)
	}
	if got := textsearch.Prefix("hé", 5); got != "hé" {
		t.Errorf("Prefix = %q", got)
	}
}

// TestSnippetIsEscapedTextWithMarksOnly checks, on random text full of
// markup, that a snippet holds no markup but <mark>, that unescaped it is a
// piece of the text (white space collapsed), and that every marked word is
// one the search matches.
func TestSnippetIsEscapedTextWithMarksOnly(t *testing.T) {
	pieces := []string{"<", ">", "&", `"`, "'", "<mark>", "</mark>", "&amp;", " ", "\n\t", "deploy", "Déploy", "dep",
		"e\u0301", "日本", "🙂", "x", "release", "\u00a0", "<b>deploy</b>"}
	r := rand.New(rand.NewPCG(1, 2))
	q := textsearch.NewQuery("deploy release")
	for range 2000 {
		var b strings.Builder
		for range r.IntN(120) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		s, _ := q.Snippet(text)
		plain := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(s)
		if strings.ContainsAny(plain, "<>") {
			t.Fatalf("snippet of %q holds markup: %q", text, s)
		}
		plain = strings.TrimSuffix(strings.TrimPrefix(html.UnescapeString(plain), "… "), " …")
		if !strings.Contains(strings.Join(strings.Fields(text), " "), plain) {
			t.Fatalf("snippet %q of %q is not a piece of the text", plain, text)
		}
		for _, m := range strings.Split(s, "<mark>")[1:] {
			word, _, _ := strings.Cut(m, "</mark>")
			if w := textsearch.Words(html.UnescapeString(word)); len(w) != 1 || !(strings.HasPrefix(w[0], "deploy") || strings.HasPrefix(w[0], "release")) {
				t.Fatalf("marked %q in %q", word, s)
			}
		}
	}
}
