package quire

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLinkedDocuments(t *testing.T) {
	const (
		a = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
		b = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
		c = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5d"
	)
	pub := "https://Docs.Example.com/wiki/"
	for _, tc := range []struct {
		name, typ, content string
		want               []string
	}{
		{"a Markdown inline link", "markdown", "See [the plan](/documents/" + a + ").", []string{a}},
		{"with a title, a fragment and a query", "markdown", "[x](/documents/" + a + "#part \"T\") [y](/documents/" + b + "?v=1)", []string{a, b}},
		{"a reference definition", "markdown", "[x][1]\n\n[1]: /documents/" + a + "\n", []string{a}},
		{"an autolink under the public URL", "markdown", "<https://docs.example.com/wiki/documents/" + a + ">", []string{a}},
		{"an absolute link elsewhere is not one", "markdown", "[x](https://other.example/wiki/documents/" + a + ") [y](https://docs.example.com/documents/" + b + ")", nil},
		{"an HTML href, quoted either way or not", "html", `<a href="/documents/` + a + `">a</a><a HREF='/documents/` + b + `'>b</a><a href=/documents/` + c + `>c</a>`, []string{a, b, c}},
		{"each once, in order", "markdown", "[b](/documents/" + b + ") [a](/documents/" + a + ") [b](/documents/" + b + ")", []string{b, a}},
		{"a longer path or id is not a document link", "markdown", "[x](/documents/" + a + "/versions) [y](/documents/" + a + "0) [z](/x/documents/" + b + ")", nil},
		{"bare text is no link", "markdown", "/documents/" + a, nil},
		{"plain text links to nothing", "plain", "[x](/documents/" + a + ")", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, LinkedDocuments(tc.typ, tc.content, pub)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	t.Run("without a public URL only relative links count", func(t *testing.T) {
		got := LinkedDocuments("markdown", "[x](https://docs.example.com/wiki/documents/"+a+") [y](/documents/"+b+")", "")
		if diff := cmp.Diff([]string{b}, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
	t.Run("at most MaxLinks are kept", func(t *testing.T) {
		var sb strings.Builder
		for i := range MaxLinks + 5 {
			id := []byte(a)
			for j, k := len(id)-1, i; j >= len(id)-3; j, k = j-1, k/16 {
				id[j] = "0123456789abcdef"[k%16]
			}
			sb.WriteString("[x](/documents/" + string(id) + ")\n")
		}
		if got := LinkedDocuments("markdown", sb.String(), ""); len(got) != MaxLinks {
			t.Errorf("%d links", len(got))
		}
	})
}

// TestLinkedDocumentsLineByLine checks that looking only at the lines
// holding "/documents/" finds what the expression finds in the whole
// content, on random texts built of the pieces links are made of.
func TestLinkedDocumentsLineByLine(t *testing.T) {
	const a, b = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
	pieces := []string{"](", "]: ", "<", "href=", "HREF = '", "\"", "'", ">", ")", "(", "[", "]", " ", "\t", "\n", "\r\n",
		"/documents/", "/documents/" + a, "/documents/" + b, a, "https://docs.example.com/wiki", "x", "é", "?v=1", "#p", "/"}
	whole := func(content, pub string) []string {
		base := linkBase(pub)
		var ids []string
		seen := map[string]bool{}
		for _, m := range linkRE.FindAllStringSubmatchIndex(content, -1) {
			prefix, id := content[m[2]:m[3]], content[m[4]:m[5]]
			if (prefix == "" || (base != "" && linkBase(prefix) == base)) && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return ids
	}
	r := rand.New(rand.NewPCG(3, 4))
	found := 0
	for range 8000 {
		var sb strings.Builder
		for range r.IntN(24) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		content := sb.String()
		want := whole(content, "https://docs.example.com/wiki")
		found += len(want)
		if diff := cmp.Diff(want, LinkedDocuments("markdown", content, "https://docs.example.com/wiki")); diff != "" {
			t.Fatalf("%q: (-whole +by line)\n%s", content, diff)
		}
	}
	if found < 300 {
		t.Fatalf("only %d links in the random texts: the test checks little", found)
	}
}
