package acceptance

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"quire"
)

// rows returns the data-id of every element of class cls in the page.
func (p *page) rows(cls string) []string {
	var ids []string
	for _, n := range findAll(p.Doc, func(n *html.Node) bool {
		return n.Data == "tr" && strings.Contains(" "+attr(n, "class")+" ", " "+cls+" ")
	}) {
		ids = append(ids, attr(n, "data-id"))
	}
	return ids
}

// apiStatus sends a request to the API with the bearer token and returns
// the status.
func (e *env) apiStatus(method, path, token string, body string) int {
	e.t.Helper()
	req, err := http.NewRequest(method, e.server.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestAccountPage(t *testing.T) {
	t.Parallel()
	t.Run("a token is created, its secret shown once, used on the API, and revoked", func(t *testing.T) {
		e := newEnv(t)
		_, b := e.signedInUser("ada@example.com", "editor", "")
		p := b.get("/account")
		if p.Status != http.StatusOK || p.byID("tokens-empty") == nil {
			t.Fatalf("account page: %d, tokens-empty shown: %v", p.Status, p.byID("tokens-empty") != nil)
		}
		p = b.post("/account/tokens", url.Values{"name": {"nightly export"}, "scope": {"read"}, "days": {"30"}})
		if p.Status != http.StatusOK {
			t.Fatalf("create: %d %q", p.Status, p.text("page-error"))
		}
		secret := attr(p.byID("token-secret"), "value")
		if !strings.HasPrefix(secret, quire.APITokenPrefix) {
			t.Fatalf("secret %q", secret)
		}
		if cc := p.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
			t.Errorf("the page with the secret has Cache-Control %q", cc)
		}
		if got := e.apiStatus("GET", "/api/documentation/documents", secret, ""); got != http.StatusOK {
			t.Errorf("GET with the new token: %d", got)
		}
		if got := e.apiStatus("POST", "/api/documentation/documents", secret, `{"title":"x","content":"y"}`); got != http.StatusForbidden {
			t.Errorf("POST with the read token: %d, want 403", got)
		}
		p = b.get("/account")
		if strings.Contains(p.Body, secret) || strings.Contains(p.Body, secret[len(quire.APITokenPrefix):]) {
			t.Fatal("the account page shows the secret again")
		}
		ids := p.rows("token")
		if len(ids) != 1 {
			t.Fatalf("%d tokens listed, want 1", len(ids))
		}
		if name := textOf(find(p.Doc, func(n *html.Node) bool { return attr(n, "class") == "token-name" })); name != "nightly export" {
			t.Errorf("token name %q", name)
		}
		p = b.post("/account/tokens/"+ids[0]+"/revoke", nil)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/account?m=token-revoked" {
			t.Fatalf("revoke: %d to %q", p.Status, p.Header.Get("Location"))
		}
		if got := e.apiStatus("GET", "/api/documentation/documents", secret, ""); got != http.StatusUnauthorized {
			t.Errorf("GET with the revoked token: %d, want 401", got)
		}
		if p := b.get("/account"); len(p.rows("token")) != 0 {
			t.Errorf("the revoked token is still listed")
		}
	})

	t.Run("a token out of bounds is refused with the form kept", func(t *testing.T) {
		e := newEnv(t)
		_, b := e.signedInUser("ada@example.com", "editor", "")
		p := b.post("/account/tokens", url.Values{"name": {" "}, "scope": {"write"}, "days": {"90"}})
		if p.Status != http.StatusBadRequest || p.text("err-name") == "" {
			t.Fatalf("empty name: %d, name error %q", p.Status, p.text("err-name"))
		}
		if !hasAttr(p.byID("scope-write"), "checked") {
			t.Error("the scope sent is not kept")
		}
		p = b.post("/account/tokens", url.Values{"name": {"x"}, "scope": {"read"}, "days": {"400"}})
		if p.Status != http.StatusBadRequest || p.text("err-expiresAt") == "" {
			t.Fatalf("400 days: %d, expiry error %q", p.Status, p.text("err-expiresAt"))
		}
		if p := b.get("/account"); len(p.rows("token")) != 0 {
			t.Error("a refused token was created")
		}
	})

	t.Run("sessions are listed and signed out one by one or all but this one", func(t *testing.T) {
		e := newEnv(t)
		e.user("ada@example.com", "editor", "")
		e.user("bob@example.com", "editor", "")
		b1, b2, b3 := e.browser(), e.browser(), e.browser()
		b1.header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
		b2.header.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0) Chrome/141.0 Safari/537.36")
		for _, b := range []*browser{b1, b2, b3} {
			b.login("ada@example.com", testPassword)
		}
		bob := e.signedIn("bob@example.com")

		p := b1.get("/account")
		ids := p.rows("session")
		if len(ids) != 3 {
			t.Fatalf("%d sessions listed, want 3", len(ids))
		}
		current := p.rows("current")
		if len(current) != 1 || p.byID("revoke-other-sessions") == nil {
			t.Fatalf("current sessions %v; sign out others offered: %v", current, p.byID("revoke-other-sessions") != nil)
		}
		if !strings.Contains(p.Body, "Firefox on Linux") || !strings.Contains(p.Body, "Chrome on Windows") || !strings.Contains(p.Body, "127.0.0.1") {
			t.Errorf("the list does not name the browsers and address:\n%s", textOf(p.byID("sessions")))
		}

		// Bob's session id is not Ada's to revoke.
		bobID := bob.get("/account").rows("current")[0]
		if p := b1.post("/account/sessions/"+bobID+"/revoke", nil); p.Status != http.StatusNotFound {
			t.Errorf("revoking another user's session: %d, want 404", p.Status)
		}
		if p := bob.get("/documents"); p.Status != http.StatusOK {
			t.Errorf("bob after ada's try: %d", p.Status)
		}

		b2ID := b2.get("/account").rows("current")[0]
		p = b1.post("/account/sessions/"+b2ID+"/revoke", nil)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/account?m=session-revoked" {
			t.Fatalf("revoke: %d to %q", p.Status, p.Header.Get("Location"))
		}
		if p := b2.get("/documents"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/login") {
			t.Errorf("the revoked browser: %d to %q, want the sign-in page", p.Status, p.Header.Get("Location"))
		}
		p = b1.post("/account/sessions/revoke-others", nil)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("revoke others: %d", p.Status)
		}
		if p := b3.get("/documents"); p.Status != http.StatusSeeOther {
			t.Errorf("the third browser after sign out of others: %d", p.Status)
		}
		p = b1.get("/account")
		if ids := p.rows("session"); len(ids) != 1 || p.byID("revoke-other-sessions") != nil {
			t.Errorf("sessions after signing out the others: %v", ids)
		}
		// Signing out this session is a sign-out.
		p = b1.post("/account/sessions/"+p.rows("current")[0]+"/revoke", nil)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/login?m=signed-out" || b1.cookie() != "" {
			t.Errorf("revoking this session: %d to %q, cookie kept: %v", p.Status, p.Header.Get("Location"), b1.cookie() != "")
		}
	})

	t.Run("a personal API token in the cookie signs no one in", func(t *testing.T) {
		e := newEnv(t)
		_, b := e.signedInUser("ada@example.com", "editor", "")
		p := b.post("/account/tokens", url.Values{"name": {"x"}, "scope": {"write"}, "days": {"7"}})
		secret := attr(p.byID("token-secret"), "value")
		thief := e.browser()
		u, _ := url.Parse(e.server.URL)
		thief.client.Jar.SetCookies(u, []*http.Cookie{{Name: "auth_token", Value: secret}})
		if p := thief.get("/account"); p.Status != http.StatusSeeOther {
			t.Errorf("account page with a token as the cookie: %d, want a redirect to sign in", p.Status)
		}
		if p := thief.get("/api/documentation/documents"); p.Status != http.StatusUnauthorized {
			t.Errorf("API with a token as the cookie: %d, want 401", p.Status)
		}
	})

	t.Run("the account forms are refused cross-origin", func(t *testing.T) {
		e := newEnv(t)
		_, b := e.signedInUser("ada@example.com", "editor", "")
		cross := http.Header{"Sec-Fetch-Site": {"cross-site"}}
		p := b.do("POST", "/account/tokens", url.Values{"name": {"x"}, "scope": {"write"}, "days": {"7"}}, cross)
		if p.Status != http.StatusForbidden {
			t.Errorf("cross-site token creation: %d, want 403", p.Status)
		}
		if p := b.do("POST", "/account/sessions/revoke-others", url.Values{}, cross); p.Status != http.StatusForbidden {
			t.Errorf("cross-site sign-out of others: %d, want 403", p.Status)
		}
		if p := b.get("/account"); len(p.rows("token")) != 0 {
			t.Error("a cross-site form created a token")
		}
	})
}
