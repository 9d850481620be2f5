package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/auth"
)

// linkPath is the path and query of a mailed link.
func linkPath(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path + "?" + u.RawQuery
}

// tokenOf is the token a link carries.
func tokenOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

// linkAnswer is what opening a mailed link shows: the status, the message,
// whether the password form is there, and where the page sends the reader
// for a new link.
type linkAnswer struct {
	Status   int
	Error    string
	Form     bool
	NextStep []string
}

func openLink(b *browser, path string) (linkAnswer, *page) {
	b.e.t.Helper()
	p := b.get(path)
	_, form := p.value("password")
	return linkAnswer{Status: p.Status, Error: p.text("page-error"), Form: form, NextStep: p.links("bad-link")}, p
}

const (
	badReset = "This reset link is invalid, has expired or was already used. Ask for a new one."
	badSetup = "This invitation link is invalid, has expired or was already used. Ask an administrator for a new invitation."
)

func TestMailedLinksAreCheckedWhenOpened(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.user("ed@example.com", "editor", "Engineering")
	e.user("gone@example.com", "editor", "Engineering")
	// Using a link uses every other link of its user: one user per link.
	e.user("reset@example.com", "editor", "Engineering")
	const newPassword = "a brand new passphrase for ed"

	resetLink := func(email string) string {
		t.Helper()
		if err := e.auth.ForgotPassword(ctx, quire.RequestInfo{IP: "192.0.2.1"}, email); err != nil {
			t.Fatal(err)
		}
		return outboxLink(t, e)
	}
	inviteLink := func(email string) string {
		t.Helper()
		_, link, err := e.auth.CreateUser(ctx, auth.NewUser{Email: email, Name: "New", Role: "viewer"})
		if err != nil {
			t.Fatal(err)
		}
		return link
	}

	resetValid := resetLink("ed@example.com")
	resetUsed := resetLink("reset@example.com")
	if err := e.auth.ResetPassword(ctx, quire.RequestInfo{IP: "127.0.0.1"}, tokenOf(t, resetUsed), newPassword); err != nil {
		t.Fatalf("use the reset link: %v", err)
	}
	resetDisabled := resetLink("gone@example.com")
	gone, err := e.store.UserByEmail(ctx, "gone@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.DisableUser(ctx, gone.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	setupValid := inviteLink("new@example.com")
	setupUsed := inviteLink("used@example.com")
	if err := e.auth.SetupPassword(ctx, quire.RequestInfo{IP: "127.0.0.1"}, tokenOf(t, setupUsed), newPassword); err != nil {
		t.Fatalf("use the setup link: %v", err)
	}
	unknown := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" // the shape of a real token

	valid := linkAnswer{Status: http.StatusOK, Form: true}
	deadReset := linkAnswer{Status: http.StatusBadRequest, Error: badReset, NextStep: []string{"/forgot-password"}}
	deadSetup := linkAnswer{Status: http.StatusBadRequest, Error: badSetup, NextStep: []string{"/login"}}

	for _, tc := range []struct {
		name string
		path string
		want linkAnswer
	}{
		{"a fresh reset link shows the form", linkPath(t, resetValid), valid},
		{"a used reset link says so at once", linkPath(t, resetUsed), deadReset},
		{"an unknown reset token says so at once", "/reset-password?token=" + unknown, deadReset},
		{"the reset link of a disabled account says so at once", linkPath(t, resetDisabled), deadReset},
		{"a setup token does not open the reset page", "/reset-password?token=" + tokenOf(t, setupValid), deadReset},
		{"a fresh setup link shows the form", linkPath(t, setupValid), valid},
		{"a used setup link says so at once", linkPath(t, setupUsed), deadSetup},
		{"an unknown setup token says so at once", "/setup-password?token=" + unknown, deadSetup},
		{"a reset token does not open the setup page", "/setup-password?token=" + tokenOf(t, resetValid), deadSetup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, p := openLink(e.browser(), tc.path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// Valid or not is all a page tells: never whose link it is.
			for _, email := range []string{"ed@example.com", "reset@example.com", "gone@example.com", "new@example.com", "used@example.com"} {
				if strings.Contains(p.Body, email) {
					t.Errorf("the page names %s", email)
				}
			}
		})
	}

	t.Run("opening a link twice does not use it up", func(t *testing.T) {
		for _, link := range []string{resetValid, setupValid} {
			for i := 0; i < 2; i++ {
				if got, _ := openLink(e.browser(), linkPath(t, link)); got.Status != http.StatusOK || !got.Form {
					t.Fatalf("%s, open %d: %+v", link, i+1, got)
				}
			}
		}
		if err := e.auth.CheckResetToken(ctx, tokenOf(t, resetValid)); err != nil {
			t.Errorf("the reset token after two opens: %v", err)
		}
	})

	t.Run("an expired link says so at once", func(t *testing.T) {
		e.clock.Advance(auth.DefaultConfig().InviteTTL + time.Hour) // past both lifetimes
		if got, _ := openLink(e.browser(), linkPath(t, resetValid)); !cmp.Equal(got, deadReset) {
			t.Errorf("reset link: %+v", got)
		}
		if got, _ := openLink(e.browser(), linkPath(t, setupValid)); !cmp.Equal(got, deadSetup) {
			t.Errorf("setup link: %+v", got)
		}
	})
}

func TestBrowserUsedResetLinkSaysSoAtOnce(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	e.user("ed@example.com", "editor", "Engineering")
	if err := e.auth.ForgotPassword(context.Background(), quire.RequestInfo{IP: "192.0.2.1"}, "ed@example.com"); err != nil {
		t.Fatal(err)
	}
	link := outboxLink(t, e)
	if err := e.auth.ResetPassword(context.Background(), quire.RequestInfo{IP: "192.0.2.1"}, tokenOf(t, link), "a brand new passphrase for ed"); err != nil {
		t.Fatal(err)
	}

	do(t, ctx, "open the used link", chromedp.Navigate(link), waitVisible(id("page-error")))
	msg := read(t, ctx, "message", chromedp.Text(id("page-error")))
	fields := read(t, ctx, "password fields", chromedp.Evaluate[int](`document.querySelectorAll("input[type=password]").length`))
	if diff := cmp.Diff([]any{badReset, 0}, []any{msg, fields}); diff != "" {
		t.Fatalf("[message, password fields] (-want +got):\n%s", diff)
	}
	do(t, ctx, "ask for a new link", chromedp.Click(id("ask-new-link")), waitVisible(id("send-link")))
}
