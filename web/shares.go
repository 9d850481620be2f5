package web

import (
	"context"
	"crypto/sha256"
	"errors"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"

	"quire"
	"quire/attachments"
	"quire/share"
)

// The public pages of share links (product.md section 21): /s/{token}, a
// document as its creator may read it now, and /s/{token}/files/{id}, the
// files of that document. They need no session and never read or set one.
// Every request is checked whole (share.Service.Open), and every refusal,
// whatever its cause or the shape of the path, is the same 404: the same
// status, headers and bytes as an unknown token.

// shareGone is the body of every refusal under /s/.
const shareGone = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Not found · quire</title>
</head>
<body>
<main>
<h1>Page not found</h1>
<p>This link does not lead to a shared page. It may have been revoked or have expired; ask whoever sent it for a new one.</p>
</main>
</body>
</html>
`

// shareTooMany is the body of the answer past the per-address limit.
const shareTooMany = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="robots" content="noindex">
<title>Too many requests · quire</title>
</head>
<body>
<main>
<h1>Too many requests</h1>
<p>Too many requests came from your address. Please wait a minute and try again.</p>
</main>
</body>
</html>
`

// serveShare routes a request under /s/ itself, before any mux could
// answer a path that is not in clean form with a redirect: /s/{token} and
// /s/{token}/files/{id} with GET or HEAD; anything else is gone. The route
// pattern it records names no token (the metrics' label, the log line).
func (s *server) serveShare(w http.ResponseWriter, r *http.Request, sh *share.Service) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Robots-Tag", "noindex")
	h.Set("Referrer-Policy", "no-referrer")
	r.Pattern = "GET /s/{token}"
	if err := sh.Allow(s.clientAddr(r)); err != nil {
		setRetryAfter(w, err)
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, shareTooMany)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/s/"), "/")
	var err error
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		err = share.ErrGone
	case len(parts) == 1:
		err = s.sharedPage(w, r, sh, parts[0])
	case len(parts) == 3 && parts[1] == "files" && s.cfg.Files != nil:
		r.Pattern = "GET /s/{token}/files/{id}"
		err = s.sharedFile(w, r, sh, s.cfg.Files, parts[0], parts[2])
	default:
		err = share.ErrGone
	}
	if err == nil {
		return
	}
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, shareGone)
		return
	}
	// The database failed or went away. The log line names no path: it
	// holds the token.
	status := http.StatusInternalServerError
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, quire.ErrUnavailable) {
		status = http.StatusServiceUnavailable
		h.Set("Retry-After", "1")
	}
	if r.Context().Err() == nil {
		s.logger.Error("web: share page", "request_id", r.Header.Get("X-Request-Id"), "err", err)
	}
	http.Error(w, http.StatusText(status), status)
}

// sharedPageData is the page of a share.
type sharedPageData struct {
	Doc  *quire.Document
	Body template.HTML
	Loc  *time.Location
}

func (s *server) sharedPage(w http.ResponseWriter, r *http.Request, sh *share.Service, token string) error {
	acc, doc, err := sh.Open(r.Context(), token)
	if err != nil {
		return err
	}
	body, err := s.bodies.Render(r.Context(), doc.ContentType, doc.Content)
	if err != nil {
		return err
	}
	if body, err = s.sharedBody(r.Context(), sh, acc.As, body, token); err != nil {
		return err
	}
	sh.CountView(acc)
	s.views.render(w, r, http.StatusOK, "share.html", sharedPageData{Doc: doc, Body: body, Loc: time.UTC}, s.logger)
	return nil
}

func (s *server) sharedFile(w http.ResponseWriter, r *http.Request, sh *share.Service, files *attachments.Service, token, id string) error {
	acc, doc, err := sh.Open(r.Context(), token)
	if err != nil {
		return err
	}
	// The file is read as the share's creator, so its document's trash
	// and visibility apply; it must be a file of the shared document.
	at, err := files.Get(r.Context(), acc.As, id)
	if err != nil {
		return share.Gone(err)
	}
	if at.DocumentID != doc.ID {
		return share.ErrGone
	}
	attachments.PrepareDownload(w, r, at)
	http.ServeContent(w, r, "", at.CreatedAt, files.Open(r.Context(), acc.As, at))
	return nil
}

// sharedRefs find, in a rendered body's href or src, a document's page
// (/documents/{id}, with an optional query or fragment) and a file's bytes
// (the API's /api/documentation/attachments/{id}/content), relative or
// under the public URL.
var (
	sharedDocRef  = regexp.MustCompile(`^/documents/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/?([?#].*)?$`)
	sharedFileRef = regexp.MustCompile(`^/api/documentation/attachments/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/content$`)
)

// localPath is the path (with query and fragment) of a link to this
// server: relative ("/x") or absolute under the public URL; ok false for
// anything else (another site, mailto:, a fragment alone).
func (s *server) localPath(ref string) (string, bool) {
	if strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, "//") && !strings.HasPrefix(ref, "/\\") {
		return ref, true
	}
	base := strings.TrimRight(s.auth.Config().PublicURL, "/")
	if base != "" && strings.HasPrefix(strings.ToLower(ref), strings.ToLower(base)+"/") {
		return ref[len(base):], true
	}
	return "", false
}

