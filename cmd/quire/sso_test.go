package main

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"quire/internal/oidctest"
	"quire/pgtest"
)

// TestServeSingleSignOn: the --oidc-* settings, given as QUIRE_ twins,
// reach the sign-in page and the start of a sign-in at the provider.
func TestServeSingleSignOn(t *testing.T) {
	t.Parallel()
	const public = "https://docs.example.com"
	idp := oidctest.Start(t, public+"/auth/oidc/callback")
	getenv := env(map[string]string{
		"QUIRE_DB":                 migratedDB(t),
		"QUIRE_PUBLIC_URL":         public,
		"QUIRE_OIDC_ISSUER":        idp.Issuer,
		"QUIRE_OIDC_CLIENT_ID":     idp.ClientID,
		"QUIRE_OIDC_CLIENT_SECRET": idp.ClientSecret,
		"QUIRE_OIDC_NAME":          "Acme SSO",
		"QUIRE_OIDC_DOMAINS":       "acme.com, @Example.org",
		"QUIRE_OIDC_DEFAULT_ROLE":  "editor",
		"QUIRE_OIDC_ONLY":          "true",
	})
	s := startServe(t, getenv)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	res, err := noRedirect.Get(s.base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "Sign in with Acme SSO") || strings.Contains(string(body), `name="password"`) {
		t.Fatalf("sign-in page under --oidc-only:\n%s", body)
	}

	res, err = noRedirect.Get(s.base + "/auth/oidc/start")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := res.Location()
	if err != nil {
		t.Fatalf("start: %d without a redirect", res.StatusCode)
	}
	q := loc.Query()
	if !strings.HasPrefix(loc.String(), idp.Issuer+"/") || q.Get("client_id") != idp.ClientID ||
		q.Get("redirect_uri") != public+"/auth/oidc/callback" || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("state") == "" || q.Get("nonce") == "" || !strings.Contains(q.Get("scope"), "openid") {
		t.Fatalf("start sent the browser to %s", loc)
	}
	// The provider takes the request (its redirect URI is the registered one).
	res, err = noRedirect.Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if login, err := res.Location(); err != nil || !strings.HasPrefix(login.Path, "/login") {
		t.Fatalf("the provider answered %d to %v", res.StatusCode, login)
	}

	// The first administrator keeps the password as its way in.
	m := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no first administrator printed: %q", s.stdout.String())
	}
	res, err = http.Post(s.base+"/api/auth/login", "application/json",
		strings.NewReader(`{"email":"admin@localhost","password":"`+m[1]+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the administrator's password sign-in under --oidc-only: %d", res.StatusCode)
	}
}

func TestServeSingleSignOnSettingsAreChecked(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "quire.db")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"--oidc-only without an issuer", []string{"--oidc-only"}, "--oidc-only needs --oidc-issuer"},
		{"an issuer without a client id", []string{"--oidc-issuer", "https://id.example.com"}, "needs --oidc-client-id"},
		{"an issuer that is no URL", []string{"--oidc-issuer", "id.example.com", "--oidc-client-id", "q"}, "must be an https:// URL"},
		{"an unknown default role", []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "q", "--oidc-default-role", "boss"}, `--oidc-default-role "boss" is not a role`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, err := serveRefused(t, env(map[string]string{"QUIRE_DB": db}), c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("serve %v: %v (stdout %q, stderr %q); want %q", c.args, err, out, stderr, c.want)
			}
		})
	}
}

// TestSingleSignOnAcrossNodes: a sign-in begun on node A comes back on node
// B (two quire serve on one PostgreSQL database), which finishes it: the
// flow lives in the database, not in A's memory. The session B opens works
// on A, and the flow cannot be finished twice.
func TestSingleSignOnAcrossNodes(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.Start(t)
	const public = "http://docs.example.test"
	idp := oidctest.Start(t, public+"/auth/oidc/callback", oidctest.User{ID: "sub-1", Username: "kim", Password: "kim-pw",
		Email: "kim@acme.com", EmailVerified: true, Name: "Kim"})
	getenv := env(map[string]string{
		"QUIRE_DB": dbURL, "QUIRE_PUBLIC_URL": public,
		"QUIRE_OIDC_ISSUER": idp.Issuer, "QUIRE_OIDC_CLIENT_ID": idp.ClientID, "QUIRE_OIDC_CLIENT_SECRET": idp.ClientSecret,
		"QUIRE_OIDC_DOMAINS": "acme.com",
	})
	a := startServe(t, getenv)
	b := startServe(t, getenv)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	follow := func(res *http.Response, err error) *http.Response {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if _, err := res.Location(); err != nil {
			t.Fatalf("%s: %d without a redirect", res.Request.URL, res.StatusCode)
		}
		return res
	}
	loc := func(res *http.Response) string { u, _ := res.Location(); return u.String() }

	start := follow(noRedirect.Get(a.base + "/auth/oidc/start"))
	var stateCookie *http.Cookie
	for _, c := range start.Cookies() {
		if c.Name == "quire_sso_state" {
			stateCookie = c
		}
	}
	if stateCookie == nil {
		t.Fatal("node A set no state cookie")
	}
	login := follow(noRedirect.Get(loc(start)))
	id := mustParse(t, loc(login)).Query().Get("authRequestID")
	back := follow(noRedirect.Get(loc(follow(noRedirect.PostForm(idp.LoginAction(),
		url.Values{"username": {"kim"}, "password": {"kim-pw"}, "id": {id}})))))
	callback := strings.TrimPrefix(loc(back), public)

	finish := func(base string) *http.Response {
		req, _ := http.NewRequest("GET", base+callback, nil)
		req.AddCookie(&http.Cookie{Name: stateCookie.Name, Value: stateCookie.Value})
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := finish(b.base)
	var token string
	for _, c := range res.Cookies() {
		if c.Name == "auth_token" {
			token = c.Value
		}
	}
	if res.StatusCode != http.StatusSeeOther || token == "" {
		t.Fatalf("node B finishing A's sign-in: %d, session %v", res.StatusCode, token != "")
	}
	me := send(t, "GET", a.base+"/api/auth/me", token, "", nil)
	me.Body.Close()
	if me.StatusCode != http.StatusOK {
		t.Fatalf("the session from B on A: %d", me.StatusCode)
	}
	if res := finish(a.base); res.StatusCode != http.StatusForbidden {
		t.Fatalf("the same callback again, on A: %d, want 403", res.StatusCode)
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
