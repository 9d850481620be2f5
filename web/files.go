package web

import (
	"context"
	"net/http"

	"quire"
	"quire/attachments"
)

// Files of documents (product.md section 13). A document's page lists its
// files and lets writers delete them; the editor uploads pasted and
// dropped images through the API (static/attach.js), with the page's own
// session cookie, and links them at the cursor.

// fileView is one file on a document's page.
type fileView struct {
	ID, Name, URL, Size, ContentType string
	// Inline files (images) open in the browser; the others download.
	Inline bool
}

// files lists the document's files for its page; on is false when the
// server keeps no files.
func (s *server) files(ctx context.Context, a quire.Actor, docID string) (on bool, out []fileView, err error) {
	if s.cfg.Files == nil {
		return false, nil, nil
	}
	list, err := s.cfg.Files.List(ctx, a, docID)
	if err != nil {
		return false, nil, err
	}
	for i := range list {
		at := &list[i]
		out = append(out, fileView{ID: at.ID, Name: at.Name, URL: attachments.URL(at.ID),
			Size: attachments.FormatSize(at.Size), ContentType: at.ContentType, Inline: attachments.Inline(at)})
	}
	return true, out, nil
}

// handleFileDelete deletes one file of the document and goes back to its
// page. A file of another document is not found here.
func handleFileDelete(f *attachments.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		docID := r.PathValue("id")
		at, err := f.Get(r.Context(), a, r.PathValue("file"))
		if err != nil {
			return err
		}
		if at.DocumentID != docID {
			return quire.Errorf(quire.ENOTFOUND, "Attachment not found")
		}
		if err := f.Delete(r.Context(), a, at.ID); err != nil {
			return err
		}
		http.Redirect(w, r, "/documents/"+docID+"?m=file-deleted#files", http.StatusSeeOther)
		return nil
	}
}
