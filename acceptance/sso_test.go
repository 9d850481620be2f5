package acceptance

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/auth"
	"quire/internal/oidctest"
	"quire/sso"
)

// ssoEnv is quire with single sign-on through a real OpenID provider
// (internal/oidctest) started for the test.
type ssoEnv struct {
	*env
	idp  *oidctest.Provider
	logs *syncBuffer // package sso's log
}

// The people of the provider.
var (
	idpAda = oidctest.User{ID: "sub-ada", Username: "ada", Password: "ada-pw", Email: "Ada@Example.com", EmailVerified: true, Name: "Ada Lovelace"}
	idpNew = oidctest.User{ID: "sub-new", Username: "new", Password: "new-pw", Email: "newcomer@example.com", EmailVerified: true, Name: "Nora Newcomer"}
	idpOut = oidctest.User{ID: "sub-out", Username: "out", Password: "out-pw", Email: "bob@other.org", EmailVerified: true, Name: "Bob Outsider"}
	idpEve = oidctest.User{ID: "sub-eve", Username: "eve", Password: "eve-pw", Email: "eve@example.com", EmailVerified: false, Name: "Eve"}
)

func newSSOEnv(t *testing.T, configure func(*sso.Config), opts ...envOption) *ssoEnv {
	t.Helper()
	s := &ssoEnv{logs: &syncBuffer{}}
	opts = append(opts, func(c *envConfig) {
		c.sso = func(store quire.Store, as *auth.Service) *sso.Service {
			s.idp = oidctest.Start(t, as.Config().PublicURL+sso.CallbackPath, idpAda, idpNew, idpOut, idpEve)
			cfg := sso.Config{Issuer: s.idp.Issuer, ClientID: s.idp.ClientID, ClientSecret: s.idp.ClientSecret,
				Name: "Example ID", Domains: []string{"example.com"}, PublicURL: as.Config().PublicURL}
			if configure != nil {
				configure(&cfg)
			}
			svc, err := sso.New(context.Background(), store, as, cfg, slog.New(slog.NewTextHandler(s.logs, nil)))
			if err != nil {
				t.Fatalf("sso.New: %v", err)
			}
			return svc
		}
	})
	s.env = newEnv(t, opts...)
	// The provider signs with the wall clock and quire checks its tokens
	// with it; the sessions quire opens follow the env's clock, which must
	// not be behind.
	s.clock.Set(time.Now().UTC())
	return s
}

// authorize takes b from quire's start of a sign-in through the provider's
// login page as username, and returns the path (with code and state) on
// quire that the provider sends the browser back to, not yet opened.
func (s *ssoEnv) authorize(b *browser, username, password string) string {
	s.t.Helper()
	return s.authorizeFrom(b, sso.StartPath, username, password)
}

// authorizeFrom is authorize from start (the start path with its query).
func (s *ssoEnv) authorizeFrom(b *browser, start, username, password string) string {
	t := s.t
	t.Helper()
	p := b.get(start)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("start: status %d", p.Status)
	}
	idp := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := func(resp *http.Response, err error) *url.URL {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			t.Fatalf("%s: status %d without a redirect", resp.Request.URL, resp.StatusCode)
		}
		return loc
	}
	login := next(idp.Get(p.Header.Get("Location")))
	id := login.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("the provider sent the browser to %s, not to its login page", login)
	}
	back := next(idp.Get(next(idp.PostForm(s.idp.LoginAction(),
		url.Values{"username": {username}, "password": {password}, "id": {id}})).String()))
	if !strings.HasPrefix(back.String(), s.server.URL+sso.CallbackPath) {
		t.Fatalf("the provider sent the browser back to %s", back)
	}
	return strings.TrimPrefix(back.String(), s.server.URL)
}

// signIn signs b in through the provider and returns quire's answer to the
// callback.
func (s *ssoEnv) signIn(b *browser, u oidctest.User) *page {
	s.t.Helper()
	return b.get(s.authorize(b, u.Username, u.Password))
}

// wantRefused checks that p refuses the sign-in with a message containing
// why, and that b holds no session.
func wantRefused(t *testing.T, b *browser, p *page, why string) {
	t.Helper()
	if p.Status != http.StatusForbidden || !strings.Contains(p.text("sso-refused"), why) {
		t.Fatalf("callback: status %d, message %q; want 403 saying %q", p.Status, p.text("sso-refused"), why)
	}
	if b.cookie() != "" {
		t.Fatal("a refused sign-in left a session cookie")
	}
}

