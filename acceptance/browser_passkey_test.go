package acceptance

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/auth"
)

// TestBrowserPasskey: with Chromium's virtual authenticator (the DevTools
// protocol's WebAuthn domain: a CTAP2 platform authenticator with resident
// keys and user verification), a person registers a passkey on the Account
// page, signs out, signs in with the passkey alone (no email typed), renames
// it and removes it; after that the authenticator's credential no longer
// signs anyone in.
func TestBrowserPasskey(t *testing.T) {
	ctx := newChrome(t)
	// WebAuthn needs a secure context and a host name: http://localhost is
	// both, http://127.0.0.1 is not a valid relying party.
	e := newEnv(t, withAuth(func(c *auth.Config) {
		c.PublicURL = strings.Replace(c.PublicURL, "127.0.0.1", "localhost", 1)
	}))
	base := strings.Replace(e.server.URL, "127.0.0.1", "localhost", 1)
	grace := e.user("grace@example.com", "editor", "Engineering")

	var authenticator webauthn.AuthenticatorID
	do(t, ctx, "add a virtual authenticator",
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tgt, webauthn.Enable, webauthn.EnableParams{}); err != nil {
				return err
			}
			r, err := cdp.Call(ctx, tgt, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
				Options: &webauthn.VirtualAuthenticatorOptions{
					Protocol:                    webauthn.AuthenticatorProtocolCtap2,
					Ctap2version:                webauthn.Ctap2versionCtap21,
					Transport:                   webauthn.AuthenticatorTransportInternal,
					HasResidentKey:              true,
					HasUserVerification:         true,
					IsUserVerified:              true,
					AutomaticPresenceSimulation: true,
				},
			})
			authenticator = r.AuthenticatorID
			return err
		}),
	)
	credentials := func() []*webauthn.Credential {
		t.Helper()
		return read(t, ctx, "the authenticator's credentials", chromedp.Action[[]*webauthn.Credential](
			func(ctx context.Context, tgt *chromedp.Target) ([]*webauthn.Credential, error) {
				r, err := cdp.Call(ctx, tgt, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: authenticator})
				return r.Credentials, err
			}))
	}
	passkeys := func() []quire.Passkey {
		t.Helper()
		ps, err := e.store.Passkeys(context.Background(), grace.ID)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}

	do(t, ctx, "sign in with the password",
		chromedp.Navigate(base+"/login"),
		waitVisible(id("email")),
		chromedp.SendKeys(id("email"), "grace@example.com"),
		chromedp.SendKeys(id("password"), testPassword),
		chromedp.Click(id("sign-in")),
		waitVisible(id("result-count")),
	)
	do(t, ctx, "register a passkey on the account page",
		chromedp.Navigate(base+"/account"),
		waitVisible(id("passkeys-empty")),
		waitEnabled(id("add-passkey")),
		chromedp.SendKeys(id("passkey-new-name"), "Work laptop"),
		chromedp.Click(id("add-passkey")),
		waitVisible(id("passkey-list")),
	)
	flash := read(t, ctx, "flash", chromedp.Text(css(".flash")))
	ps := passkeys()
	creds := credentials()
	if len(ps) != 1 || ps[0].Name != "Work laptop" || len(creds) != 1 || !creds[0].IsResidentCredential ||
		string(creds[0].UserHandle) != grace.ID || flash != "Passkey added. You can sign in with it alone." {
		t.Fatalf("after registering: passkeys %+v, authenticator %+v, flash %q", ps, creds, flash)
	}
	do(t, ctx, "sign out",
		chromedp.Click(id("sign-out")),
		waitVisible(id("sign-in")),
	)
	do(t, ctx, "sign in with the passkey alone",
		waitVisible(id("passkey-sign-in")),
		chromedp.Click(id("passkey-sign-in")),
		waitVisible(id("result-count")),
	)
	who := read(t, ctx, "who is signed in", chromedp.Text(css(".who")))
	if !strings.HasPrefix(who, "Grace") {
		t.Fatalf("signed in as %q", who)
	}
	logins, err := e.store.AuditEvents(context.Background(), quire.AuditFilter{Action: quire.ActionLogin, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(logins) != 1 || logins[0].Details["method"] != "passkey" || logins[0].Target.ID != grace.ID {
		t.Fatalf("newest auth.login %+v, want grace's with method passkey", logins)
	}
	if ps := passkeys(); ps[0].LastUsedAt.IsZero() {
		t.Error("the passkey's last use was not recorded")
	}

	do(t, ctx, "show the passkeys on the account page",
		chromedp.Navigate(base+"/account"),
		waitVisible(id("passkey-list")),
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.getElementById("passkeys-heading").getBoundingClientRect().top + window.scrollY - 24)`),
		screenshot("passkeys.png"),
	)
	do(t, ctx, "rename the passkey",
		chromedp.SetValue(css("#passkey-list input.passkey-name"), "Grace's laptop"),
		chromedp.Click(css("#passkey-list button.rename-passkey")),
		waitVisible(css(".flash")),
	)
	flash = read(t, ctx, "flash", chromedp.Text(css(".flash")))
	shown := read(t, ctx, "name shown", chromedp.Value(css("#passkey-list input.passkey-name")))
	if diff := cmp.Diff([]string{"Passkey renamed.", "Grace's laptop", "Grace's laptop"},
		[]string{flash, shown, passkeys()[0].Name}); diff != "" {
		t.Errorf("after renaming (-want +got):\n%s", diff)
	}

	do(t, ctx, "remove the passkey",
		chromedp.Click(css("#passkey-list button.remove-passkey")),
		waitVisible(id("passkeys-empty")),
	)
	if ps := passkeys(); len(ps) != 0 {
		t.Fatalf("after removing: %+v", ps)
	}

	do(t, ctx, "sign out, and try the removed passkey",
		chromedp.Click(id("sign-out")),
		waitVisible(id("passkey-sign-in")),
		chromedp.Click(id("passkey-sign-in")),
		waitVisible(id("passkey-login-error")),
	)
	msg := read(t, ctx, "error", chromedp.Text(id("passkey-login-error")))
	loc := read(t, ctx, "location", chromedp.Location())
	if msg != "The passkey was not accepted" || !strings.HasPrefix(loc, base+"/login") {
		t.Errorf("with the removed passkey: %q at %s", msg, loc)
	}
}
