package httpapi

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/internal/sqlitetest"
	"quire/sqlite"
)

// Share links (product.md section 21): the API's routes, and the public
// pages under /s/ that quire serve mounts beside it.

type shareWire struct {
	ID           string     `json:"id"`
	URL          *string    `json:"url"`
	DocumentID   string     `json:"document_id"`
	CreatedBy    personWire `json:"created_by"`
	CreatedAt    string     `json:"created_at"`
	ExpiresAt    *string    `json:"expires_at"`
	Views        int64      `json:"views"`
	LastViewedAt *string    `json:"last_viewed_at"`
}

// shareFixture is a docsFixture serving the pages too, with ada (editor
// of Engineering, the owner of doc) and bob (editor of Engineering, who
// shares it), and an administrator.
type shareFixture struct {
	*docsFixture
	ada, bob, root string // tokens
	doc            docWire
}

func newShareFixture(t *testing.T, opts ...func(*serverConfig)) *shareFixture {
	t.Helper()
	fx := newDocsFixture(t, withHTTPConfig(func(c *serverConfig) {
		c.Pages = true
		for _, o := range opts {
			o(c)
		}
	}))
	sf := &shareFixture{docsFixture: fx}
	sf.ada = fx.person("ada@example.com", "editor", "Engineering", false)
	sf.bob = fx.person("bob@example.com", "editor", "Engineering", false)
	sf.root = fx.person("root@example.com", "admin", "", false)
	sf.doc = fx.create(sf.ada, map[string]any{"title": "Runbook", "content": "# Steps\n\nRestart the **service**.",
		"visibility": "department"})
	return sf
}

// in returns the fixture reporting to t.
func (sf *shareFixture) in(t testing.TB) *shareFixture {
	c := *sf
	c.docsFixture = sf.docsFixture.in(t)
	return &c
}

func sharesPath(docID string) string { return docsPath + "/" + docID + "/shares" }

// share creates a share of docID as token, wanting 201.
func (sf *shareFixture) share(token, docID string, body any) shareWire {
	sf.t.Helper()
	opts := []reqOpt{bearer(token)}
	if body != nil {
		opts = append(opts, jsonBody(body))
	}
	return wantMember[shareWire](sf.t, sf.do("POST", sharesPath(docID), opts...), http.StatusCreated, "share")
}

// pathOf is the path of a share's page.
func (sf *shareFixture) pathOf(s shareWire) string {
	sf.t.Helper()
	if s.URL == nil || !strings.HasPrefix(*s.URL, "http://quire.test/s/") {
		sf.t.Fatalf("share url %v", s.URL)
	}
	return strings.TrimPrefix(*s.URL, "http://quire.test")
}

// page gets a path of the pages without a session.
func (sf *shareFixture) page(path string, opts ...reqOpt) *resp {
	sf.t.Helper()
	return sf.do("GET", path, append([]reqOpt{noSpecCheck()}, opts...)...)
}

// wantGone fails the test unless r is exactly the answer to an unknown
// token: the same status, type and bytes.
func (sf *shareFixture) wantGone(what string, r *resp) {
	sf.t.Helper()
	unknown := sf.page("/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	if unknown.Status != http.StatusNotFound {
		sf.t.Fatalf("an unknown token: %d", unknown.Status)
	}
	if r.Status != unknown.Status || !bytes.Equal(r.Body, unknown.Body) ||
		r.Header.Get("Content-Type") != unknown.Header.Get("Content-Type") ||
		r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Set-Cookie") != "" {
		sf.t.Errorf("%s: %d %q %s, want the answer to an unknown token: %d %s", what, r.Status,
			r.Header.Get("Content-Type"), excerpt(r.Body), unknown.Status, excerpt(unknown.Body))
	}
}

