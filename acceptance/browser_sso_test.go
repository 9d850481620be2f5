package acceptance

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"quire"
)

// TestBrowserSSO: a person opens quire's sign-in page, follows "Sign in
// with Example ID" to the identity provider (a real one, internal/oidctest),
// signs in on its login page, and comes back to quire signed in, with an
// account made for them on the way.
func TestBrowserSSO(t *testing.T) {
	ctx := newChrome(t)
	s := newSSOEnv(t, nil)
	s.user("grace@example.com", "editor", "")

	do(t, ctx, "open the sign-in page",
		chromedp.Navigate(s.server.URL+"/login"),
		waitVisible(id("sso-sign-in")),
		screenshot("sso-login.png"),
	)
	if label := read(t, ctx, "button", chromedp.Text(id("sso-sign-in"))); label != "Sign in with Example ID" {
		t.Fatalf("button %q", label)
	}
	do(t, ctx, "go to the identity provider",
		chromedp.Click(id("sso-sign-in")),
		waitVisible(id("idp-username")),
	)
	if loc := read(t, ctx, "location", chromedp.Location()); !strings.HasPrefix(loc, s.idp.Issuer+"/login") {
		t.Fatalf("the button led to %s, not the provider's login page", loc)
	}
	do(t, ctx, "sign in at the provider and come back",
		chromedp.SendKeys(id("idp-username"), idpNew.Username),
		chromedp.SendKeys(id("idp-password"), idpNew.Password),
		chromedp.Click(id("idp-sign-in")),
		waitVisible(id("result-count")),
	)
	if loc := read(t, ctx, "location", chromedp.Location()); loc != s.server.URL+"/documents" {
		t.Fatalf("after signing in: %s", loc)
	}
	logins := s.events(quire.ActionLogin)
	if len(logins) != 1 || logins[0].Details["method"] != "sso" || logins[0].Target == nil {
		t.Fatalf("auth.login events %+v", logins)
	}
	u, err := s.store.UserByEmail(t.Context(), "newcomer@example.com")
	if err != nil || logins[0].Target.ID != u.ID {
		t.Fatalf("signed in as %+v, new user %+v, %v", logins[0].Target, u, err)
	}
}
