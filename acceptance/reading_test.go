package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"quire/documents"
	"quire/httpapi"
	"quire/web"
)

// fragmentHTML parses s as the children of a div and renders it back, so
// that it compares with innerHTML of a page's element.
func fragmentHTML(t *testing.T, s string) string {
	t.Helper()
	nodes, err := html.ParseFragment(strings.NewReader(s), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range nodes {
		html.Render(&b, n)
	}
	return b.String()
}

// readingContent exercises everything the renderer adds.
const readingContent = "Intro with a [link](/documents/x).\n\n# Setup\n\n## On Linux\n\n```go\nfunc main() { fmt.Println(\"hi\") } // greet\n```\n\n" +
	"# Tasks\n\n- [x] done\n- [ ] to do\n\n| a | b |\n|---|---|\n| 1 | `2` |\n\n<script>alert(1)</script>\n"

// untimedHighlighting gives highlighting all the time it needs, so that
// what a test sees highlighted does not depend on how busy the machine is.
func untimedHighlighting() envOption {
	return withHTTP(func(_ *httpapi.Config, wc *web.Config) { wc.HighlightBudget = time.Minute })
}

func TestPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, untimedHighlighting())
	editor, ed := e.signedInUser("ed@example.com", "editor", "Engineering")
	e.user("vi@example.com", "viewer", "Engineering")
	form := func(contentType, content string) url.Values {
		return url.Values{"content_type": {contentType}, "content": {content}}
	}

	for _, tc := range []struct{ name, contentType, content string }{
		{"Markdown with headings, code, tasks and a table", "markdown", readingContent},
		{"HTML", "html", `<h2>Title</h2><p onclick="x()">Hi <b>there</b></p><script>alert(1)</script>`},
		{"plain text", "plain", "<b>not bold</b>\nline two"},
	} {
		t.Run("the preview of "+tc.name+" is the document page's content", func(t *testing.T) {
			d := e.document(editor, documents.DocumentInput{Title: documents.Some(tc.name), ContentType: documents.Some(tc.contentType), Content: documents.Some(tc.content)})
			page := ed.get("/documents/" + d.ID)
			body := page.byID("doc-body")
			if body == nil {
				t.Fatalf("status %d: no #doc-body", page.Status)
			}
			p := ed.post("/preview", form(tc.contentType, tc.content))
			if p.Status != http.StatusOK || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("status %d, type %q: %s", p.Status, p.Header.Get("Content-Type"), p.Body)
			}
			if p.Header.Get("Content-Security-Policy") == "" || p.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("headers %v", p.Header)
			}
			if diff := cmp.Diff(innerHTML(body), fragmentHTML(t, p.Body)); diff != "" {
				t.Errorf("preview (-document page +preview):\n%s", diff)
			}
		})
	}
	t.Run("line breaks sent as CRLF preview as the saved content does", func(t *testing.T) {
		a := ed.post("/preview", form("plain", "one\r\ntwo"))
		b := ed.post("/preview", form("plain", "one\ntwo"))
		if a.Body != b.Body || a.Status != http.StatusOK {
			t.Errorf("%d %q, want %q", a.Status, a.Body, b.Body)
		}
	})
	t.Run("a format that is not one is refused", func(t *testing.T) {
		if p := ed.post("/preview", form("docx", "x")); p.Status != http.StatusBadRequest {
			t.Errorf("status %d", p.Status)
		}
	})
	t.Run("a body over the limit is refused", func(t *testing.T) {
		if p := ed.post("/preview", form("markdown", strings.Repeat("x", 2<<20))); p.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d", p.Status)
		}
	})
	t.Run("a cross-site request is refused", func(t *testing.T) {
		p := ed.do("POST", "/preview", form("markdown", "# x"), http.Header{"Sec-Fetch-Site": {"cross-site"}})
		if p.Status != http.StatusForbidden || strings.Contains(p.Body, `id="h-x"`) {
			t.Errorf("status %d", p.Status)
		}
	})
	t.Run("a reader who may only view documents is previewed too (the page of a live follower)", func(t *testing.T) {
		vi := e.signedIn("vi@example.com")
		if p := vi.post("/preview", form("markdown", "# x")); p.Status != http.StatusOK || !strings.Contains(p.Body, `id="h-x"`) {
			t.Errorf("status %d: %s", p.Status, p.Body)
		}
		if p := vi.post("/preview", form("markdown", strings.Repeat("x", 2<<20))); p.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("a body over the limit from a reader: status %d", p.Status)
		}
	})
	t.Run("without a session it is sent to sign in", func(t *testing.T) {
		p := e.browser().post("/preview", form("markdown", "# x"))
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/login" {
			t.Errorf("status %d, location %q", p.Status, p.Header.Get("Location"))
		}
	})
	t.Run("the editor and the new document form have the preview", func(t *testing.T) {
		d := e.document(editor, documents.DocumentInput{Title: documents.Some("Edited")})
		for _, path := range []string{"/documents/new", "/documents/" + d.ID + "/edit"} {
			p := ed.get(path)
			toggle, pane := p.byID("preview-toggle"), p.byID("preview-pane")
			if toggle == nil || pane == nil || attr(toggle, "aria-controls") != "preview-pane" || p.byID("preview-status") == nil {
				t.Errorf("%s: no preview button, pane or status", path)
				continue
			}
			if attr(p.byID("preview-status"), "aria-live") != "polite" || !hasAttr(pane, "hidden") || !hasAttr(toggle, "hidden") {
				t.Errorf("%s: the preview is not hidden until its script shows it, or its status is not live", path)
			}
			if !strings.Contains(p.Body, `<script src="/static/preview.js?v=`) {
				t.Errorf("%s: no preview script", path)
			}
		}
	})
}

