package quire

import (
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
