package httpapi

import (
	"context"
	"net/http"
	"testing"

	"quire"
	"quire/auth"
)

// TestPasswordLoginUnderOIDCOnly: with --oidc-only, a right password of a
// user who is not an administrator is 403 PASSWORD_LOGIN_DISABLED, a wrong
// one the usual 401, and administrators sign in as before.
func TestPasswordLoginUnderOIDCOnly(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t, withAuthConfig(func(c *auth.Config) { c.PasswordAdminsOnly = true }))
	e.user("root@example.com", "admin", "")

	t.Run("a non-administrator with the right password is refused", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword))
		e.wantError(r, http.StatusForbidden, quire.EPASSWORDLOGINDISABLED)
		if r.Header.Get("Set-Cookie") != "" {
			t.Errorf("a refused sign-in set a cookie: %s", r.Header.Get("Set-Cookie"))
		}
	})
	t.Run("a wrong password is answered as always", func(t *testing.T) {
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", "not the password at all")),
			http.StatusUnauthorized, quire.EINVALIDCREDENTIALS)
	})
	t.Run("the refusal counts as no failed sign-in", func(t *testing.T) {
		lim := e.auth.Config().Limits.Limit
		for range lim + 1 {
			e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)),
				http.StatusForbidden, quire.EPASSWORDLOGINDISABLED)
		}
	})
	t.Run("an administrator signs in with a password", func(t *testing.T) {
		e.login("root@example.com")
		evs, err := e.store.AuditEvents(context.Background(), quire.AuditFilter{Action: quire.ActionLogin, Limit: 10})
		if err != nil || len(evs) != 1 {
			t.Fatalf("auth.login events: %v, %v", evs, err)
		}
	})
}