func TestDocumentPagesRenderForReading(t *testing.T) {
	t.Parallel()
	e := newEnv(t, untimedHighlighting())
	editor, b := e.signedInUser("ed@example.com", "editor", "Engineering")
	target := e.document(editor, documents.DocumentInput{Title: documents.Some("The target")})
	d := e.document(editor, documents.DocumentInput{Title: documents.Some("Reading"), Content: documents.Some(readingContent +
		"\nSee [the target](/documents/" + target.ID + "), [by its full address](" + e.server.URL + "/documents/" + target.ID + "#part) and <" + e.server.URL + "/documents/" + target.ID + ">.\n")})

	for _, path := range []string{"/documents/" + d.ID, "/documents/" + d.ID + "/versions/1"} {
		p := b.get(path)
		body := p.byID("doc-body")
		if body == nil {
			t.Fatalf("%s: status %d, no #doc-body", path, p.Status)
		}
		t.Run(path+": headings, contents, code, tasks and a table", func(t *testing.T) {
			in := innerHTML(body)
			for _, want := range []string{
				`<details class="toc" open=""><summary>Contents</summary>`,
				`<h2 id="h-setup">Setup<a class="anchor" href="#h-setup"`,
				`<h3 id="h-on-linux">`,
				`<span class="hl-k">func</span> <span class="hl-nf">main</span>`,
				`<input checked="" disabled="" type="checkbox"/> done`,
				"<td><code>2</code></td>",
			} {
				if !strings.Contains(in, want) {
					t.Errorf("no %s in\n%s", want, in)
				}
			}
			if strings.Contains(in, "<script") || strings.Contains(in, "style=") {
				t.Errorf("a script or a style attribute: %s", in)
			}
			if !strings.Contains(p.Body, `<link rel="stylesheet" href="/static/highlight.css?v=`) {
				t.Error("no highlighting stylesheet")
			}
		})
		t.Run(path+": links to other documents lead to their page", func(t *testing.T) {
			var docLinks []string
			for _, href := range p.links("doc-body") {
				if strings.Contains(href, "/documents/"+target.ID) {
					docLinks = append(docLinks, href)
				}
			}
			want := []string{"/documents/" + target.ID, e.server.URL + "/documents/" + target.ID + "#part", e.server.URL + "/documents/" + target.ID}
			if diff := cmp.Diff(want, docLinks); diff != "" {
				t.Fatalf("links (-want +got):\n%s", diff)
			}
			for _, href := range docLinks {
				u, err := url.Parse(href)
				if err != nil {
					t.Fatal(err)
				}
				if got := b.get(u.Path); got.Status != http.StatusOK || got.text("doc-title") != "The target" {
					t.Errorf("%s: status %d, title %q", href, got.Status, got.text("doc-title"))
				}
			}
		})
	}
}

// h1s returns the text of every h1 of a page.
func (p *page) h1s() []string {
	return textsOf(p.Doc, tagged("h1"))
}