func TestShareLifecycle(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	bob := sf.users["bob@example.com"]
	now := formatTime(sf.clock.Now())

	s := sf.share(sf.bob, sf.doc.ID, nil)
	want := shareWire{ID: s.ID, URL: s.URL, DocumentID: sf.doc.ID, CreatedBy: personWire{ID: bob.ID, Name: bob.Name}, CreatedAt: now}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Fatalf("created share (-want +got)\n%s", diff)
	}
	path := sf.pathOf(s)
	if token := strings.TrimPrefix(path, "/s/"); len(token) != 32 || strings.Trim(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		t.Fatalf("token %q: want 32 characters of base64url (192 bits)", token)
	}

	t.Run("the page shows the current title, content and last update, and nothing else", func(t *testing.T) {
		sf := sf.in(t)
		sf.do("PUT", docsPath+"/"+sf.doc.ID, bearer(sf.ada), jsonBody(map[string]any{"title": "Runbook v2"}))
		r := sf.page(path, cookie("auth_token", "whatever"))
		if r.Status != http.StatusOK {
			t.Fatalf("page: %d %s", r.Status, excerpt(r.Body))
		}
		body := string(r.Body)
		for _, want := range []string{"<title>Runbook v2</title>", "<strong>service</strong>", `id="last-update"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		for _, leak := range []string{"ada@example.com", "bob@example.com", "/versions", "Sign out", "<form", "<script"} {
			if strings.Contains(body, leak) {
				t.Errorf("page shows %q", leak)
			}
		}
		for h, want := range map[string]string{"X-Robots-Tag": "noindex", "Referrer-Policy": "no-referrer",
			"Cache-Control": "no-store", "Set-Cookie": ""} {
			if got := r.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
	})

	t.Run("views are counted in memory and written in one batch", func(t *testing.T) {
		sf := sf.in(t)
		sf.page(path)
		sf.clock.Advance(time.Second)
		viewed := formatTime(sf.clock.Now())
		sf.page(path)
		list := wantMember[[]shareWire](t, sf.do("GET", sharesPath(sf.doc.ID), bearer(sf.bob)), http.StatusOK, "shares")
		if len(list) != 1 || list[0].Views != 0 {
			t.Fatalf("before the flush: %+v", list)
		}
		if err := sf.shares.FlushViews(context.Background()); err != nil {
			t.Fatal(err)
		}
		list = wantMember[[]shareWire](t, sf.do("GET", sharesPath(sf.doc.ID), bearer(sf.bob)), http.StatusOK, "shares")
		if len(list) != 1 || list[0].Views != 3 || list[0].LastViewedAt == nil || *list[0].LastViewedAt != viewed {
			t.Fatalf("after the flush: %+v (want 3 views, the last at %s)", list, viewed)
		}
	})

	t.Run("the creator, the owner and administrators see the share; another writer does not", func(t *testing.T) {
		sf := sf.in(t)
		carol := sf.person("carol@example.com", "editor", "Engineering", false)
		for who, tok := range map[string]string{"bob": sf.bob, "ada": sf.ada, "root": sf.root} {
			list := wantMember[[]shareWire](t, sf.do("GET", sharesPath(sf.doc.ID), bearer(tok)), http.StatusOK, "shares")
			if len(list) != 1 || list[0].ID != s.ID || list[0].URL == nil || *list[0].URL != *s.URL {
				t.Errorf("%s lists %+v", who, list)
			}
		}
		if list := wantMember[[]shareWire](t, sf.do("GET", sharesPath(sf.doc.ID), bearer(carol)), http.StatusOK, "shares"); len(list) != 0 {
			t.Errorf("carol lists %+v", list)
		}
		sf.wantError(sf.do("DELETE", "/api/documentation/shares/"+s.ID, bearer(carol)), http.StatusNotFound, quire.ENOTFOUND)
		admin := wantBody[struct {
			Shares     []shareWire    `json:"shares"`
			Pagination paginationJSON `json:"pagination"`
		}](t, sf.do("GET", "/api/admin/shares?limit=1", bearer(sf.root)), http.StatusOK)
		if len(admin.Shares) != 1 || admin.Pagination != (paginationJSON{CurrentPage: 1, Limit: 1, Total: 1, TotalPages: 1}) {
			t.Errorf("the administrators' list: %+v", admin)
		}
		sf.wantError(sf.do("GET", "/api/admin/shares", bearer(sf.ada)), http.StatusForbidden, quire.EFORBIDDEN)
	})

	t.Run("a revoked share is gone at once, and the audit log has both events without the token", func(t *testing.T) {
		sf := sf.in(t)
		wantMember[string](t, sf.do("DELETE", "/api/documentation/shares/"+s.ID, bearer(sf.ada)), http.StatusOK, "message")
		sf.wantGone("a revoked share", sf.page(path))
		sf.wantError(sf.do("DELETE", "/api/documentation/shares/"+s.ID, bearer(sf.ada)), http.StatusNotFound, quire.ENOTFOUND)
		r := sf.do("GET", "/api/admin/audit?targetId="+s.ID, bearer(sf.root))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "share.created") || !strings.Contains(string(r.Body), "share.revoked") {
			t.Errorf("audit: %d %s", r.Status, excerpt(r.Body))
		}
		token := strings.TrimPrefix(path, "/s/")
		if strings.Contains(string(r.Body), token) || strings.Contains(sf.logText(), token) {
			t.Error("the token is in the audit log or the server's log")
		}
		m := sf.do("GET", "/metrics", noSpecCheck())
		if strings.Contains(string(m.Body), token) || !strings.Contains(string(m.Body), `route="GET /s/{token}"`) {
			t.Errorf("metrics: the token is a label, or the share route is not /s/{token}")
		}
	})
}

func TestShareCreateRefusals(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	viewer := sf.person("vera@example.com", "viewer", "Engineering", false)
	outsider := sf.person("otto@example.com", "editor", "Sales", false)
	past := formatTime(sf.clock.Now().Add(-time.Second))
	for _, c := range []struct {
		name   string
		token  string
		body   any
		status int
		code   string
		fields map[string]string
	}{
		{"a document the caller cannot see is not found", outsider, nil, http.StatusNotFound, quire.ENOTFOUND, nil},
		{"a document the caller sees but may not write is forbidden", viewer, nil, http.StatusForbidden, quire.EFORBIDDEN, nil},
		{"an expiry in the past is refused", sf.bob, map[string]any{"expires_at": past}, http.StatusBadRequest, quire.EVALIDATION,
			map[string]string{"expires_at": "must be in the future"}},
		{"an expiry that is not a date is refused", sf.bob, map[string]any{"expires_at": "tomorrow"}, http.StatusBadRequest, quire.EVALIDATION,
			map[string]string{"expires_at": "must be an RFC 3339 date-time"}},
		{"an expiry of another type is refused", sf.bob, map[string]any{"expires_at": 12}, http.StatusBadRequest, quire.EVALIDATION,
			map[string]string{"expires_at": "must be an RFC 3339 date-time or null"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sf := sf.in(t)
			opts := []reqOpt{bearer(c.token)}
			if c.body != nil {
				opts = append(opts, jsonBody(c.body))
			}
			r := sf.do("POST", sharesPath(sf.doc.ID), opts...)
			if c.fields != nil {
				sf.wantFields(r, c.fields)
				return
			}
			sf.wantError(r, c.status, c.code)
		})
	}
	sf.wantError(sf.do("POST", sharesPath(unknownDocID), bearer(sf.bob)), http.StatusNotFound, quire.ENOTFOUND)

	t.Run("while sharing is off a share is refused with SHARING_DISABLED; the switch is the administrators'", func(t *testing.T) {
		sf := sf.in(t)
		st := wantMember[settingsJSON](t, sf.do("GET", "/api/admin/settings", bearer(sf.root)), http.StatusOK, "settings")
		if !st.Sharing {
			t.Fatal("sharing is off by default")
		}
		sf.wantError(sf.do("PUT", "/api/admin/settings", bearer(sf.ada), jsonBody(map[string]any{"sharing": false})), http.StatusForbidden, quire.EFORBIDDEN)
		sf.wantFields(sf.do("PUT", "/api/admin/settings", bearer(sf.root), jsonBody(map[string]any{"sharing": "no"})),
			map[string]string{"sharing": "must be a boolean"})
		sf.wantFields(sf.do("PUT", "/api/admin/settings", bearer(sf.root), jsonBody(map[string]any{})),
			map[string]string{"sharing": "is required"})
		st = wantMember[settingsJSON](t, sf.do("PUT", "/api/admin/settings", bearer(sf.root), jsonBody(map[string]any{"sharing": false})), http.StatusOK, "settings")
		if st.Sharing {
			t.Fatal("still on")
		}
		sf.wantError(sf.do("POST", sharesPath(sf.doc.ID), bearer(sf.bob)), http.StatusForbidden, quire.ESHARINGDISABLED)
	})
}

const unknownDocID = "0190b2a4-0000-7000-8000-000000000000"

// Each way a share stops working answers exactly what an unknown token
// does, and so does every malformed token and path.
func TestShareStopsWorking(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	ctx := context.Background()
	mk := func(t *testing.T, token string, body any) (docWire, string) {
		doc := sf.create(sf.ada, map[string]any{"title": "Doc of " + t.Name(), "visibility": "department"})
		return doc, sf.in(t).pathOf(sf.in(t).share(token, doc.ID, body))
	}
	works := func(t *testing.T, path string) {
		t.Helper()
		if r := sf.in(t).page(path); r.Status != http.StatusOK {
			t.Fatalf("a working share: %d", r.Status)
		}
	}
	t.Run("expired", func(t *testing.T) {
		_, path := mk(t, sf.bob, map[string]any{"expires_at": formatTime(sf.clock.Now().Add(time.Hour))})
		works(t, path)
		sf.clock.Advance(time.Hour)
		sf.in(t).wantGone("an expired share", sf.in(t).page(path))
	})
	t.Run("its document in the trash", func(t *testing.T) {
		doc, path := mk(t, sf.bob, nil)
		works(t, path)
		sf.do("DELETE", docsPath+"/"+doc.ID, bearer(sf.ada))
		sf.in(t).wantGone("a trashed document", sf.in(t).page(path))
		sf.do("POST", "/api/documentation/trash/"+doc.ID+"/restore", bearer(sf.ada))
		works(t, path)
	})
	t.Run("its creator disabled", func(t *testing.T) {
		carol := sf.in(t).person("carol@example.com", "editor", "Engineering", false)
		_, path := mk(t, carol, nil)
		works(t, path)
		if err := sf.store.DisableUser(ctx, sf.users["carol@example.com"].ID, sf.clock.Now()); err != nil {
			t.Fatal(err)
		}
		sf.in(t).wantGone("a disabled creator", sf.in(t).page(path))
	})
	t.Run("its creator no longer sees the document", func(t *testing.T) {
		doc, path := mk(t, sf.bob, nil)
		works(t, path)
		sf.do("PUT", docsPath+"/"+doc.ID, bearer(sf.ada), jsonBody(map[string]any{"visibility": "private"}))
		sf.in(t).wantGone("a creator who lost the document", sf.in(t).page(path))
	})
	t.Run("its creator's role lost view", func(t *testing.T) {
		dave := sf.in(t).person("dave@example.com", "editor", "Engineering", false)
		_, path := mk(t, dave, nil)
		works(t, path)
		if err := sf.store.SetUserRole(ctx, sf.users["dave@example.com"].ID, "guest"); err != nil {
			t.Fatal(err)
		}
		sf.in(t).wantGone("a creator without view", sf.in(t).page(path))
	})
	t.Run("sharing off, and on again", func(t *testing.T) {
		_, path := mk(t, sf.bob, nil)
		works(t, path)
		sf.do("PUT", "/api/admin/settings", bearer(sf.root), jsonBody(map[string]any{"sharing": false}))
		sf.in(t).wantGone("sharing off", sf.in(t).page(path))
		sf.do("PUT", "/api/admin/settings", bearer(sf.root), jsonBody(map[string]any{"sharing": true}))
		works(t, path)
	})
	t.Run("malformed tokens and path tricks", func(t *testing.T) {
		sf := sf.in(t)
		_, path := mk(t, sf.bob, nil)
		tok := strings.TrimPrefix(path, "/s/")
		for _, p := range []string{"/s/", "/s/x", "/s/" + tok + "A", "/s/" + tok[:31], "/s/" + strings.Repeat("A", 4000),
			"/s/" + tok[:31] + "%00", "/s/" + tok[:30] + "%C3%A9", "/s/" + tok[:31] + "=", "/s/%2e%2e/", "/s/..%2f" + tok,
			"/s/" + tok + "/", "/s/" + tok + "/files/../x", "/s/" + tok + "/files/", "/s/" + tok + "/files/x/y",
			"/s/" + tok + "/other", "/s/" + strings.ToLower(tok), "/s/%ff%fe"} {
			if p == "/s/"+strings.ToLower(tok) && strings.ToLower(tok) == tok {
				continue
			}
			sf.wantGone(p, sf.page(p))
		}
		sf.wantGone("POST", sf.do("POST", path, noSpecCheck()))
	})
}

// A valid token opens its own document and its files, nothing else: not
// another document's file, not another document's id in a file's place.
func TestShareCannotReachOtherDocuments(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	img := sf.upload(sf.ada, sf.doc.ID, "diagram.png", pngBytes())
	sf.do("PUT", docsPath+"/"+sf.doc.ID, bearer(sf.ada), jsonBody(map[string]any{"content": "![diagram](" + img.URL + ")"}))
	secret := sf.create(sf.ada, map[string]any{"title": "Secret", "visibility": "private"})
	other := sf.upload(sf.ada, secret.ID, "secret.png", jpegBytes())
	// A document the share's creator sees too, but did not share.
	seen := sf.create(sf.ada, map[string]any{"title": "Seen", "visibility": "department"})
	seenFile := sf.upload(sf.ada, seen.ID, "seen.png", jpegBytes())
	path := sf.pathOf(sf.share(sf.bob, sf.doc.ID, nil))

	r := sf.page(path)
	if !strings.Contains(string(r.Body), `src="`+path+`/files/`+img.ID+`"`) {
		t.Fatalf("the image is not served under the share: %s", excerpt(r.Body))
	}
	f := sf.page(path + "/files/" + img.ID)
	if f.Status != http.StatusOK || !bytes.Equal(f.Body, pngBytes()) || f.Header.Get("Content-Type") != "image/png" ||
		f.Header.Get("Content-Security-Policy") != "sandbox" || f.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the image: %d %v", f.Status, f.Header)
	}
	sf.wantGone("another document's file", sf.page(path+"/files/"+other.ID))
	sf.wantGone("a file of another document its creator sees", sf.page(path+"/files/"+seenFile.ID))
	sf.wantGone("another document's id as a file", sf.page(path+"/files/"+secret.ID))
	sf.wantGone("the document's own id as a file", sf.page(path+"/files/"+sf.doc.ID))
	sf.wantGone("another document's id as a token", sf.page("/s/"+secret.ID))
	sf.wantGone("a share id as a token", sf.page("/s/"+strings.ReplaceAll(secret.ID, "-", "")))
}

// Links to other documents lead to their share pages where those are
// shared too, and nowhere where not.
func TestShareLinks(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	shared := sf.create(sf.ada, map[string]any{"title": "Shared too", "visibility": "department"})
	hidden := sf.create(sf.ada, map[string]any{"title": "Not shared", "visibility": "department"})
	sharedPath := sf.pathOf(sf.share(sf.ada, shared.ID, nil))
	sf.do("PUT", docsPath+"/"+sf.doc.ID, bearer(sf.ada), jsonBody(map[string]any{"content": "[one](/documents/" + shared.ID +
		"#part) and [two](http://quire.test/documents/" + hidden.ID + ") and [list](/documents) and [out](https://example.com/x)"}))
	body := string(sf.page(sf.pathOf(sf.share(sf.bob, sf.doc.ID, nil))).Body)
	for _, want := range []string{`<a href="` + sharedPath + `#part"`, `<a rel="nofollow noreferrer">two</a>`, `<a rel="nofollow noreferrer">list</a>`, `href="https://example.com/x"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s: %s", want, excerpt([]byte(body)))
		}
	}
	if strings.Contains(body, hidden.ID) {
		t.Error("the page names the document that is not shared")
	}
}

