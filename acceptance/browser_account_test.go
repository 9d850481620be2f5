package acceptance

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/documents"
)

// TestBrowserAccount: a person creates an API token on the Account page,
// sees its secret once, a script uses it (reads work, a write with a read
// token is refused), the token is revoked (then 401), and a session signed
// in from a second browser is signed out from the first.
func TestBrowserAccount(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Release checklist"), Content: documents.Some("Tag, build, ship.")})

	do(t, ctx, "sign in", signIn(e, "grace@example.com", testPassword))
	other := newSession(t, ctx)
	do(t, other, "sign in from a second browser", signIn(e, "grace@example.com", testPassword))

	do(t, ctx, "open the account page",
		chromedp.Click(id("account-link")),
		waitVisible(id("sessions")),
	)
	do(t, ctx, "create a read token",
		chromedp.SendKeys(id("token-name"), "Nightly export"),
		chromedp.Click(id("scope-read")),
		chromedp.SetValue(id("token-days"), "30"),
		chromedp.Click(id("create-token")),
		waitVisible(id("token-secret")),
		screenshot("api-token.png"),
	)
	secret := read(t, ctx, "secret", chromedp.Value(id("token-secret")))
	if !strings.HasPrefix(secret, quire.APITokenPrefix) {
		t.Fatalf("secret %q", secret)
	}

	// A script uses the token.
	docPath := "/api/documentation/documents/" + doc.ID
	if got := e.apiStatus("GET", docPath, secret, ""); got != http.StatusOK {
		t.Fatalf("GET the document with the token: %d", got)
	}
	if got := e.apiStatus("PUT", docPath, secret, `{"title":"Changed by script"}`); got != http.StatusForbidden {
		t.Fatalf("PUT with the read token: %d, want 403", got)
	}

	do(t, ctx, "back to the account page",
		chromedp.Click(id("back-to-account")),
		waitVisible(id("tokens")),
		screenshot("account.png"),
	)
	html := read(t, ctx, "page", chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if strings.Contains(html, secret) {
		t.Fatal("the account page shows the secret again")
	}
	rows := read(t, ctx, "sessions", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#sessions tr.session')).map(r => r.classList.contains('current') ? 'current' : 'other')`))
	slices.Sort(rows) // both signed in at the same instant of the test clock
	if diff := cmp.Diff([]string{"current", "other"}, rows); diff != "" {
		t.Fatalf("sessions (-want +got):\n%s", diff)
	}

	do(t, ctx, "sign out the second browser's session",
		chromedp.Click(css(`#sessions tr.session:not(.current) button.revoke-session`)),
		waitVisible(css(".flash")),
	)
	flash := read(t, ctx, "flash", chromedp.Text(css(".flash")))
	left := read(t, ctx, "sessions left", chromedp.Evaluate[int](`document.querySelectorAll('#sessions tr.session').length`))
	if diff := cmp.Diff([]any{"Session signed out.", 1}, []any{flash, left}); diff != "" {
		t.Errorf("after signing out the other session (-want +got):\n%s", diff)
	}
	do(t, other, "the second browser is signed out",
		chromedp.Navigate(e.server.URL+"/documents"),
		waitVisible(id("sign-in")),
	)

	do(t, ctx, "revoke the token",
		chromedp.Click(css(`#tokens button.revoke-token`)),
		waitVisible(id("tokens-empty")),
	)
	if got := e.apiStatus("GET", docPath, secret, ""); got != http.StatusUnauthorized {
		t.Errorf("GET with the revoked token: %d, want 401", got)
	}
	if got := e.get(grace, doc.ID); got.Title != "Release checklist" {
		t.Errorf("title is now %q", got.Title)
	}
}