func TestOneH1PerPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin, ad := e.signedInUser("ad@example.com", "admin", "Engineering")
	e.user("ed@example.com", "editor", "Engineering")
	content := "# A heading one\n\nText.\n\n# Another\n\n## Two\n"
	d := e.document(admin, documents.DocumentInput{Title: documents.Some("Doc title"), Content: documents.Some(content)})
	h := e.document(admin, documents.DocumentInput{Title: documents.Some("HTML doc"), ContentType: documents.Some("html"), Content: documents.Some("<h1>Written as h1</h1><p>x</p>")})
	current := e.get(admin, d.ID)
	if _, err := e.docs.Update(context.Background(), e.actor(admin), d.ID, documents.DocumentInput{Content: documents.Some(content + "\nMore.\n")}, current.UpdatedAt); err != nil {
		t.Fatal(err)
	}
	folder, err := e.docs.CreateFolder(context.Background(), e.actor(admin), documents.FolderInput{Name: documents.Some("Guides")})
	if err != nil {
		t.Fatal(err)
	}
	trashed := e.document(admin, documents.DocumentInput{Title: documents.Some("Old")})
	if err := e.docs.Delete(context.Background(), e.actor(admin), trashed.ID); err != nil {
		t.Fatal(err)
	}

	signedOut := e.browser()
	for _, tc := range []struct {
		name string
		b    *browser
		path string
		want int
	}{
		{"sign-in", signedOut, "/login", http.StatusOK},
		{"forgot password", signedOut, "/forgot-password", http.StatusOK},
		{"documents", ad, "/documents", http.StatusOK},
		{"search", ad, "/documents?search=heading", http.StatusOK},
		{"document with # headings", ad, "/documents/" + d.ID, http.StatusOK},
		{"HTML document", ad, "/documents/" + h.ID, http.StatusOK},
		{"edit", ad, "/documents/" + d.ID + "/edit", http.StatusOK},
		{"new", ad, "/documents/new", http.StatusOK},
		{"delete", ad, "/documents/" + d.ID + "/delete", http.StatusOK},
		{"versions", ad, "/documents/" + d.ID + "/versions", http.StatusOK},
		{"version", ad, "/documents/" + d.ID + "/versions/1", http.StatusOK},
		{"version diff", ad, "/documents/" + d.ID + "/versions/1/diff", http.StatusOK},
		{"folders", ad, "/folders", http.StatusOK},
		{"folder", ad, "/folders/" + folder.ID, http.StatusOK},
		{"trash", ad, "/trash", http.StatusOK},
		{"account", ad, "/account", http.StatusOK},
		{"activity", ad, "/activity", http.StatusOK},
		{"administration", ad, "/admin/users", http.StatusOK},
		{"not found", ad, "/documents/00000000-0000-0000-0000-000000000000", http.StatusNotFound},
	} {
		t.Run(tc.name+" has one h1", func(t *testing.T) {
			p := tc.b.get(tc.path)
			if p.Status != tc.want {
				t.Fatalf("%s: status %d, want %d", tc.path, p.Status, tc.want)
			}
			if h := p.h1s(); len(h) != 1 {
				t.Errorf("%s: h1s %q", tc.path, h)
			}
		})
	}
	t.Run("the conflict page has one h1", func(t *testing.T) {
		cur := e.get(admin, d.ID)
		p := ad.post("/documents/"+d.ID, url.Values{
			"title": {"Mine"}, "content": {"# Mine\n"}, "content_type": {"markdown"}, "status": {"draft"}, "visibility": {"private"},
			"baseVersion": {"1"}, "baseUpdatedAt": {cur.UpdatedAt.Add(-time.Hour).UTC().Format(time.RFC3339Nano)},
		})
		if p.Status != http.StatusConflict {
			t.Fatalf("status %d", p.Status)
		}
		if h := p.h1s(); len(h) != 1 {
			t.Errorf("h1s %q", h)
		}
	})
	t.Run("the document's title is the h1, its headings start at h2", func(t *testing.T) {
		p := ad.get("/documents/" + d.ID)
		if h := p.h1s(); len(h) != 1 || h[0] != "Doc title" {
			t.Errorf("h1s %q", h)
		}
		if !strings.Contains(innerHTML(p.byID("doc-body")), `<h2 id="h-a-heading-one">A heading one`) {
			t.Errorf("content %s", innerHTML(p.byID("doc-body")))
		}
	})
}
