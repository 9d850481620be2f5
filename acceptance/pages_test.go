package acceptance

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"quire"
	"quire/auth"
	"quire/documents"
	"quire/httpapi"
	"quire/web"
)

const wantCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, signedIn := e.signedInUser("ed@example.com", "editor", "Engineering")

	want := map[string]string{
		"Content-Security-Policy": wantCSP,
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	}
	headersOf := func(p *page) map[string]string {
		got := map[string]string{}
		for k := range want {
			got[k] = p.Header.Get(k)
		}
		return got
	}
	for _, tc := range []struct {
		name   string
		b      *browser
		path   string
		status int
	}{
		{"the sign-in page", e.browser(), "/login", http.StatusOK},
		{"the documents list", signedIn, "/documents", http.StatusOK},
		{"a static file", e.browser(), "/static/style.css", http.StatusOK},
		{"the not-found page", e.browser(), "/no/such/page", http.StatusNotFound},
		{"the reset page of an unknown link", e.browser(), "/reset-password?token=abc", http.StatusBadRequest},
	} {
		t.Run(tc.name+" carries the security headers", func(t *testing.T) {
			p := tc.b.get(tc.path)
			if p.Status != tc.status {
				t.Fatalf("status %d, want %d", p.Status, tc.status)
			}
			if diff := cmp.Diff(want, headersOf(p)); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("pages are not stored by caches", func(t *testing.T) {
		for _, path := range []string{"/login", "/documents", "/reset-password?token=abc", "/setup-password?token=abc"} {
			if got := signedIn.get(path).Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("%s: Cache-Control %q, want no-store", path, got)
			}
		}
	})
	t.Run("no page has inline script or style", func(t *testing.T) {
		for _, path := range []string{"/login", "/documents", "/documents/new", "/folders", "/account", "/account/password", "/forgot-password"} {
			p := signedIn.get(path)
			bad := findAll(p.Doc, func(n *html.Node) bool {
				if n.Data == "style" || (n.Data == "script" && attr(n, "src") == "") || hasAttr(n, "style") {
					return true
				}
				for _, a := range n.Attr {
					if strings.HasPrefix(a.Key, "on") {
						return true
					}
				}
				return false
			})
			if len(bad) > 0 {
				t.Errorf("%s: %d elements with inline script, style or handlers; first <%s>", path, len(bad), bad[0].Data)
			}
		}
	})
}

func TestStaticFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.browser()
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/static/style.css", http.StatusOK, ""},
		{"HEAD", "/static/style.css", http.StatusOK, ""},
		{"GET", "/static/does-not-exist.js", http.StatusNotFound, ""},
		{"HEAD", "/static/does-not-exist.js", http.StatusNotFound, ""},
		{"GET", "/static/", http.StatusNotFound, ""},
		// Static files take GET and HEAD only, whether or not one exists.
		{"POST", "/static/style.css", http.StatusMethodNotAllowed, "GET, HEAD"},
		{"POST", "/static/does-not-exist.js", http.StatusMethodNotAllowed, "GET, HEAD"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			p := b.do(tc.method, tc.path, nil, nil)
			if p.Status != tc.status {
				t.Fatalf("status %d, want %d", p.Status, tc.status)
			}
			if got := p.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if tc.status == http.StatusNotFound && tc.method == "GET" && !strings.Contains(p.Body, "There is no page at this address.") {
				t.Errorf("not the not-found page:\n%s", p.Body)
			}
		})
	}
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAuth(func(c *auth.Config) {
		c.Limits.Limit = 3
		c.Limits.LockThreshold = 5
	}), withHTTP(func(hc *httpapi.Config, wc *web.Config) {
		// Let the test speak for several client addresses.
		trusted := mustPrefixes(t, "127.0.0.1/32", "::1/128")
		hc.TrustedProxies, wc.TrustedProxies = trusted, trusted
	}))
	e.user("ed@example.com", "editor", "Engineering")

	t.Run("a signed-out reader is sent to sign in and back", func(t *testing.T) {
		b := e.browser()
		p := b.get("/documents?status=draft")
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/login?next=%2Fdocuments%3Fstatus%3Ddraft" {
			t.Fatalf("got %d to %q", p.Status, p.Header.Get("Location"))
		}
		p = b.post("/login", url.Values{"email": {"ed@example.com"}, "password": {testPassword}, "next": {"/documents?status=draft"}})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/documents?status=draft" {
			t.Fatalf("got %d to %q", p.Status, p.Header.Get("Location"))
		}
	})
	t.Run("the way back never leads to another site", func(t *testing.T) {
		for _, next := range []string{"//evil.example/x", "https://evil.example/", `/\evil.example`, "javascript:alert(1)"} {
			p := e.browser().post("/login", url.Values{"email": {"ed@example.com"}, "password": {testPassword}, "next": {next}})
			if got := p.Header.Get("Location"); got != "/documents" {
				t.Errorf("next %q: redirected to %q", next, got)
			}
		}
	})
	t.Run("the session cookie is the API's", func(t *testing.T) {
		b := e.browser()
		p := b.post("/login", url.Values{"email": {"ed@example.com"}, "password": {testPassword}})
		var c *http.Cookie
		for _, x := range (&http.Response{Header: p.Header}).Cookies() {
			if x.Name == "auth_token" {
				c = x
			}
		}
		if c == nil {
			t.Fatal("no auth_token cookie")
		}
		got := []any{c.Path, c.HttpOnly, c.SameSite, c.MaxAge}
		want := []any{"/", true, http.SameSiteLaxMode, int(auth.DefaultConfig().TokenTTL / time.Second)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cookie (-want +got):\n%s", diff)
		}
		req, _ := http.NewRequest("GET", e.server.URL+"/api/auth/me", nil)
		req.AddCookie(c)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the API answers the page's cookie %d", resp.StatusCode)
		}
	})
	t.Run("failed sign-ins show the limit's message, then the lock's", func(t *testing.T) {
		attempt := func(from, password string) *page {
			b := e.browser()
			b.header.Set("X-Forwarded-For", from)
			return b.post("/login", url.Values{"email": {"Ed@Example.com "}, "password": {password}})
		}
		type answer struct {
			Status     int
			Message    string
			RetryAfter bool
		}
		var got []answer
		for i := 0; i < 4; i++ {
			p := attempt("203.0.113.7", "wrong password number one")
			got = append(got, answer{p.Status, p.text("page-error"), p.Header.Get("Retry-After") != ""})
		}
		want := []answer{
			{401, "Invalid email or password", false},
			{401, "Invalid email or password", false},
			{401, "Invalid email or password", false},
			{429, "Too many login attempts, please try again later.", true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("answers from one address (-want +got):\n%s", diff)
		}
		// Two more failures from another address reach the lock (5).
		attempt("203.0.113.8", "wrong password number two")
		attempt("203.0.113.8", "wrong password number two")
		p := attempt("203.0.113.9", testPassword)
		if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
			t.Fatalf("locked account: status %d, Retry-After %q", p.Status, p.Header.Get("Retry-After"))
		}
		if !regexp.MustCompile(`(?i)locked`).MatchString(p.text("page-error")) {
			t.Errorf("lock message %q does not say the account is locked", p.text("page-error"))
		}
		if p.byID("sign-in") == nil {
			t.Error("the locked answer does not offer the form again")
		}
	})
}