func (e *env) events(action string) []quire.Event {
	e.t.Helper()
	evs, err := e.store.AuditEvents(context.Background(), quire.AuditFilter{Action: action, Limit: 50})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func TestSSOSignIn(t *testing.T) {
	t.Parallel()
	t.Run("a verified email links the user, whose session is an ordinary one", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		ada := s.user("ada@example.com", "editor", "")
		b := s.browser()
		p := s.signIn(b, idpAda)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/documents" {
			t.Fatalf("callback: status %d to %q, page %q", p.Status, p.Header.Get("Location"), p.text("sso-refused"))
		}
		token := b.cookie()
		if token == "" {
			t.Fatal("no session cookie")
		}
		// The same session the API knows, with its user and role.
		if got := s.apiStatus("GET", "/api/auth/me", token, ""); got != http.StatusOK {
			t.Fatalf("GET /api/auth/me with the session: %d", got)
		}
		actor, err := s.auth.Authenticate(context.Background(), token)
		if err != nil || actor.User.ID != ada.ID || actor.User.Role.Key != "editor" {
			t.Fatalf("session is %+v, %v; want ada as editor", actor.User, err)
		}
		logins := s.events(quire.ActionLogin)
		if len(logins) != 1 || logins[0].Details["method"] != "sso" || logins[0].Actor == nil || logins[0].Actor.ID != ada.ID {
			t.Fatalf("auth.login events = %+v", logins)
		}
		links := s.events(quire.ActionUserUpdated)
		if len(links) != 1 || links[0].Details["linked"] != true || links[0].Details["via"] != "sso" ||
			links[0].Target == nil || links[0].Target.ID != ada.ID {
			t.Fatalf("user.updated events (the link) = %+v", links)
		}
		// Signing out revokes it like any session.
		if p := b.post("/logout", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("logout: %d", p.Status)
		}
		if _, err := s.auth.Authenticate(context.Background(), token); quire.ErrorCode(err) != quire.EUNAUTHORIZED {
			t.Fatalf("the session after logout: %v", err)
		}
	})
	t.Run("a linked identity signs in by its subject, whatever its email is now", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		ada := s.user("ada@example.com", "editor", "")
		if p := s.signIn(s.browser(), idpAda); p.Status != http.StatusSeeOther {
			t.Fatalf("first sign-in: %d %q", p.Status, p.text("sso-refused"))
		}
		moved := idpAda
		moved.Email, moved.EmailVerified = "ada@elsewhere.net", false
		s.idp.SetUser(moved)
		b := s.browser()
		if p := s.signIn(b, moved); p.Status != http.StatusSeeOther {
			t.Fatalf("second sign-in: %d %q", p.Status, p.text("sso-refused"))
		}
		actor, err := s.auth.Authenticate(context.Background(), b.cookie())
		if err != nil || actor.User.ID != ada.ID {
			t.Fatalf("signed in as %+v, %v; want ada", actor.User, err)
		}
	})
	t.Run("a new person of an allowed domain gets an active account with the default role", func(t *testing.T) {
		s := newSSOEnv(t, func(c *sso.Config) { c.DefaultRole = "editor" })
		b := s.browser()
		b.header.Set("User-Agent", "sso-test")
		p := s.signIn(b, idpNew)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("callback: %d %q", p.Status, p.text("sso-refused"))
		}
		u, err := s.store.UserByEmail(context.Background(), "newcomer@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if u.Status != quire.UserActive || u.Role.Key != "editor" || u.Name != "Nora Newcomer" || u.PasswordHash != "" {
			t.Fatalf("created user %+v", u)
		}
		created := s.events(quire.ActionUserCreated)
		if len(created) != 1 || created[0].Details["via"] != "sso" || created[0].Target == nil || created[0].Target.ID != u.ID {
			t.Fatalf("user.created events = %+v", created)
		}
		// No password was set: the password form cannot sign it in.
		if p := s.browser().post("/login", url.Values{"email": {"newcomer@example.com"}, "password": {""}}); p.Status == http.StatusSeeOther {
			t.Fatal("an SSO account signed in with an empty password")
		}
	})
	t.Run("the ID token's claims may come from the userinfo endpoint", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		s.idp.ClaimsOnlyAtUserinfo.Store(true)
		if p := s.signIn(s.browser(), idpNew); p.Status != http.StatusSeeOther {
			t.Fatalf("callback: %d %q", p.Status, p.text("sso-refused"))
		}
		if _, err := s.store.UserByEmail(context.Background(), "newcomer@example.com"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the sign-in returns to the page it began from", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		s.user("ada@example.com", "editor", "")
		b := s.browser()
		back := s.authorizeFrom(b, sso.StartPath+"?next="+url.QueryEscape("/folders?x=1"), idpAda.Username, idpAda.Password)
		if p := b.get(back); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/folders?x=1" {
			t.Fatalf("callback: %d to %q", p.Status, p.Header.Get("Location"))
		}
	})
}

