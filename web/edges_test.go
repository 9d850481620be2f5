package web_test

import (
	"context"
	"net/http"
	"testing"

	"quire"
	"quire/auth"
	"quire/sso"
)

// TestSSOAcceptsAnInvitationByAVerifiedEmail: product.md section 12 matches
// a user the first time by an email the provider verified, and an invited
// user is such a match: signing in accepts the invitation (the user is
// active, linked, and the invitation's link is void). Under --oidc-only
// that is the only way in for them.
func TestSSOAcceptsAnInvitationByAVerifiedEmail(t *testing.T) {
	ctx := context.Background()
	for _, only := range []bool{false, true} {
		name := "with password sign-in"
		if only {
			name = "under --oidc-only"
		}
		t.Run(name, func(t *testing.T) {
			s := newSSOEnv(t, func(c *sso.Config) { c.Only = only }, withAuth(func(c *auth.Config) { c.PasswordAdminsOnly = only }))
			invited := &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "editor"}}
			link, err := s.auth.Invite(ctx, invited)
			if err != nil {
				t.Fatal(err)
			}
			b := s.browser()
			if p := s.signIn(b, idpAda); p.Status != http.StatusSeeOther || b.cookie() == "" {
				t.Fatalf("callback: %d %q, want signed in", p.Status, p.text("sso-refused"))
			}
			u, err := s.store.UserByEmail(ctx, "ada@example.com")
			if err != nil || u.Status != quire.UserActive || u.ID != invited.ID {
				t.Fatalf("the invited user after the sign-in: %+v, %v", u, err)
			}
			if linked, err := s.store.IdentityUser(ctx, s.idp.Issuer, idpAda.ID); err != nil || linked.ID != u.ID {
				t.Fatalf("the identity is not linked to the invited user: %v", err)
			}
			err = s.auth.SetupPassword(ctx, quire.RequestInfo{IP: "192.0.2.1"}, link, "a long enough password 123")
			if quire.ErrorCode(err) != quire.EINVALIDTOKEN {
				t.Errorf("the invitation's link after the sign-in: %v, want INVALID_TOKEN", err)
			}
			// The next sign-in is by the link.
			if p := s.signIn(s.browser(), idpAda); p.Status != http.StatusSeeOther {
				t.Fatalf("second sign-in: %d %q", p.Status, p.text("sso-refused"))
			}
		})
	}

	t.Run("an unverified email does not accept an invitation", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		if _, err := s.auth.Invite(ctx, &quire.User{Email: "eve@example.com", Name: "Eve", Role: quire.Role{Key: "editor"}}); err != nil {
			t.Fatal(err)
		}
		b := s.browser()
		wantRefused(t, b, s.signIn(b, idpEve), "is not verified")
		if u, err := s.store.UserByEmail(ctx, "eve@example.com"); err != nil || u.Status != quire.UserInvited {
			t.Fatalf("eve after a refused sign-in: %+v, %v", u, err)
		}
	})

	t.Run("a linked user without a password, disabled and enabled again, signs in", func(t *testing.T) {
		s := newSSOEnv(t, nil)
		s.user("root@example.com", "admin", "")
		if p := s.signIn(s.browser(), idpNew); p.Status != http.StatusSeeOther {
			t.Fatalf("first sign-in: %d %q", p.Status, p.text("sso-refused"))
		}
		u, err := s.store.UserByEmail(ctx, idpNew.Email)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.store.DisableUser(ctx, u.ID, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := s.store.EnableUser(ctx, u.ID, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if p := s.signIn(s.browser(), idpNew); p.Status != http.StatusSeeOther {
			t.Fatalf("enabled again: %d %q", p.Status, p.text("sso-refused"))
		}
		if u, err := s.store.UserByID(ctx, u.ID); err != nil || u.Status != quire.UserActive {
			t.Fatalf("after the sign-in: %+v, %v", u, err)
		}
	})
}