func mustPrefixes(t *testing.T, ss ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, s := range ss {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor := e.user("ed@example.com", "editor", "Engineering")
	e.user("vi@example.com", "viewer", "Engineering")
	e.user("gu@example.com", "guest", "")
	doc := e.document(editor, documents.DocumentInput{
		Title: documents.Some("Runbook"), Content: documents.Some("Step one"), Visibility: documents.Some("public"),
	})
	private := e.document(editor, documents.DocumentInput{Title: documents.Some("Secret plans")})

	guest := e.signedIn("gu@example.com")
	viewer := e.signedIn("vi@example.com")

	t.Run("a guest gets a 403 that says what its role allows and how to sign out", func(t *testing.T) {
		for _, path := range []string{"/documents", "/documents/" + doc.ID, "/folders"} {
			p := guest.get(path)
			if p.Status != http.StatusForbidden {
				t.Errorf("%s: status %d, want 403", path, p.Status)
			}
			if p.byID("welcome") == nil || p.byID("welcome-sign-out") == nil {
				t.Errorf("%s: not the welcome page: %q", path, p.text("error-message"))
			}
		}
	})
	t.Run("a viewer reads but sees no edit, delete or new button", func(t *testing.T) {
		p := viewer.get("/documents/" + doc.ID)
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		var found []string
		for _, id := range []string{"edit-document", "delete-document", "doc-body"} {
			if p.byID(id) != nil {
				found = append(found, id)
			}
		}
		if diff := cmp.Diff([]string{"doc-body"}, found); diff != "" {
			t.Errorf("elements (-want +got):\n%s", diff)
		}
		for _, href := range p.links("") {
			if href == "/documents/new" || strings.HasSuffix(href, "/edit") {
				t.Errorf("viewer is offered %s", href)
			}
		}
	})
	t.Run("a viewer's edit is refused and changes nothing", func(t *testing.T) {
		if p := viewer.get("/documents/" + doc.ID + "/edit"); p.Status != http.StatusForbidden {
			t.Errorf("edit form: status %d, want 403", p.Status)
		}
		p := viewer.post("/documents/"+doc.ID, url.Values{
			"title": {"Defaced"}, "content": {"x"}, "content_type": {"markdown"}, "status": {"draft"},
			"visibility": {"public"}, "baseUpdatedAt": {doc.UpdatedAt.Format(time.RFC3339Nano)},
		})
		if p.Status != http.StatusForbidden {
			t.Errorf("save: status %d, want 403", p.Status)
		}
		for _, path := range []string{"/documents", "/documents/" + doc.ID + "/delete", "/documents/" + doc.ID + "/versions/1/restore", "/folders"} {
			if p := viewer.post(path, url.Values{"title": {"x"}, "name": {"x"}, "baseUpdatedAt": {doc.UpdatedAt.Format(time.RFC3339Nano)}}); p.Status != http.StatusForbidden {
				t.Errorf("POST %s: status %d, want 403", path, p.Status)
			}
		}
		if got := e.get(editor, doc.ID); got.Title != "Runbook" || got.Version != 1 {
			t.Errorf("document is now %q version %d", got.Title, got.Version)
		}
	})
	t.Run("a document the reader may not see is not found", func(t *testing.T) {
		for _, path := range []string{"/documents/" + private.ID, "/documents/" + private.ID + "/versions", "/documents/" + private.ID + "/versions/1"} {
			if p := viewer.get(path); p.Status != http.StatusNotFound {
				t.Errorf("%s: status %d, want 404", path, p.Status)
			}
		}
		p := viewer.get("/documents?search=secret")
		if got := p.links("documents"); len(got) != 0 {
			t.Errorf("search lists %v", got)
		}
	})
}

func TestCrossOriginPostsAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor := e.user("ed@example.com", "editor", "Engineering")
	doc := e.document(editor, documents.DocumentInput{Title: documents.Some("Runbook")})
	b := e.signedIn("ed@example.com")
	form := url.Values{
		"title": {"Changed from elsewhere"}, "content": {""}, "content_type": {"markdown"}, "status": {"draft"},
		"visibility": {"private"}, "baseUpdatedAt": {doc.UpdatedAt.Format(time.RFC3339Nano)},
	}
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"a cross-site fetch", http.Header{"Sec-Fetch-Site": {"cross-site"}}},
		{"an older browser's foreign Origin", http.Header{"Origin": {"http://evil.example"}}},
	} {
		t.Run(tc.name+" cannot save a document", func(t *testing.T) {
			p := b.do("POST", "/documents/"+doc.ID, form, tc.header)
			if p.Status != http.StatusForbidden {
				t.Fatalf("status %d, want 403", p.Status)
			}
			if got := e.get(editor, doc.ID); got.Title != "Runbook" {
				t.Errorf("title is now %q", got.Title)
			}
		})
		t.Run(tc.name+" cannot sign a browser in", func(t *testing.T) {
			fresh := e.browser()
			p := fresh.do("POST", "/login", url.Values{"email": {"ed@example.com"}, "password": {testPassword}}, tc.header)
			if p.Status != http.StatusForbidden || fresh.cookie() != "" {
				t.Errorf("status %d, cookie set: %v", p.Status, fresh.cookie() != "")
			}
		})
	}
	t.Run("a same-origin form is accepted", func(t *testing.T) {
		p := b.do("POST", "/documents/"+doc.ID, form, http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {e.server.URL}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("status %d, want 303; error %q", p.Status, p.text("page-error"))
		}
	})
}