func TestSSOProviderDown(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t, func(c *sso.Config) { c.Issuer = "http://127.0.0.1:1" })
	if p := s.browser().get(sso.StartPath); p.Status != http.StatusServiceUnavailable || p.Header.Get("Retry-After") == "" {
		t.Fatalf("start with the provider down: %d, Retry-After %q", p.Status, p.Header.Get("Retry-After"))
	}
	// Password sign-in goes on.
	s.user("ada@example.com", "editor", "")
	s.browser().login("ada@example.com", testPassword)
}

func TestSSORefusals(t *testing.T) {
	t.Parallel()
	t.Run("a disallowed domain is refused with the reason, and no account is made", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		b := s.browser()
		wantRefused(t, b, s.signIn(b, idpOut), "Accounts of other.org may not sign in here")
		if _, err := s.store.UserByEmail(context.Background(), "bob@other.org"); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Fatalf("user of a refused domain: %v", err)
		}
	})
	t.Run("an unverified email neither links an account nor makes one", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		eve := s.user("eve@example.com", "admin", "")
		b := s.browser()
		wantRefused(t, b, s.signIn(b, idpEve), "is not verified")
		// Had it been linked, the next sign-in would pass.
		b = s.browser()
		wantRefused(t, b, s.signIn(b, idpEve), "is not verified")
		if n := len(s.events(quire.ActionLogin)); n != 0 {
			t.Fatalf("%d auth.login events for %s", n, eve.ID)
		}
	})
	t.Run("a disabled user is refused, linked or not", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		ada := s.user("ada@example.com", "editor", "")
		s.user("root@example.com", "admin", "")
		if err := s.store.DisableUser(context.Background(), ada.ID, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		b := s.browser()
		wantRefused(t, b, s.signIn(b, idpAda), "This account is disabled")
		if err := s.store.EnableUser(context.Background(), ada.ID, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if p := s.signIn(s.browser(), idpAda); p.Status != http.StatusSeeOther {
			t.Fatalf("enabled again: %d %q", p.Status, p.text("sso-refused"))
		}
		if err := s.store.DisableUser(context.Background(), ada.ID, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		b = s.browser()
		wantRefused(t, b, s.signIn(b, idpAda), "This account is disabled")
	})
	t.Run("a wrong state is refused and the sign-in does not happen", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		s.user("ada@example.com", "editor", "")
		b := s.browser()
		back := s.authorize(b, idpAda.Username, idpAda.Password)
		u, _ := url.Parse(back)
		q := u.Query()
		// Another first character: "x" would keep a state that begins with x.
		state := q.Get("state")
		first := "x"
		if strings.HasPrefix(state, first) {
			first = "y"
		}
		q.Set("state", first+state[1:])
		wantRefused(t, b, b.get(u.Path+"?"+q.Encode()), "did not start in this browser")

		// The right URL in another browser (a link sent to a victim) is
		// refused too: its state is bound to the browser that began it.
		b = s.browser()
		back = s.authorize(b, idpAda.Username, idpAda.Password)
		other := s.browser()
		wantRefused(t, other, other.get(back), "did not start in this browser")
	})
	t.Run("a replayed callback or code is refused", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		s.user("ada@example.com", "editor", "")
		b := s.browser()
		back := s.authorize(b, idpAda.Username, idpAda.Password)
		cookies := b.client.Jar.Cookies(mustURL(s.server.URL + sso.CallbackPath))
		if p := b.get(back); p.Status != http.StatusSeeOther {
			t.Fatalf("first use: %d %q", p.Status, p.text("sso-refused"))
		}
		// The same callback with the same state cookie: the flow is used.
		c := s.browser()
		c.client.Jar.SetCookies(mustURL(s.server.URL+sso.CallbackPath), cookies)
		wantRefused(t, c, c.get(back), "expired or was used already")

		// The used code with a fresh flow of its own: the provider
		// refuses the code, so quire does.
		d := s.browser()
		start := d.get(sso.StartPath)
		if start.Status != http.StatusSeeOther {
			t.Fatalf("start: %d", start.Status)
		}
		state := mustURL(start.Header.Get("Location")).Query().Get("state")
		old := mustURL(s.server.URL + back).Query()
		wantRefused(t, d, d.get(sso.CallbackPath+"?"+url.Values{"code": {old.Get("code")}, "state": {state}}.Encode()),
			"could not confirm who you are")
	})
	for _, c := range []struct {
		name   string
		spoil  func(*oidctest.Provider)
		logged string // what the log must say of the token
	}{
		{"an ID token for another audience is refused", func(p *oidctest.Provider) { p.WrongAudience.Store(true) }, "audience"},
		{"an expired ID token is refused", func(p *oidctest.Provider) { p.IDTokenLifetime.Store(int64(-10 * time.Minute)) }, "expired"},
		{"an ID token with another nonce is refused", func(p *oidctest.Provider) { p.WrongNonce.Store(true) }, "nonce"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSSOEnv(t, nil)
			s.user("ada@example.com", "editor", "")
			c.spoil(s.idp)
			b := s.browser()
			wantRefused(t, b, s.signIn(b, idpAda), "could not confirm who you are")
			if !strings.Contains(s.logs.String(), c.logged) {
				t.Errorf("the log does not say %q:\n%s", c.logged, tail(s.logs.String(), 2000))
			}
		})
	}
	t.Run("a flow older than its lifetime is refused", func(t *testing.T) {
		s := newSSOEnv(t, func(c *sso.Config) { c.FlowTTL = time.Nanosecond })
		s.user("ada@example.com", "editor", "")
		b := s.browser()
		wantRefused(t, b, s.signIn(b, idpAda), "expired or was used already")
	})
}

