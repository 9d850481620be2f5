package render

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMentionsRenderAsNames(t *testing.T) {
	t.Parallel()
	const id = "0b5e7a7e-3f0a-4c55-9d0e-6a1f2b3c4d5e"
	for _, tc := range []struct{ name, src, want string }{
		{"a mention is the person's name", "Ask [@Ada Lovelace](mention:" + id + ") first.",
			`<p>Ask <span class="mention">@Ada Lovelace</span> first.</p>` + "\n"},
		{"markup in the name is kept", "[@*Ada*](mention:" + id + ")",
			`<p><span class="mention">@<em>Ada</em></span></p>` + "\n"},
		{"a mention: link without an id is no mention, and not a link", "[@Ada](mention:ada)",
			`<p>@Ada</p>` + "\n"},
		{"a web link stays a link", "[@Ada](https://example.com/ada)",
			`<p><a href="https://example.com/ada" rel="nofollow noreferrer">@Ada</a></p>` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render(t, tc.src)); diff != "" {
				t.Errorf("HTML (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("many mentions cost in proportion to their number", func(t *testing.T) {
		one := "[@Ada](mention:" + id + ") "
		w1, o1, _ := markdownWork(markdown, strings.Repeat(one, 200))
		w4, o4, _ := markdownWork(markdown, strings.Repeat(one, 800))
		if w4 > 5*w1+1024 || o4 > 5*o1+1024 {
			t.Errorf("work %d and %d bytes of HTML for 200 mentions, %d and %d for 800", w1, o1, w4, o4)
		}
	})
	t.Run("in HTML content a mention: link keeps only its text", func(t *testing.T) {
		got, err := Content(context.Background(), "html", `<p><a href="mention:`+id+`" class="mention">@Ada</a></p>`)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(`<p>@Ada</p>`, string(got)); diff != "" {
			t.Errorf("HTML (-want +got):\n%s", diff)
		}
	})
}
