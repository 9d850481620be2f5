package main

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"quire/internal/oidctest"
)

// TestServeSingleSignOn: the --oidc-* settings, given as QUIRE_ twins,
// reach the sign-in page and the start of a sign-in at the provider.
func TestServeSingleSignOn(t *testing.T) {
	const public = "https://docs.example.com"
	idp := oidctest.Start(t, public+"/auth/oidc/callback")
	getenv := env(map[string]string{
		"QUIRE_DB":                 filepath.Join(t.TempDir(), "quire.db"),
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
