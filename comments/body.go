package comments

import (
	"context"

	"quire/render"
)

// BodyHTML is a comment's body rendered as the document page shows it:
// Markdown through the documents' renderer and sanitiser (package render),
// in time linear in its length. The API answers it as body_html; the
// pages show it.
func BodyHTML(ctx context.Context, body string) (string, error) {
	if body == "" {
		return "", nil
	}
	html, err := render.Content(ctx, "markdown", body)
	return string(html), err
}
