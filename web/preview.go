package web

import (
	"net/http"
	"slices"
	"strings"

	"quire"
	"quire/documents"
)

// handlePreview renders the content of the document form the way the
// document page renders it (package render, the same function), for the
// live preview beside the editor (static/preview.js). It answers the
// rendered HTML alone, as a fragment: text/html, sanitised like the page.
//
// It is a form POST like the others: same-origin only (checkUnsafe), bounded
// by the body limit (413 past it) and the renderer's own bounds (the
// highlighting budget), for signed-in users whose role may view documents:
// a follower of a live document (who may not write it) sees the preview of
// the live text too. It reads no document, so it shows nothing the person
// did not send. It does not go through the render cache, so that drafts
// typed a key at a time do not push documents out of it.
func handlePreview(s *server) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelView); err != nil {
			return err
		}
		if err := parseForm(r); err != nil {
			return err
		}
		contentType := r.PostForm.Get("content_type")
		if !slices.Contains(quire.ContentTypes, contentType) {
			return &quire.Error{Code: quire.EVALIDATION, Message: "The format to preview is not one of " + strings.Join(quire.ContentTypes, ", ") + ".",
				Fields: map[string]string{"content_type": "must be one of " + strings.Join(quire.ContentTypes, ", ")}}
		}
		// As readDocForm: the browser's CRLF is stored as LF.
		content := strings.ReplaceAll(r.PostForm.Get("content"), "\r\n", "\n")
		body, err := s.bodies.RenderNew(r.Context(), contentType, content)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(body))
		return nil
	}
}
