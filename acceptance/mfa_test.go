package acceptance

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"quire"
	"quire/auth"
)

func (e *env) code(secret string) string {
	e.t.Helper()
	c, err := totp.GenerateCode(secret, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// setUpTOTP sets up a TOTP through the Account page and returns its secret
// and recovery codes; the clock is moved one step on.
func (b *browser) setUpTOTP() (secret string, recovery []string) {
	b.e.t.Helper()
	p := b.post("/account/mfa/totp", url.Values{})
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/account") {
		b.e.t.Fatalf("begin: %d %s", p.Status, p.Header.Get("Location"))
	}
	p = b.get("/account")
	secret = attr(p.byID("mfa-secret"), "value")
	if secret == "" {
		b.e.t.Fatalf("no secret on the account page")
	}
	p = b.post("/account/mfa/totp/confirm", url.Values{"code": {b.e.code(secret)}})
	if p.Status != http.StatusOK {
		b.e.t.Fatalf("confirm: %d %q", p.Status, p.text("page-error"))
	}
	recovery = textsOf(p.byID("recovery-codes"), tagged("li"))
	b.e.clock.Advance(30 * time.Second)
	return secret, recovery
}

// passwordStep signs in with the password and returns the second step's page.
func (b *browser) passwordStep(email string) *page {
	b.e.t.Helper()
	p := b.post("/login", url.Values{"email": {email}, "password": {testPassword}, "next": {"/folders"}})
	if p.Status != http.StatusOK || p.byID("mfa-form") == nil {
		b.e.t.Fatalf("password step: %d, error %q", p.Status, p.text("page-error"))
	}
	if b.cookie() != "" {
		b.e.t.Fatal("the password step set the session cookie")
	}
	return p
}

func TestMFAPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, b := e.signedInUser("ada@example.com", "editor", "")

	var secret string
	var recovery []string
	t.Run("the account page sets up an authenticator with a QR code served as an image", func(t *testing.T) {
		p := b.get("/account")
		if p.byID("mfa-begin") == nil || !strings.HasPrefix(p.text("mfa-status"), "Off") {
			t.Fatalf("account page without the set-up button; status %q", p.text("mfa-status"))
		}
		if p := b.post("/account/mfa/totp", url.Values{}); p.Status != http.StatusSeeOther {
			t.Fatalf("begin: %d", p.Status)
		}
		p = b.get("/account")
		img := p.byID("mfa-qr")
		if img == nil || attr(img, "src") != "/account/mfa/totp.png" {
			t.Fatalf("no QR image on the account page")
		}
		if strings.Contains(p.Body, "<script>") {
			t.Error("the account page has an inline script")
		}
		q := b.get("/account/mfa/totp.png")
		if q.Status != http.StatusOK || q.Header.Get("Content-Type") != "image/png" || !strings.Contains(q.Header.Get("Cache-Control"), "no-store") {
			t.Fatalf("QR image: %d %q %q", q.Status, q.Header.Get("Content-Type"), q.Header.Get("Cache-Control"))
		}
		im, err := png.Decode(bytes.NewReader([]byte(q.Body)))
		if err != nil || im.Bounds().Dx() < 200 {
			t.Fatalf("QR image does not decode: %v", err)
		}
		// Signed out, no image.
		if q := e.browser().get("/account/mfa/totp.png"); q.Status != http.StatusSeeOther {
			t.Errorf("QR image signed out: %d", q.Status)
		}
		secret = attr(p.byID("mfa-secret"), "value")
		p = b.post("/account/mfa/totp/confirm", url.Values{"code": {"000000"}})
		if p.Status != http.StatusBadRequest || p.text("err-code") == "" || p.byID("mfa-qr") == nil {
			t.Fatalf("a wrong code: %d, field error %q", p.Status, p.text("err-code"))
		}
		p = b.post("/account/mfa/totp/confirm", url.Values{"code": {e.code(secret)}})
		if p.Status != http.StatusOK {
			t.Fatalf("confirm: %d %q", p.Status, p.text("page-error"))
		}
		recovery = textsOf(p.byID("recovery-codes"), tagged("li"))
		if len(recovery) != 10 {
			t.Fatalf("%d recovery codes shown, want 10", len(recovery))
		}
		e.clock.Advance(30 * time.Second)
		p = b.get("/account")
		if !strings.HasPrefix(p.text("mfa-status"), "On") || strings.Contains(p.Body, secret) || strings.Contains(p.Body, recovery[0]) {
			t.Fatalf("account page after set-up: status %q (the secret or a code shown again?)", p.text("mfa-status"))
		}
		if q := b.get("/account/mfa/totp.png"); q.Status != http.StatusNotFound {
			t.Errorf("QR image once on: %d, want 404", q.Status)
		}
	})

	t.Run("signing in takes a second step", func(t *testing.T) {
		c := e.browser()
		p := c.passwordStep("ada@example.com")
		token, _ := p.value("mfaToken")
		p = c.post("/login/mfa", url.Values{"mfaToken": {token}, "code": {"000000"}, "next": {"/folders"}})
		if p.Status != http.StatusUnauthorized || p.text("err-code") == "" {
			t.Fatalf("wrong code: %d, field error %q", p.Status, p.text("err-code"))
		}
		if again, _ := p.value("mfaToken"); again != token {
			t.Fatal("the form lost its mfaToken")
		}
		p = c.post("/login/mfa", url.Values{"mfaToken": {token}, "code": {e.code(secret)}, "next": {"/folders"}})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/folders" || c.cookie() == "" {
			t.Fatalf("right code: %d to %q", p.Status, p.Header.Get("Location"))
		}
		if p := c.get("/documents"); p.Status != http.StatusOK {
			t.Errorf("documents after the second step: %d", p.Status)
		}
	})

	t.Run("a recovery code signs in once", func(t *testing.T) {
		c := e.browser()
		token, _ := c.passwordStep("ada@example.com").value("mfaToken")
		if p := c.post("/login/mfa", url.Values{"mfaToken": {token}, "code": {recovery[3]}}); p.Status != http.StatusSeeOther {
			t.Fatalf("recovery code: %d", p.Status)
		}
		d := e.browser()
		token, _ = d.passwordStep("ada@example.com").value("mfaToken")
		if p := d.post("/login/mfa", url.Values{"mfaToken": {token}, "code": {recovery[3]}}); p.Status != http.StatusUnauthorized {
			t.Fatalf("a used recovery code: %d", p.Status)
		}
	})

	t.Run("an expired second step starts again from the password", func(t *testing.T) {
		c := e.browser()
		token, _ := c.passwordStep("ada@example.com").value("mfaToken")
		e.clock.Advance(5 * time.Minute)
		p := c.post("/login/mfa", url.Values{"mfaToken": {token}, "code": {e.code(secret)}})
		if p.Status != http.StatusUnauthorized || p.byID("sign-in") == nil || p.text("page-error") == "" {
			t.Fatalf("expired: %d, sign-in form %v, error %q", p.Status, p.byID("sign-in") != nil, p.text("page-error"))
		}
	})

	t.Run("switching off takes the password", func(t *testing.T) {
		p := b.post("/account/mfa/totp/disable", url.Values{"password": {"not the password at all"}})
		if p.Status != http.StatusBadRequest || p.text("err-mfa-password") == "" {
			t.Fatalf("wrong password: %d %q", p.Status, p.text("err-mfa-password"))
		}
		p = b.post("/account/mfa/totp/disable", url.Values{"password": {testPassword}})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/account?m=mfa-off" {
			t.Fatalf("switch off: %d %q", p.Status, p.Header.Get("Location"))
		}
		e.browser().login("ada@example.com", testPassword) // one step again
	})
}

func TestRequireMFALeadsToSetUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user("ed@example.com", "editor", "")
	yes := true
	if _, err := e.auth.UpdateRole(context.Background(), "editor", auth.RoleChange{RequireMFA: &yes}); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn("ed@example.com")
	for _, path := range []string{"/documents", "/folders", "/trash", "/welcome"} {
		p := b.get(path)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/account?m=mfa-required#mfa" {
			t.Errorf("GET %s: %d to %q", path, p.Status, p.Header.Get("Location"))
		}
	}
	if p := b.post("/account/tokens", url.Values{"name": {"x"}, "scope": {"read"}, "days": {"30"}}); p.Status != http.StatusSeeOther {
		t.Errorf("creating a token before the set-up: %d", p.Status)
	}
	p := b.get("/account?m=mfa-required")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "Your role requires a second factor") {
		t.Fatalf("account page: %d", p.Status)
	}
	b.setUpTOTP()
	if p := b.get("/documents"); p.Status != http.StatusOK {
		t.Errorf("documents after the set-up, same session: %d", p.Status)
	}
}

func TestAdminResetsASecondFactor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user("root@example.com", "admin", "")
	ada, u := e.signedInUser("ada@example.com", "editor", "")
	u.setUpTOTP()

	a := e.signedIn("root@example.com")
	p := a.get("/admin/users/" + ada.ID)
	if p.text("user-mfa") != "on" || p.byID("reset-mfa") == nil {
		t.Fatalf("user page: mfa %q, reset button %v", p.text("user-mfa"), p.byID("reset-mfa") != nil)
	}
	p = a.post("/admin/users/"+ada.ID+"/reset-mfa", url.Values{})
	if p.Status != http.StatusSeeOther || !strings.HasSuffix(p.Header.Get("Location"), "?m=mfa-reset") {
		t.Fatalf("reset: %d %q", p.Status, p.Header.Get("Location"))
	}
	p = a.get("/admin/users/" + ada.ID)
	if p.text("user-mfa") != "off" || p.byID("reset-mfa") != nil {
		t.Fatalf("after reset: mfa %q", p.text("user-mfa"))
	}
	evs, err := e.store.AuditEvents(context.Background(), quire.AuditFilter{Action: quire.ActionMFAReset, Limit: 5})
	if err != nil || len(evs) != 1 {
		t.Fatalf("auth.mfa_reset events: %d, %v", len(evs), err)
	}
	e.browser().login("ada@example.com", testPassword)
	// Only administrators reset.
	if p := u.post("/admin/users/"+ada.ID+"/reset-mfa", url.Values{}); p.Status != http.StatusForbidden {
		t.Errorf("reset by a non-administrator: %d", p.Status)
	}
}
