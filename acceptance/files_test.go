package acceptance

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"quire/documents"
)

// uploadAs attaches data to the document through the API with the
// browser's session cookie, as the editor's script does, and returns the
// attachment's id and url.
func (b *browser) upload(docID, name string, data []byte, sameOrigin bool) (status int, id, fileURL string) {
	b.e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", name)
	w.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", b.e.server.URL+"/api/documentation/documents/"+docID+"/attachments", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if sameOrigin {
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	} else {
		req.Header.Set("Sec-Fetch-Site", "cross-site")
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Attachment struct{ ID, URL string } `json:"attachment"`
	}
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Attachment.ID, out.Attachment.URL
}

// A PNG of 1x1 pixel.
var onePixelPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func TestDocumentFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	e.user("vi@example.com", "viewer", "Engineering")
	doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Diagrams"), Visibility: documents.Some("department")})
	other := e.document(ed, documents.DocumentInput{Title: documents.Some("Other")})
	b := e.signedIn("ed@example.com")
	viewer := e.signedIn("vi@example.com")

	var picID, picURL, notesID string
	t.Run("the web session uploads through the API from the page's origin, not from another", func(t *testing.T) {
		var status int
		if status, picID, picURL = b.upload(doc.ID, "shot.png", onePixelPNG, true); status != http.StatusCreated {
			t.Fatalf("upload with the session cookie: %d", status)
		}
		if status, notesID, _ = b.upload(doc.ID, "notes.txt", bytes.Repeat([]byte("n"), 1536), true); status != http.StatusCreated {
			t.Fatalf("upload: %d", status)
		}
		if status, _, _ := b.upload(doc.ID, "evil.png", onePixelPNG, false); status != http.StatusForbidden {
			t.Errorf("cross-site upload with the cookie: %d, want 403", status)
		}
	})

	t.Run("the document page lists the files with their size and link, and Delete for writers only", func(t *testing.T) {
		p := b.get("/documents/" + doc.ID)
		if got := p.text("file-" + picID); !strings.Contains(got, "shot.png") || !strings.Contains(got, "70 B") {
			t.Errorf("image entry %q", got)
		}
		if got := p.text("file-" + notesID); !strings.Contains(got, "notes.txt") || !strings.Contains(got, "1.5 KiB") {
			t.Errorf("text entry %q", got)
		}
		links := p.links("file-list")
		if len(links) != 2 || links[0] != picURL {
			t.Errorf("links %q, want the image's %q first", links, picURL)
		}
		if n := findAll(p.byID("files"), func(n *html.Node) bool { return n.Data == "form" }); len(n) != 2 {
			t.Errorf("%d delete forms for a writer, want 2", len(n))
		}
		vp := viewer.get("/documents/" + doc.ID)
		if !strings.Contains(vp.text("files"), "shot.png") {
			t.Errorf("a viewer does not see the files: %q", vp.text("files"))
		}
		if n := findAll(vp.byID("files"), func(n *html.Node) bool { return n.Data == "form" }); len(n) != 0 {
			t.Errorf("%d delete forms for a viewer, want none", len(n))
		}
		if got := b.get("/documents/" + other.ID).text("no-files"); !strings.Contains(got, "No files yet") {
			t.Errorf("a document without files says %q", got)
		}
	})

	t.Run("an image linked in the content is shown, and the page's CSP lets it load", func(t *testing.T) {
		if _, err := e.docs.Update(t.Context(), e.actor(ed), doc.ID, documents.DocumentInput{
			Content: documents.Some("See ![the shot](" + picURL + ") and [notes](" + picURL + ").")}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		p := b.get("/documents/" + doc.ID)
		img := find(p.byID("doc-body"), func(n *html.Node) bool { return n.Data == "img" })
		if img == nil || attr(img, "src") != picURL || attr(img, "alt") != "the shot" {
			t.Fatalf("rendered body %s: want <img src=%q alt=\"the shot\">", innerHTML(p.byID("doc-body")), picURL)
		}
		if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self'") {
			t.Errorf("CSP %q does not let the page load its own images", csp)
		}
		res := b.do("GET", picURL, nil, nil)
		if res.Status != http.StatusOK || res.Body != string(onePixelPNG) || res.Header.Get("Content-Type") != "image/png" {
			t.Errorf("the image with the session cookie: %d %q", res.Status, res.Header.Get("Content-Type"))
		}
	})

	t.Run("the editor of a document offers the upload; a new document's does not", func(t *testing.T) {
		p := b.get("/documents/" + doc.ID + "/edit")
		box := p.byID("attach")
		if box == nil || attr(box, "data-upload-url") != "/api/documentation/documents/"+doc.ID+"/attachments" {
			t.Fatalf("no upload box on the editor")
		}
		if !strings.Contains(p.Body, `/static/attach.js?v=`) {
			t.Errorf("the editor does not load attach.js")
		}
		if b.get("/documents/new").byID("attach") != nil {
			t.Errorf("the new-document form offers uploads to a document that does not exist yet")
		}
	})

	t.Run("a viewer cannot delete; a writer deletes a file of this document only", func(t *testing.T) {
		if p := viewer.post("/documents/"+doc.ID+"/files/"+notesID+"/delete", url.Values{}); p.Status != http.StatusForbidden {
			t.Errorf("viewer delete: %d, want 403", p.Status)
		}
		if p := b.post("/documents/"+other.ID+"/files/"+notesID+"/delete", url.Values{}); p.Status != http.StatusNotFound {
			t.Errorf("delete through another document: %d, want 404", p.Status)
		}
		p := b.post("/documents/"+doc.ID+"/files/"+notesID+"/delete", url.Values{})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/documents/"+doc.ID+"?m=file-deleted#files" {
			t.Fatalf("delete: %d to %q", p.Status, p.Header.Get("Location"))
		}
		page := b.get("/documents/" + doc.ID + "?m=file-deleted")
		if page.byID("file-"+notesID) != nil || !strings.Contains(page.Body, "File deleted.") {
			t.Errorf("after the delete the page still lists the file, or says nothing")
		}
	})
}