// Each address gets 120 requests of share pages a minute, then 429 with
// Retry-After; another address is not affected; the next minute it may
// again.
func TestShareRateLimit(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	for i := range 120 {
		if r := sf.page("/s/x"); r.Status != http.StatusNotFound {
			t.Fatalf("request %d: %d", i+1, r.Status)
		}
	}
	r := sf.page("/s/x")
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "60" {
		t.Fatalf("the 121st: %d, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	if r := sf.page("/s/x", fromAddr("127.0.0.2")); r.Status != http.StatusNotFound {
		t.Fatalf("another address: %d", r.Status)
	}
	sf.clock.Advance(time.Minute)
	if r := sf.page("/s/x"); r.Status != http.StatusNotFound {
		t.Fatalf("a minute later: %d", r.Status)
	}
}

// TestShareWritesTakeAnIdempotencyKey: creating and revoking a share are
// unsafe requests under /api/documentation/, so a retry with the same
// Idempotency-Key gets the first answer and changes nothing (product.md
// section 17).
func TestShareWritesTakeAnIdempotencyKey(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	list := func() []shareWire {
		return wantMember[[]shareWire](t, sf.do("GET", sharesPath(sf.doc.ID), bearer(sf.bob)), http.StatusOK, "shares")
	}
	before := len(list())
	first := sf.do("POST", sharesPath(sf.doc.ID), bearer(sf.bob), idemKey("s-1"))
	again := sf.do("POST", sharesPath(sf.doc.ID), bearer(sf.bob), idemKey("s-1"))
	if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(first.Body) != string(again.Body) ||
		again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("create: first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if after := len(list()); after != before+1 {
		t.Fatalf("%d shares, then %d after a create and its retry", before, after)
	}
	s := wantMember[shareWire](t, first, http.StatusCreated, "share")
	first = sf.do("DELETE", "/api/documentation/shares/"+s.ID, bearer(sf.bob), idemKey("s-2"))
	again = sf.do("DELETE", "/api/documentation/shares/"+s.ID, bearer(sf.bob), idemKey("s-2"))
	if first.Status != http.StatusOK || again.Status != http.StatusOK || string(first.Body) != string(again.Body) ||
		again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("revoke: first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if reused := sf.do("POST", sharesPath(sf.doc.ID), bearer(sf.bob), idemKey("s-1"), jsonBody(map[string]any{"expires_at": "2099-01-01T00:00:00Z"})); reused.Status != http.StatusUnprocessableEntity {
		t.Fatalf("the key with another body: %d %s", reused.Status, reused.Body)
	}
}

// A shared page links another document to its share only where the page's
// own share creator may see that document: a share never hands out the
// link, and so the text, of a document its creator cannot see.
func TestShareLinksOnlyDocumentsItsCreatorSees(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	secret := sf.create(sf.ada, map[string]any{"title": "Merger plan", "content": "The secret price is 42.", "visibility": "private"})
	secretPath := sf.pathOf(sf.share(sf.ada, secret.ID, nil))
	open := sf.create(sf.ada, map[string]any{"title": "Handbook", "content": "Open to all.", "visibility": "public"})
	openPath := sf.pathOf(sf.share(sf.ada, open.ID, nil))
	if r := sf.do("GET", docsPath+"/"+secret.ID, bearer(sf.bob)); r.Status != http.StatusNotFound {
		t.Fatalf("bob sees ada's private document: %d", r.Status)
	}
	mine := sf.create(sf.bob, map[string]any{"title": "Mine", "visibility": "private",
		"content": "[x](/documents/" + secret.ID + ") and [y](/documents/" + open.ID + ")"})
	body := string(sf.page(sf.pathOf(sf.share(sf.bob, mine.ID, nil))).Body)
	if strings.Contains(body, secretPath) {
		t.Errorf("bob's share page links ada's share of a document bob cannot see (%s)", secretPath)
	}
	if !strings.Contains(body, openPath) {
		t.Errorf("bob's share page does not link the shared public document (%s): %s", openPath, body)
	}
}

// An expiry given as the zero time is long past, not "no expiry".
func TestShareZeroExpiryIsInThePast(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	r := sf.do("POST", sharesPath(sf.doc.ID), bearer(sf.bob), jsonBody(map[string]any{"expires_at": "0001-01-01T00:00:00Z"}))
	sf.wantFields(r, map[string]string{"expires_at": "must be in the future"})
}

// No page number of the administrators' list overflows its offset.
func TestAdminSharesHugePageIsEmpty(t *testing.T) {
	t.Parallel()
	sf := newShareFixture(t)
	sf.share(sf.bob, sf.doc.ID, nil)
	for _, q := range []string{"?page=100000000000000000&limit=100", "?page=9223372036854775807&limit=100"} {
		out := wantBody[struct {
			Shares     []shareWire     `json:"shares"`
			Pagination json.RawMessage `json:"pagination"`
		}](t, sf.do("GET", "/api/admin/shares"+q, bearer(sf.root)), http.StatusOK)
		if len(out.Shares) != 0 {
			t.Errorf("%s: %d shares, want none", q, len(out.Shares))
		}
	}
}

// The answer of a share's creation kept for a repeat of its
// Idempotency-Key holds the share's URL, and so its token: the database
// keeps it sealed, as it keeps the token itself (hash and sealed copy).
func TestShareKeptAnswerHoldsNoToken(t *testing.T) {
	t.Parallel()
	if current.name != "sqlite" {
		t.Skip("reads the SQLite file")
	}
	var path string
	fx := newDocsFixture(t, withStore(func(t testing.TB) quire.Store {
		path = sqlitetest.Migrated(t)
		db, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}), withHTTPConfig(func(c *serverConfig) { c.Pages = true }))
	bob := fx.person("bob@example.com", "editor", "Engineering", false)
	doc := fx.create(bob, map[string]any{"title": "Runbook", "visibility": "department"})
	first := fx.do("POST", sharesPath(doc.ID), bearer(bob), idemKey("k-1"))
	s := wantMember[shareWire](t, first, http.StatusCreated, "share")
	token := (*s.URL)[strings.LastIndex(*s.URL, "/")+1:]
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var body []byte
	if err := raw.QueryRow(`SELECT body FROM idempotency_keys WHERE key = 'k-1'`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	if len(body) == 0 || strings.Contains(string(body), token) || strings.Contains(string(body), s.ID) {
		t.Errorf("idempotency_keys.body holds the answer in the clear: %q", body)
	}
	again := fx.do("POST", sharesPath(doc.ID), bearer(bob), idemKey("k-1"))
	if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the repeat: %d %s, want the first answer %s", again.Status, again.Body, first.Body)
	}
}