func TestSSOOnly(t *testing.T) {
	t.Parallel()
	only := func(c *sso.Config) { c.Only = true }
	withOnly := withAuth(func(c *auth.Config) { c.PasswordAdminsOnly = true; c.HashQueueWait = 10 * time.Minute })
	t.Run("the sign-in page shows the button and hides the password form", func(t *testing.T) {
		s := newSSOEnv(t, only, withOnly)
		p := s.browser().get("/login")
		if p.byID("sso-sign-in") == nil || textOf(p.byID("sso-sign-in")) != "Sign in with Example ID" {
			t.Fatalf("button: %v", p.byID("sso-sign-in"))
		}
		if _, ok := p.value("password"); ok {
			t.Fatal("the password form is shown under --oidc-only")
		}
		if p.byID("password-sign-in") == nil {
			t.Fatal("no way in for administrators")
		}
		p = s.browser().get("/login?password=1")
		if _, ok := p.value("password"); !ok {
			t.Fatal("?password=1 does not show the password form")
		}
	})
	t.Run("password sign-in is refused to others than administrators, on the API and the web", func(t *testing.T) {
		s := newSSOEnv(t, only, withOnly)
		s.user("ada@example.com", "editor", "")
		s.user("root@example.com", "admin", "")
		api := func(email, password string) (int, string) {
			body, _ := json.Marshal(map[string]string{"email": email, "password": password})
			resp, err := http.Post(s.server.URL+"/api/auth/login", "application/json", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct{ Code string }
			json.NewDecoder(resp.Body).Decode(&e)
			return resp.StatusCode, e.Code
		}
		if st, code := api("ada@example.com", testPassword); st != http.StatusForbidden || code != quire.EPASSWORDLOGINDISABLED {
			t.Errorf("API, editor: %d %s; want 403 %s", st, code, quire.EPASSWORDLOGINDISABLED)
		}
		// A wrong password is answered as always: the refusal tells
		// nothing to whoever does not know the password.
		if st, code := api("ada@example.com", "wrong password, long enough"); st != http.StatusUnauthorized || code != quire.EINVALIDCREDENTIALS {
			t.Errorf("API, editor, wrong password: %d %s", st, code)
		}
		if st, code := api("root@example.com", testPassword); st != http.StatusOK {
			t.Errorf("API, admin: %d %s; want 200", st, code)
		}
		b := s.browser()
		p := b.post("/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}})
		if p.Status != http.StatusForbidden || !strings.Contains(p.text("page-error"), "single sign-on") || b.cookie() != "" {
			t.Errorf("web, editor: %d %q", p.Status, p.text("page-error"))
		}
		s.browser().login("root@example.com", testPassword)
		// Single sign-on still works for everyone.
		if p := s.signIn(s.browser(), idpAda); p.Status != http.StatusSeeOther {
			t.Errorf("SSO under --oidc-only: %d %q", p.Status, p.text("sso-refused"))
		}
	})
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
