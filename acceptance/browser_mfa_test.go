package acceptance

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"
)

// TestBrowserMFA: a person sets up an authenticator on the Account page
// (the QR code is an image quire serves, so the page needs no script),
// confirms it with a code, sees the ten recovery codes once, signs out, and
// signs in again with the password and then a code.
func TestBrowserMFA(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	e.user("grace@example.com", "editor", "Engineering")

	do(t, ctx, "sign in", signIn(e, "grace@example.com", testPassword))
	do(t, ctx, "open the second factor's set-up",
		chromedp.Click(id("account-link")),
		waitVisible(id("mfa-begin")),
		chromedp.Click(id("mfa-begin")),
		waitVisible(id("mfa-qr")),
	)
	loaded := read(t, ctx, "QR image", poll[int](`(() => { const i = document.getElementById('mfa-qr'); return i.complete && i.naturalWidth })()`))
	if loaded < 200 {
		t.Fatalf("the QR image did not load (natural width %d)", loaded)
	}
	do(t, ctx, "screenshot the set-up", screenshot("mfa-setup.png"))
	secret := read(t, ctx, "secret", chromedp.Value(id("mfa-secret")))
	code, err := totp.GenerateCode(secret, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "confirm with a code",
		chromedp.SendKeys(id("mfa-code"), code),
		chromedp.Click(id("mfa-confirm")),
		waitVisible(id("recovery-codes")),
	)
	codes := read(t, ctx, "recovery codes", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#recovery-codes li')).map(li => li.textContent.trim())`))
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes, want 10", len(codes))
	}
	do(t, ctx, "back to the account page, then sign out",
		chromedp.Click(id("back-to-account")),
		waitVisible(id("mfa-disable-form")),
		chromedp.Click(id("sign-out")),
		waitVisible(id("email")),
	)

	e.clock.Advance(30 * time.Second) // the confirming code is spent
	code, _ = totp.GenerateCode(secret, e.clock.Now())
	do(t, ctx, "sign in: the password, then a code",
		chromedp.SendKeys(id("email"), "grace@example.com"),
		chromedp.SendKeys(id("password"), testPassword),
		chromedp.Click(id("sign-in")),
		waitVisible(id("mfa-code")),
		chromedp.SendKeys(id("mfa-code"), code),
		screenshot("mfa-login.png"),
		chromedp.Click(id("verify-code")),
		waitVisible(id("result-count")),
	)
	body := read(t, ctx, "page", chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if strings.Contains(body, secret) {
		t.Fatal("a page shows the secret after the set-up")
	}
}
