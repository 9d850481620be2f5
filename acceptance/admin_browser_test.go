package acceptance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAdministration walks product.md section 9 in a real browser:
// an administrator invites a person (the mail is caught by the test SMTP
// server), the person sets a password from the mailed link and signs in,
// and the administrator changes their role and then disables them, which
// ends their session.
func TestBrowserAdministration(t *testing.T) {
	ctx := newChrome(t)
	e, people := demoEnv(t)
	ada := people["ada"]
	// The demo's projects: one more member for the screenshot.
	apollo, err := e.store.ProjectByName(context.Background(), "Apollo")
	if err == nil {
		err = e.store.AddProjectMember(context.Background(), apollo.ID, people["alan"].ID)
	}
	if err != nil {
		t.Fatal(err)
	}

	smtp := e.mailOut(t)

	do(t, ctx, "the administrator opens Administration and invites a person",
		signInByCookie(e, ada.Email, testPassword),
		chromedp.Click(id("admin-link")),
		waitVisible(id("users")),
		chromedp.SendKeys(id("invite-email"), "marie@example.com"),
		chromedp.SendKeys(id("invite-name"), "Marie Curie"),
		chromedp.SetValue(id("invite-role"), "viewer"),
		chromedp.Click(id("invite")),
		waitVisible(css(`tr[data-email="marie@example.com"]`)),
		screenshot("admin-users.png"),
	)
	if flash := read(t, ctx, "flash", chromedp.Text(css(".flash"))); flash != "Invitation sent." {
		t.Errorf("flash %q", flash)
	}
	if status := read(t, ctx, "status", chromedp.Text(css(`tr[data-email="marie@example.com"] .user-status`))); status != "invited" {
		t.Errorf("status %q", status)
	}

	msgs := smtp.Wait(t, 1, 20*time.Second)
	links := msgs[0].MustParse(t).Links()
	if len(links) == 0 || !strings.HasPrefix(links[0], e.server.URL+"/setup-password?token=") || msgs[0].To[0] != "marie@example.com" {
		t.Fatalf("mail to %v links %q", msgs[0].To, links)
	}

	marie := newSession(t, ctx)
	const password = "radium and polonium, discovered in 1898"
	do(t, marie, "the person sets a password from the mailed link and signs in",
		chromedp.Navigate(links[0]),
		waitVisible(id("password")),
		chromedp.SendKeys(id("password"), password),
		chromedp.SendKeys(id("confirm"), password),
		chromedp.Click(id("set-password")),
		waitVisible(id("sign-in")),
		signIn(e, "marie@example.com", password),
	)
	if n := read(t, marie, "new document link", chromedp.Evaluate[int](`document.querySelectorAll('a[href="/documents/new"]').length`)); n != 0 {
		t.Errorf("a viewer sees %d New document links", n)
	}

	do(t, ctx, "the administrator makes the person an editor",
		chromedp.Navigate(e.server.URL+"/admin/users"),
		chromedp.Click(css(`tr[data-email="marie@example.com"] a`)),
		waitVisible(id("user-role")),
		chromedp.SetValue(id("user-role"), "editor"),
		chromedp.Click(id("save-user")),
		waitVisible(css(".flash")),
	)
	if flash := read(t, ctx, "flash", chromedp.Text(css(".flash"))); flash != "User saved." {
		t.Errorf("flash %q", flash)
	}
	do(t, marie, "the person can write at the next request",
		chromedp.Navigate(e.server.URL+"/documents"),
		waitVisible(css(`a[href="/documents/new"]`)),
	)

	do(t, ctx, "the administrator disables the person",
		chromedp.Click(id("disable-user")),
		waitVisible(id("enable-user")),
	)
	if status := read(t, ctx, "status", chromedp.Text(id("user-status"))); status != "disabled" {
		t.Errorf("status %q", status)
	}
	do(t, marie, "the person's session has ended",
		chromedp.Navigate(e.server.URL+"/documents"),
		waitVisible(id("sign-in")),
	)

	do(t, ctx, "the projects page shows each project's members",
		chromedp.Navigate(e.server.URL+"/admin/projects"),
		waitVisible(css(`[data-project="Apollo"]`)),
		screenshot("admin-projects.png"),
		// The user page shows a creation time from the wall clock: the
		// roles page is the one whose screenshot stays the same.
		chromedp.Navigate(e.server.URL+"/admin/roles"),
		waitVisible(id("roles")),
		screenshot("admin-roles.png"),
	)
}