// sharedBody is a rendered body as a share shows it: images and files of
// the document under the share, links to other documents to their own
// share pages where they have a working share now and unlinked where not,
// and links to any other page of quire unlinked (they lead to a sign-in).
// What a body's tags become is worked out once per body (sharedForms);
// which linked documents are shared is asked on every request.
func (s *server) sharedBody(ctx context.Context, sh *share.Service, as quire.Actor, body template.HTML, token string) (template.HTML, error) {
	src := string(body)
	if !strings.Contains(src, "<a") && !strings.Contains(src, "<img") {
		return body, nil
	}
	f := s.sharedForms.get(src, s.sharedFormOf)
	paths, err := sh.Linked(ctx, as, f.ids)
	if err != nil {
		return "", err
	}
	base := share.Path(token)
	var b strings.Builder
	b.Grow(len(src) + 64*len(f.parts))
	for _, p := range f.parts {
		switch {
		case p.doc == "":
			b.WriteString(strings.ReplaceAll(p.lit, shareMark, base))
		case paths[p.doc] != "":
			b.WriteString(strings.Replace(p.linked, linkMark, paths[p.doc], 1))
		default:
			b.WriteString(p.plain)
		}
	}
	return template.HTML(b.String()), nil
}

// Marks of a sharedForm's parts: where the share's own path goes (its
// files) and where a linked share's path goes. A rendered body holds no
// NUL (sharedFormOf replaces any), so neither can come from a document.
const (
	shareMark = "\x00share\x00"
	linkMark  = "\x00link\x00"
)

// sharedForm is a rendered body cut at its links to other documents: a
// part is literal HTML (with shareMark for the share's path) or a link to
// document doc, written as linked (linkMark for the target) when that
// document is shared, as plain (no href) when not.
type sharedForm struct {
	parts []sharedPart
	ids   []string // the documents linked, each once, in order
}

type sharedPart struct {
	lit                string
	doc, linked, plain string
}

func (s *server) sharedFormOf(src string) *sharedForm {
	f := &sharedForm{}
	var lit strings.Builder
	seen := map[string]bool{}
	// The sanitiser and the Markdown renderer leave no NUL; should one
	// remain, it could not pose as a mark.
	src = strings.ReplaceAll(src, "\x00", "\uFFFD")
	z := html.NewTokenizer(strings.NewReader(src))
	for z.Next() != html.ErrorToken {
		t := z.Token()
		if (t.Type != html.StartTagToken && t.Type != html.SelfClosingTagToken) || (t.Data != "a" && t.Data != "img") {
			lit.WriteString(t.String())
			continue
		}
		doc, tail := "", ""
		attrs := t.Attr[:0:0]
		for _, a := range t.Attr {
			if a.Key == "href" || a.Key == "src" {
				if p, ok := s.localPath(a.Val); ok {
					m, file := sharedDocRef.FindStringSubmatch(p), sharedFileRef.FindStringSubmatch(p)
					switch {
					case m != nil && a.Key == "href":
						doc, tail = m[1], fragmentOf(m[2])
						continue // written below
					case file != nil:
						a.Val = shareMark + "/files/" + file[1]
					default:
						continue // another page of quire: unlinked
					}
				}
			}
			attrs = append(attrs, a)
		}
		t.Attr = attrs
		if doc == "" {
			lit.WriteString(t.String())
			continue
		}
		if !seen[doc] {
			seen[doc] = true
			f.ids = append(f.ids, doc)
		}
		plain := t.String()
		t.Attr = append([]html.Attribute{{Key: "href", Val: linkMark + tail}}, t.Attr...)
		f.parts = append(f.parts, sharedPart{lit: lit.String()}, sharedPart{doc: doc, linked: t.String(), plain: plain})
		lit.Reset()
	}
	f.parts = append(f.parts, sharedPart{lit: lit.String()})
	return f
}

// formCache keeps the sharedForms of recent bodies, at most max of them
// (past it, it starts afresh).
type formCache struct {
	mu    sync.Mutex
	max   int
	forms map[[sha256.Size]byte]*sharedForm
}

func (c *formCache) get(src string, build func(string) *sharedForm) *sharedForm {
	key := sha256.Sum256([]byte(src))
	c.mu.Lock()
	f := c.forms[key]
	c.mu.Unlock()
	if f != nil {
		return f
	}
	f = build(src)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forms == nil || len(c.forms) >= c.max {
		c.forms = map[[sha256.Size]byte]*sharedForm{}
	}
	c.forms[key] = f
	return f
}

// fragmentOf is the fragment of a link's query-and-fragment tail.
func fragmentOf(tail string) string {
	if i := strings.IndexByte(tail, '#'); i >= 0 {
		return "#" + url.PathEscape(tail[i+1:])
	}
	return ""
}