// outboxLink takes the newest queued mail and returns its link.
func outboxLink(t *testing.T, e *env) string {
	t.Helper()
	mails, err := e.store.ClaimMail(context.Background(), time.Now().Add(time.Hour), time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(mails) == 0 {
		t.Fatal("no mail queued")
	}
	link := regexp.MustCompile(`https?://\S+`).FindString(mails[len(mails)-1].Text)
	if link == "" {
		t.Fatalf("no link in mail %q", mails[len(mails)-1].Text)
	}
	return link
}

func TestPasswordPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user("ed@example.com", "editor", "Engineering")
	const newPassword = "a brand new passphrase for ed"

	t.Run("forgot password answers the same for unknown emails", func(t *testing.T) {
		for _, email := range []string{"nobody@example.com", "ed@example.com"} {
			p := e.browser().post("/forgot-password", url.Values{"email": {email}})
			if p.Status != http.StatusOK || p.text("forgot-sent") != "If an account exists for that email, a reset link has been sent." {
				t.Errorf("%s: status %d, %q", email, p.Status, p.text("forgot-sent"))
			}
		}
	})
	link := outboxLink(t, e)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")
	path := u.Path + "?" + u.RawQuery

	t.Run("opening the link does not use the token up", func(t *testing.T) {
		b := e.browser()
		for i := 0; i < 2; i++ {
			p := b.get(path)
			if p.Status != http.StatusOK {
				t.Fatalf("GET %d: status %d", i+1, p.Status)
			}
			if got, _ := p.value("token"); got != token {
				t.Fatalf("GET %d: the form carries token %q", i+1, got)
			}
			if p.Header.Get("Cache-Control") != "no-store" || p.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("headers %v", p.Header)
			}
		}
	})
	t.Run("a weak password keeps the token usable", func(t *testing.T) {
		p := e.browser().post("/reset-password", url.Values{"token": {token}, "password": {"short"}, "confirm": {"short"}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("status %d", p.Status)
		}
		if got, _ := p.value("token"); got != token {
			t.Errorf("the form lost the token: %q", got)
		}
	})
	t.Run("two different passwords are refused before the service", func(t *testing.T) {
		p := e.browser().post("/reset-password", url.Values{"token": {token}, "password": {newPassword}, "confirm": {newPassword + "x"}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("status %d", p.Status)
		}
	})
	t.Run("the token resets the password once", func(t *testing.T) {
		p := e.browser().post("/reset-password", url.Values{"token": {token}, "password": {newPassword}, "confirm": {newPassword}})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/login?m=password-reset" {
			t.Fatalf("status %d to %q: %q", p.Status, p.Header.Get("Location"), p.text("page-error"))
		}
		p = e.browser().post("/reset-password", url.Values{"token": {token}, "password": {newPassword}, "confirm": {newPassword}})
		if p.Status != http.StatusBadRequest || !strings.Contains(p.text("page-error"), "invalid") {
			t.Errorf("second use: status %d, %q", p.Status, p.text("page-error"))
		}
		e.browser().login("ed@example.com", newPassword)
	})
	t.Run("changing the password signs out the other sessions", func(t *testing.T) {
		mine, other := e.browser(), e.browser()
		mine.login("ed@example.com", newPassword)
		other.login("ed@example.com", newPassword)
		p := mine.post("/account/password", url.Values{"current": {"not it at all, sorry"}, "password": {testPassword}, "confirm": {testPassword}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("wrong current password: status %d", p.Status)
		}
		p = mine.post("/account/password", url.Values{"current": {newPassword}, "password": {testPassword}, "confirm": {testPassword}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("status %d: %q", p.Status, p.text("page-error"))
		}
		if p := mine.get("/documents"); p.Status != http.StatusOK {
			t.Errorf("own session: status %d", p.Status)
		}
		if p := other.get("/documents"); p.Status != http.StatusSeeOther {
			t.Errorf("other session: status %d, want a redirect to sign in", p.Status)
		}
	})
	t.Run("signing out revokes the session", func(t *testing.T) {
		b := e.signedIn("ed@example.com")
		token := b.cookie()
		if p := b.post("/logout", nil); p.Status != http.StatusSeeOther || b.cookie() != "" {
			t.Fatalf("status %d, cookie kept: %v", p.Status, b.cookie() != "")
		}
		if _, err := e.auth.Authenticate(context.Background(), token); quire.ErrorCode(err) != quire.EUNAUTHORIZED {
			t.Errorf("the old token authenticates: %v", err)
		}
	})
}

func TestDocumentPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor, b := e.signedInUser("ed@example.com", "editor", "Engineering")
	e.user("al@example.com", "editor", "Engineering")

	t.Run("a document is created from the form", func(t *testing.T) {
		p := b.post("/documents", url.Values{
			"title": {"  Deploy guide "}, "summary": {"How we ship"}, "content": {"# Deploy\r\n\r\nRun make.\r\n"},
			"content_type": {"markdown"}, "status": {"draft"}, "visibility": {"department"}, "tags": {"ops, Deploy , ops"},
		})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("status %d: %q %v", p.Status, p.text("page-error"), p.Body[:min(len(p.Body), 300)])
		}
		id := strings.TrimSuffix(strings.TrimPrefix(p.Header.Get("Location"), "/documents/"), "?m=created")
		d := e.get(editor, id)
		got := []any{d.Title, d.Content, d.Visibility, d.Tags, d.DepartmentID != ""}
		want := []any{"Deploy guide", "# Deploy\n\nRun make.\n", "department", []string{"ops", "Deploy"}, true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("document (-want +got):\n%s", diff)
		}
	})
	t.Run("an invalid form is shown again with its errors", func(t *testing.T) {
		p := b.post("/documents", url.Values{"title": {" "}, "content": {"keep me"}, "content_type": {"markdown"}, "status": {"bogus"}, "visibility": {"private"}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("status %d", p.Status)
		}
		content, _ := p.value("content")
		got := []string{p.text("err-title"), p.text("err-status"), content}
		want := []string{"is required", "must be one of draft, review, published, archived", "keep me"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("the list applies the API's query rules", func(t *testing.T) {
		for _, title := range []string{"Alpha notes", "Beta notes", "Gamma plan"} {
			e.document(editor, documents.DocumentInput{Title: documents.Some(title), Status: documents.Some("published")})
			e.clock.Advance(time.Minute)
		}
		titles := func(p *page) []string { return textsOf(p.byID("documents"), tagged("h2")) }
		p := b.get("/documents?search=notes&sortBy=title&sortOrder=asc")
		if diff := cmp.Diff([]string{"Alpha notes", "Beta notes"}, titles(p)); diff != "" {
			t.Errorf("search (-want +got):\n%s", diff)
		}
		p = b.get("/documents?status=published&limit=2")
		if diff := cmp.Diff([]string{"Gamma plan", "Beta notes"}, titles(p)); diff != "" {
			t.Errorf("first page (-want +got):\n%s", diff)
		}
		next := find(p.Doc, func(n *html.Node) bool { return n.Data == "a" && attr(n, "rel") == "next" })
		if next == nil {
			t.Fatal("no link to the next page")
		}
		p = b.get(attr(next, "href"))
		if diff := cmp.Diff([]string{"Alpha notes"}, titles(p)); diff != "" {
			t.Errorf("second page (-want +got):\n%s", diff)
		}
		p = b.get("/documents?status=bogus&sortBy=nope")
		got := []any{p.Status, p.text("err-status"), p.text("err-sortBy")}
		want := []any{400, "must be one of draft, review, published, archived", "must be one of updated_at, created_at, title, status, relevance"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("invalid filters (-want +got):\n%s", diff)
		}
	})
	t.Run("an unknown page is a 404 page and a wrong method a 405", func(t *testing.T) {
		if p := b.get("/nowhere"); p.Status != http.StatusNotFound {
			t.Errorf("status %d", p.Status)
		}
		if p := b.get("/documents/not-an-id"); p.Status != http.StatusNotFound {
			t.Errorf("bad id: status %d", p.Status)
		}
		p := b.do("DELETE", "/login", nil, nil)
		if p.Status != http.StatusMethodNotAllowed || p.Header.Get("Allow") != "GET, HEAD, POST" {
			t.Errorf("status %d, Allow %q", p.Status, p.Header.Get("Allow"))
		}
	})
	t.Run("a form over the body limit is a 413 page", func(t *testing.T) {
		p := b.post("/documents", url.Values{"title": {"Big"}, "content": {strings.Repeat("x", 2<<20)}})
		if p.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d", p.Status)
		}
	})
}

func TestContentIsSanitised(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor, b := e.signedInUser("ed@example.com", "editor", "Engineering")
	for _, tc := range []struct {
		name, contentType, content, want string
	}{
		{
			name:        "HTML loses script, handlers and javascript: links",
			contentType: "html",
			content:     `<p onclick="steal()">Hi <b>there</b></p><script>window.pwned=1</script><img src="x.png" onerror="window.pwned=2" alt="x"><a href="javascript:window.pwned=3">go</a><iframe src="https://evil.example"></iframe><style>body{display:none}</style>`,
			want:        `<p>Hi <b>there</b></p><img src="x.png" alt="x"/>go`,
		},
		{
			name:        "Markdown renders, and its raw HTML is left out",
			contentType: "markdown",
			content:     "# Title\n\n<script>window.pwned=1</script>\n\nText with <img src=x onerror=alert(1)> and [a link](javascript:alert(1)).\n\n- [x] done\n",
			want:        "<h2 id=\"h-title\">Title<a class=\"anchor\" href=\"#h-title\" rel=\"nofollow noreferrer\" title=\"Link to this section\">§</a></h2>\n\n<p>Text with  and a link.</p>\n<ul>\n<li><input checked=\"\" disabled=\"\" type=\"checkbox\"/> done</li>\n</ul>\n",
		},
		{
			name:        "plain text is escaped",
			contentType: "plain",
			content:     "<script>alert(1)</script>\nline two & more",
			want:        "<pre class=\"plain\">&lt;script&gt;alert(1)&lt;/script&gt;\nline two &amp; more</pre>",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := e.document(editor, documents.DocumentInput{Title: documents.Some(tc.name), ContentType: documents.Some(tc.contentType), Content: documents.Some(tc.content)})
			p := b.get("/documents/" + d.ID)
			body := p.byID("doc-body")
			if body == nil {
				t.Fatalf("status %d: no #doc-body", p.Status)
			}
			if diff := cmp.Diff(tc.want, innerHTML(body)); diff != "" {
				t.Errorf("rendered content (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConflictPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	al := e.user("al@example.com", "editor", "Engineering")
	doc := e.document(ed, documents.DocumentInput{
		Title: documents.Some("Runbook"), Visibility: documents.Some("department"),
		Content: documents.Some("one\ntwo\nthree\nfour\nfive"),
	})
	b := e.signedIn("ed@example.com")
	form := func(p *page) url.Values {
		v := url.Values{}
		for _, name := range []string{"title", "summary", "content", "content_type", "status", "visibility", "folder_id", "tags", "baseUpdatedAt", "baseVersion", "resolving"} {
			if val, ok := p.value(name); ok {
				v.Set(name, val)
			}
		}
		return v
	}
	edit := b.get("/documents/" + doc.ID + "/edit")
	mine := form(edit)
	mine.Set("content", "ONE\ntwo\nthree\nfour\nfive")
	mine.Set("status", "review")

	// Al saves first, changing another line and the title.
	e.clock.Advance(time.Minute)
	if _, err := e.docs.Update(context.Background(), e.actor(al), doc.ID, documents.DocumentInput{
		Title: documents.Some("Runbook v2"), Content: documents.Some("one\ntwo\nthree\nfour\nFIVE"),
	}, doc.UpdatedAt); err != nil {
		t.Fatal(err)
	}

	p := b.post("/documents/"+doc.ID, mine)
	t.Run("a stale save shows the conflict and saves nothing", func(t *testing.T) {
		if p.Status != http.StatusConflict || p.byID("conflict") == nil {
			t.Fatalf("status %d, conflict section: %v", p.Status, p.byID("conflict") != nil)
		}
		if got := e.get(ed, doc.ID); got.Version != 2 || got.Status != "draft" {
			t.Errorf("document is at version %d, status %s", got.Version, got.Status)
		}
	})
	t.Run("changes on different lines and fields are merged into the form", func(t *testing.T) {
		got := form(p)
		want := url.Values{}
		for k, v := range mine {
			want[k] = v
		}
		cur := e.get(ed, doc.ID)
		want.Set("title", "Runbook v2")
		want.Set("content", "ONE\ntwo\nthree\nfour\nFIVE")
		want.Set("baseUpdatedAt", cur.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
		want.Set("baseVersion", "2")
		want.Set("resolving", "1")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("proposed form (-want +got):\n%s", diff)
		}
	})
	t.Run("saving the proposal applies both edits", func(t *testing.T) {
		res := b.post("/documents/"+doc.ID, form(p))
		if res.Status != http.StatusSeeOther {
			t.Fatalf("status %d: %q", res.Status, res.text("page-error"))
		}
		got := e.get(ed, doc.ID)
		if diff := cmp.Diff([]any{"Runbook v2", "ONE\ntwo\nthree\nfour\nFIVE", "review", 3}, []any{got.Title, got.Content, got.Status, got.Version}); diff != "" {
			t.Errorf("document (-want +got):\n%s", diff)
		}
	})
	t.Run("edits of the same line are marked and must be resolved", func(t *testing.T) {
		cur := e.get(ed, doc.ID)
		stale := form(b.get("/documents/" + doc.ID + "/edit"))
		if _, err := e.docs.Update(context.Background(), e.actor(al), doc.ID, documents.DocumentInput{Content: documents.Some("ONE\nTWO (al)\nthree\nfour\nFIVE")}, cur.UpdatedAt); err != nil {
			t.Fatal(err)
		}
		stale.Set("content", "ONE\nTWO (ed)\nthree\nfour\nFIVE")
		p := b.post("/documents/"+doc.ID, stale)
		content, _ := p.value("content")
		want := "ONE\n<<<<<<< your version\nTWO (ed)\n=======\nTWO (al)\n>>>>>>> their version\nthree\nfour\nFIVE"
		if diff := cmp.Diff(want, content); diff != "" {
			t.Fatalf("merged content (-want +got):\n%s", diff)
		}
		res := b.post("/documents/"+doc.ID, form(p))
		if res.Status != http.StatusBadRequest || res.byID("conflict") == nil {
			t.Fatalf("saving the markers: status %d", res.Status)
		}
		resolved := form(p)
		resolved.Set("content", "ONE\nTWO (both)\nthree\nfour\nFIVE")
		if res := b.post("/documents/"+doc.ID, resolved); res.Status != http.StatusSeeOther {
			t.Fatalf("resolved: status %d: %q", res.Status, res.text("page-error"))
		}
		if got := e.get(ed, doc.ID).Content; got != "ONE\nTWO (both)\nthree\nfour\nFIVE" {
			t.Errorf("content %q", got)
		}
	})
}

func TestVersionPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Policy"), Content: documents.Some("first")})
	ctx := context.Background()
	e.clock.Advance(time.Minute)
	cur, err := e.docs.Update(ctx, e.actor(ed), doc.ID, documents.DocumentInput{Content: documents.Some("second")}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b := e.signedIn("ed@example.com")

	t.Run("the versions list links each version and its comparison", func(t *testing.T) {
		p := b.get("/documents/" + doc.ID + "/versions")
		want := []string{
			"/documents/" + doc.ID + "/versions/2",
			"/documents/" + doc.ID + "/versions/1",
			"/documents/" + doc.ID + "/versions/1/diff",
		}
		if diff := cmp.Diff(want, p.links("versions")); diff != "" {
			t.Errorf("links (-want +got):\n%s", diff)
		}
	})
	t.Run("the comparison shows the changed lines", func(t *testing.T) {
		p := b.get("/documents/" + doc.ID + "/versions/1/diff")
		var rows []string
		for _, tr := range findAll(p.Doc, func(n *html.Node) bool {
			return n.Data == "tr" && (attr(n, "class") == "ins" || attr(n, "class") == "del")
		}) {
			rows = append(rows, attr(tr, "class")+" "+textOf(find(tr, func(n *html.Node) bool { return attr(n, "class") == "code" })))
		}
		if diff := cmp.Diff([]string{"del second", "ins first"}, rows); diff != "" {
			t.Errorf("diff rows (-want +got):\n%s", diff)
		}
	})
	t.Run("a restore over a newer save is refused", func(t *testing.T) {
		p := b.post("/documents/"+doc.ID+"/versions/1/restore", url.Values{"baseUpdatedAt": {doc.UpdatedAt.Format(time.RFC3339Nano)}})
		if p.Status != http.StatusConflict {
			t.Fatalf("status %d", p.Status)
		}
		if got := e.get(ed, doc.ID); got.Version != 2 {
			t.Errorf("version %d", got.Version)
		}
	})
	t.Run("a restore records the old version as the newest", func(t *testing.T) {
		p := b.post("/documents/"+doc.ID+"/versions/1/restore", url.Values{"baseUpdatedAt": {cur.UpdatedAt.Format(time.RFC3339Nano)}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("status %d: %q", p.Status, p.text("page-error"))
		}
		got := e.get(ed, doc.ID)
		if diff := cmp.Diff([]any{"first", 3}, []any{got.Content, got.Version}); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("a version number that is not one is not found", func(t *testing.T) {
		for _, n := range []string{"0", "x", "99"} {
			if p := b.get("/documents/" + doc.ID + "/versions/" + n); p.Status != http.StatusNotFound {
				t.Errorf("version %s: status %d", n, p.Status)
			}
		}
	})
}

func TestFolderPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed, b := e.signedInUser("ed@example.com", "editor", "Engineering")
	names := func() []string {
		return textsOf(b.get("/folders").byID("folders"), func(n *html.Node) bool { return attr(n, "class") == "folder-name" })
	}
	if p := b.post("/folders", url.Values{"name": {"Engineering"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("create: status %d %q", p.Status, p.text("page-error"))
	}
	folders, err := e.docs.Folders(context.Background(), e.actor(ed))
	if err != nil || len(folders) != 1 {
		t.Fatalf("folders %v, %v", folders, err)
	}
	eng := folders[0]
	if p := b.post("/folders", url.Values{"name": {"Runbooks"}, "parent_id": {eng.ID}}); p.Status != http.StatusSeeOther {
		t.Fatalf("create child: status %d", p.Status)
	}
	t.Run("folders show as a tree", func(t *testing.T) {
		if diff := cmp.Diff([]string{"Engineering", "Runbooks"}, names()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("a folder that is not empty is not deleted", func(t *testing.T) {
		p := b.post("/folders/"+eng.ID+"/delete", nil)
		if p.Status != http.StatusConflict {
			t.Errorf("status %d", p.Status)
		}
		// Said once, where the reader pressed Delete, not again at the top.
		main := textOf(find(p.Doc, func(n *html.Node) bool { return n.Data == "main" }))
		if n := strings.Count(strings.ToLower(main), "move or delete"); n != 1 || p.byID("page-error") != nil ||
			!strings.Contains(p.text("delete-refused"), "not deleted") {
			t.Errorf("the refusal is said %d times (page-error %v): %q", n, p.byID("page-error") != nil, main)
		}
	})
	t.Run("a folder cannot move into itself", func(t *testing.T) {
		p := b.post("/folders/"+eng.ID, url.Values{"name": {"Engineering"}, "parent_id": {eng.ID}})
		if p.Status != http.StatusBadRequest {
			t.Errorf("status %d", p.Status)
		}
	})
	t.Run("a folder is renamed", func(t *testing.T) {
		p := b.post("/folders/"+eng.ID, url.Values{"name": {"Platform"}, "parent_id": {""}})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/folders/"+eng.ID+"?m=folder-saved" {
			t.Fatalf("status %d, location %q", p.Status, p.Header.Get("Location"))
		}
		if diff := cmp.Diff([]string{"Platform", "Runbooks"}, names()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	// A chain Platform / Runbooks / Oncall / Pager, to see paths and labels.
	child := func(name, parent string) quire.Folder {
		t.Helper()
		f, err := e.docs.CreateFolder(context.Background(), e.actor(ed), documents.FolderInput{Name: documents.Some(name), ParentID: documents.Some(parent)})
		if err != nil {
			t.Fatal(err)
		}
		return *f
	}
	all, err := e.docs.Folders(context.Background(), e.actor(ed))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(f quire.Folder) bool { return f.Name == "Runbooks" })
	if i < 0 {
		t.Fatalf("no Runbooks in %v", all)
	}
	runbooks := all[i]
	oncall := child("Oncall", runbooks.ID)
	pager := child("Pager", oncall.ID)
	options := func(p *page, id string) []string { return textsOf(p.byID(id), tagged("option")) }
	t.Run("a folder's page shows its path, its subfolders, and the folders it may move into", func(t *testing.T) {
		p := b.get("/folders/" + runbooks.ID)
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		got := []any{p.text("folder-crumbs"), p.links("subfolders"), options(p, "edit-parent")}
		want := []any{"Folders / Platform", []string{"/folders/" + oncall.ID}, []string{"(top level)", "Platform"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if v, _ := p.value("parent_id"); v != eng.ID {
			t.Errorf("the parent selected is %q, want %q", v, eng.ID)
		}
	})
	t.Run("a select names a deep folder by the end of its path", func(t *testing.T) {
		want := []string{"(none)", "Platform", "Platform / Runbooks", "Platform / Runbooks / Oncall", "… / Runbooks / Oncall / Pager"}
		if diff := cmp.Diff(want, options(b.get("/documents/new"), "folder_id")); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("a document shows the full path of its folder", func(t *testing.T) {
		doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Paging"), FolderID: documents.Some(pager.ID)})
		crumbs := find(b.get("/documents/"+doc.ID).Doc, func(n *html.Node) bool { return attr(n, "class") == "crumbs" })
		if got := textOf(crumbs); got != "Documents / Platform / Runbooks / Oncall / Pager" {
			t.Errorf("crumbs %q", got)
		}
	})
	t.Run("a move that fails is shown on the folder's page with the values sent", func(t *testing.T) {
		p := b.post("/folders/"+runbooks.ID, url.Values{"name": {"Runbooks 2"}, "parent_id": {pager.ID}})
		if p.Status != http.StatusBadRequest {
			t.Fatalf("status %d", p.Status)
		}
		name, _ := p.value("name")
		got := []string{p.text("err-parent_id"), name, p.text("folder-crumbs")}
		want := []string{"must not be the folder itself or one of its descendants", "Runbooks 2", "Folders / Platform"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("an unknown folder's page is not found", func(t *testing.T) {
		for _, id := range []string{"not-an-id", pager.ID + "x"} {
			if p := b.get("/folders/" + id); p.Status != http.StatusNotFound {
				t.Errorf("%s: status %d", id, p.Status)
			}
		}
	})
}

func TestHostileInputIsNeverAServerError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Target")})
	b := e.signedIn("ed@example.com")
	docPath := "/documents/" + doc.ID
	manyTags := strings.TrimSuffix(strings.Repeat("t,", 60), ",")
	for _, path := range []string{
		"/documents?page=99999999999999999999", "/documents?page=0", "/documents?limit=-1", "/documents?limit=1e9",
		"/documents?search=%00", "/documents?search=%FF%FE", "/documents?search=" + url.QueryEscape(strings.Repeat("w ", 40)),
		"/documents?tags=" + manyTags, "/documents?sortBy=%27%3BDROP", "/documents?%zz", "/documents?folderId=..%2F",
		"/documents/%00", "/documents/" + strings.Repeat("a", 5000), docPath + "/versions/99999999999999999999",
		docPath + "/versions/-1/diff", "/reset-password?token=%FF", "/setup-password?token=" + strings.Repeat("x", 300),
		"/static/../web.go", "/static/", "/static/style.css?v=nope", "/login?next=%0d%0aX:%20y",
		"/folders/%00", "/folders/" + strings.Repeat("a", 5000), "/folders?parent=%FF",
	} {
		if p := b.get(path); p.Status >= 500 {
			t.Errorf("GET %s: status %d", path, p.Status)
		}
	}
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/documents", url.Values{"title": {"\x00"}, "content": {"\xff"}}},
		{"/documents", url.Values{"title": {"ok"}, "content_type": {"exe"}, "visibility": {"project"}, "project_id": {"nope"}, "folder_id": {"nope"}}},
		{docPath, url.Values{"title": {"x"}, "baseUpdatedAt": {"yesterday"}}},
		{docPath, url.Values{"title": {"x"}, "baseUpdatedAt": {"0001-01-01T00:00:00Z"}}},
		{docPath, url.Values{"title": {strings.Repeat("x", 400)}, "baseUpdatedAt": {doc.UpdatedAt.Format(time.RFC3339Nano)}, "tags": {manyTags}}},
		{docPath + "/versions/abc/restore", url.Values{"baseUpdatedAt": {doc.UpdatedAt.Format(time.RFC3339Nano)}}},
		{docPath + "/versions/1/restore", url.Values{"baseUpdatedAt": {"soon"}}},
		{"/folders", url.Values{"name": {"\xff"}}},
		{"/folders", url.Values{"name": {"ok"}, "parent_id": {"not-an-id"}}},
		{"/folders/not-an-id", url.Values{"name": {"x"}}},
		{"/folders/not-an-id/delete", nil},
		{"/login", url.Values{"email": {"\xff@x"}, "password": {"\x00"}, "timezone": {"Mars/Olympus"}}},
		{"/reset-password", url.Values{"token": {"\xff"}, "password": {"p"}, "confirm": {"p"}}},
		{"/setup-password", url.Values{"token": {strings.Repeat("t", 1000)}, "password": {"long enough password here"}, "confirm": {"long enough password here"}}},
		{"/forgot-password", url.Values{"email": {strings.Repeat("e", 5000)}}},
		{"/account/password", url.Values{"current": {"\xff"}, "password": {"x"}, "confirm": {"x"}}},
	} {
		if p := b.post(tc.path, tc.form); p.Status >= 500 {
			t.Errorf("POST %s %v: status %d", tc.path, tc.form, p.Status)
		}
	}
	if p := b.do("POST", "/documents", nil, http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}); p.Status >= 500 {
		t.Errorf("broken multipart: status %d", p.Status)
	}
	if got := e.get(ed, doc.ID); got.Version != 1 {
		t.Errorf("the document changed: version %d", got.Version)
	}
}
