package httpapi

import (
	"bytes"
	"context"
	"encoding/base32"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"quire"
	"quire/auth"
)

// mfaUser is a signed-in user with a TOTP set up through the API.
type mfaUser struct {
	email, token, secret string
	recovery             []string
}

// codeAt is the authenticator's code at t, as an app computes it.
func codeAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// annEnrolled is a new env with ann, an editor, who has set up a TOTP.
func annEnrolled(t *testing.T, opts ...envOption) (*env, mfaUser) {
	t.Helper()
	e := newEnv(t, opts...)
	e.user("ann@example.com", "editor", "")
	return e, e.enrol(t, "ann@example.com")
}

// enrol sets up a TOTP for email through the API and returns it; the
// clock is moved one step on, so that the confirming code is spent.
func (e *env) enrol(t *testing.T, email string) mfaUser {
	t.Helper()
	tok := e.login(email)
	r := e.do("POST", "/api/auth/mfa/totp", bearer(tok))
	if r.Status != http.StatusOK {
		t.Fatalf("begin totp: %d %s", r.Status, r.Body)
	}
	var setup struct{ Secret, OtpauthURL string }
	r.decode(t, &setup)
	r = e.do("POST", "/api/auth/mfa/totp/confirm", bearer(tok), jsonBody(map[string]string{"code": codeAt(t, setup.Secret, e.clock.Now())}))
	if r.Status != http.StatusOK {
		t.Fatalf("confirm totp: %d %s", r.Status, r.Body)
	}
	var body struct{ RecoveryCodes []string }
	r.decode(t, &body)
	e.clock.Advance(30 * time.Second)
	return mfaUser{email: email, token: tok, secret: setup.Secret, recovery: body.RecoveryCodes}
}

// passwordStep signs in with the password and returns the mfaToken.
func (e *env) passwordStep(t *testing.T, email string, opts ...reqOpt) string {
	t.Helper()
	r := e.do("POST", "/api/auth/login", append(opts, jsonBody(map[string]string{"email": email, "password": testPassword}))...)
	if r.Status != http.StatusOK {
		t.Fatalf("login %s: %d %s", email, r.Status, r.Body)
	}
	var body map[string]any
	r.decode(t, &body)
	tok, _ := body["mfaToken"].(string)
	if tok == "" || body["mfaRequired"] != true || body["message"] != "Second factor required" || body["accessToken"] != nil {
		t.Fatalf("login of %s with a second factor answered %s", email, r.Body)
	}
	if sc := r.Header.Get("Set-Cookie"); sc != "" {
		t.Fatalf("the password step set a cookie: %s", sc)
	}
	return tok
}

func (e *env) secondStep(mfaToken, code string, opts ...reqOpt) *resp {
	e.t.Helper()
	return e.do("POST", "/api/auth/login/mfa", append(opts, jsonBody(map[string]string{"mfaToken": mfaToken, "code": code}))...)
}

func TestTOTPSetUpAndTwoStepSignIn(t *testing.T) {
	t.Parallel()
	e, admin := newSignedIn(t, "admin", "root@example.com")
	ann := e.user("ann@example.com", "editor", "")
	tok := e.login(ann.Email)

	t.Run("a new secret is not active until confirmed", func(t *testing.T) {
		r := e.do("POST", "/api/auth/mfa/totp", bearer(tok))
		if r.Status != http.StatusOK {
			t.Fatalf("begin: %d %s", r.Status, r.Body)
		}
		var setup struct{ Secret, OtpauthURL string }
		r.decode(t, &setup)
		u, err := url.Parse(setup.OtpauthURL)
		if err != nil || u.Scheme != "otpauth" || u.Host != "totp" {
			t.Fatalf("otpauthUrl %q", setup.OtpauthURL)
		}
		q := u.Query()
		want := map[string]string{"secret": setup.Secret, "issuer": "quire", "algorithm": "SHA1", "digits": "6", "period": "30"}
		for k, v := range want {
			if q.Get(k) != v {
				t.Errorf("otpauthUrl %s = %q, want %q", k, q.Get(k), v)
			}
		}
		if !strings.Contains(u.Path, "ann@example.com") {
			t.Errorf("otpauthUrl names no account: %s", u.Path)
		}
		// Not active yet: the password alone signs in.
		e.login(ann.Email)
		if adminUsers(t, e, admin)[ann.Email].MFA {
			t.Error("mfa true before confirmation")
		}
		// The secret is sealed at rest.
		stored, err := e.store.TOTP(context.Background(), ann.ID)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(setup.Secret)
		if len(raw) != 20 || bytes.Contains(stored.Secret, raw) || bytes.Contains(stored.Secret, []byte(setup.Secret)) {
			t.Errorf("the stored secret holds the secret in clear (%d raw bytes)", len(raw))
		}
		// A wrong code does not confirm, and neither does a code before any set-up.
		e.wantError(e.do("POST", "/api/auth/mfa/totp/confirm", bearer(tok), jsonBody(map[string]string{"code": "000000"})),
			http.StatusBadRequest, quire.EVALIDATION)
		e.wantError(e.do("POST", "/api/auth/mfa/totp/confirm", bearer(tok), jsonBody(map[string]string{})),
			http.StatusBadRequest, quire.EVALIDATION)
	})

	var m mfaUser
	t.Run("confirming answers ten recovery codes and switches it on", func(t *testing.T) {
		m = e.enrol(t, ann.Email)
		if len(m.recovery) != 10 {
			t.Fatalf("%d recovery codes, want 10", len(m.recovery))
		}
		seen := map[string]bool{}
		for _, c := range m.recovery {
			if seen[c] {
				t.Errorf("recovery code %s twice", c)
			}
			seen[c] = true
		}
		if !adminUsers(t, e, admin)[ann.Email].MFA {
			t.Error("mfa false after confirmation")
		}
		e.wantError(e.do("POST", "/api/auth/mfa/totp", bearer(m.token)), http.StatusConflict, quire.EMFAENABLED)
		e.wantError(e.do("POST", "/api/auth/mfa/totp/confirm", bearer(m.token), jsonBody(map[string]string{"code": codeAt(t, m.secret, e.clock.Now())})),
			http.StatusConflict, quire.EMFAENABLED)
		if n := len(e.withT(t).events(quire.ActionMFAEnabled)); n != 1 {
			t.Errorf("%d auth.mfa_enabled events, want 1", n)
		}
	})

	t.Run("the code that confirmed it is spent", func(t *testing.T) {
		mt := e.passwordStep(t, ann.Email)
		e.wantError(e.secondStep(mt, codeAt(t, m.secret, e.clock.Now().Add(-30*time.Second))), http.StatusUnauthorized, quire.EINVALIDMFACODE)
	})

	t.Run("the password and a fresh code sign in, once", func(t *testing.T) {
		mt := e.passwordStep(t, ann.Email)
		code := codeAt(t, m.secret, e.clock.Now())
		r := e.secondStep(mt, code)
		if r.Status != http.StatusOK {
			t.Fatalf("second step: %d %s", r.Status, r.Body)
		}
		var body struct {
			Message, AccessToken string
			User                 struct{ Email string }
		}
		r.decode(t, &body)
		if body.Message != "Login successful" || body.AccessToken == "" || body.User.Email != ann.Email {
			t.Fatalf("second step answered %s", r.Body)
		}
		if !strings.HasPrefix(r.Header.Get("Set-Cookie"), "auth_token="+body.AccessToken) {
			t.Errorf("Set-Cookie %q", r.Header.Get("Set-Cookie"))
		}
		if r := e.do("GET", "/api/auth/me", bearer(body.AccessToken)); r.Status != http.StatusOK {
			t.Errorf("me with the new session: %d", r.Status)
		}
		// The mfaToken is used; the code is spent.
		e.wantError(e.secondStep(mt, code), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)
		mt2 := e.passwordStep(t, ann.Email)
		e.wantError(e.secondStep(mt2, code), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		// A code of the step before (within the skew) but older than the
		// one accepted is refused too.
		e.wantError(e.secondStep(mt2, codeAt(t, m.secret, e.clock.Now().Add(-30*time.Second))), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		// The next step's code (skew) works.
		if r := e.secondStep(mt2, codeAt(t, m.secret, e.clock.Now().Add(30*time.Second))); r.Status != http.StatusOK {
			t.Errorf("a code of the next step: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a recovery code signs in once, written any way", func(t *testing.T) {
		e.clock.Advance(2 * time.Minute)
		mt := e.passwordStep(t, ann.Email)
		loose := strings.ToUpper(strings.ReplaceAll(m.recovery[0], "-", " "))
		if r := e.secondStep(mt, loose); r.Status != http.StatusOK {
			t.Fatalf("recovery code: %d %s", r.Status, r.Body)
		}
		mt = e.passwordStep(t, ann.Email)
		e.wantError(e.secondStep(mt, m.recovery[0]), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		if r := e.secondStep(mt, m.recovery[1]); r.Status != http.StatusOK {
			t.Fatalf("another recovery code: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a wrong code is a failed sign-in with reason mfa", func(t *testing.T) {
		mt := e.passwordStep(t, ann.Email)
		e.wantError(e.secondStep(mt, "123456"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		e.wantError(e.secondStep(mt, "not-a-code"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		var mfaFailures int
		for _, ev := range e.withT(t).events(quire.ActionLoginFailed) {
			if ev.Details["reason"] == quire.LoginFailedMFA && ev.Details["email"] == ann.Email && ev.Target != nil && ev.Target.ID == ann.ID {
				mfaFailures++
			}
		}
		// Three so far: the spent confirming code, a replayed code and
		// its older neighbour earlier, the used recovery code, and these two.
		if mfaFailures != 6 {
			t.Errorf("%d auth.login_failed events with reason mfa, want 6", mfaFailures)
		}
		// The token is still good for a right code.
		e.clock.Advance(time.Minute)
		if r := e.secondStep(mt, codeAt(t, m.secret, e.clock.Now())); r.Status != http.StatusOK {
			t.Errorf("right code after wrong ones: %d %s", r.Status, r.Body)
		}
	})

	t.Run("switching off takes the password", func(t *testing.T) {
		e.wantError(e.do("DELETE", "/api/auth/mfa/totp", bearer(m.token), jsonBody(map[string]string{"password": "wrong password entirely"})),
			http.StatusBadRequest, quire.EINVALIDCURRENT)
		e.wantError(e.do("DELETE", "/api/auth/mfa/totp", bearer(m.token), jsonBody(map[string]string{})),
			http.StatusBadRequest, quire.EVALIDATION)
		e.withT(t).wantMessage(e.do("DELETE", "/api/auth/mfa/totp", bearer(m.token), jsonBody(map[string]string{"password": testPassword})),
			"Second factor switched off")
		e.login(ann.Email) // one step again
		if adminUsers(t, e, admin)[ann.Email].MFA {
			t.Error("mfa true after switching off")
		}
		if n := len(e.withT(t).events(quire.ActionMFADisabled)); n != 1 {
			t.Errorf("%d auth.mfa_disabled events, want 1", n)
		}
		// Off already: no error, no event.
		if r := e.do("DELETE", "/api/auth/mfa/totp", bearer(m.token), jsonBody(map[string]string{"password": testPassword})); r.Status != http.StatusOK {
			t.Errorf("switch off again: %d %s", r.Status, r.Body)
		}
		if n := len(e.withT(t).events(quire.ActionMFADisabled)); n != 1 {
			t.Errorf("%d auth.mfa_disabled events after switching off twice, want 1", n)
		}
	})
}

func TestMFATokenRefusals(t *testing.T) {
	t.Parallel()
	e, m := annEnrolled(t)

	t.Run("fields are required", func(t *testing.T) {
		e.wantError(e.do("POST", "/api/auth/login/mfa", jsonBody(map[string]string{"code": "123456"})), http.StatusBadRequest, quire.EVALIDATION)
		e.wantError(e.do("POST", "/api/auth/login/mfa", jsonBody(map[string]string{"mfaToken": "x"})), http.StatusBadRequest, quire.EVALIDATION)
	})
	t.Run("an unknown token", func(t *testing.T) {
		e.wantError(e.secondStep("no-such-token", codeAt(t, m.secret, e.clock.Now())), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)
		e.wantError(e.secondStep(strings.Repeat("x", 5000), "123456"), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)
	})
	t.Run("a token lives five minutes", func(t *testing.T) {
		mt := e.passwordStep(t, m.email)
		e.clock.Advance(5 * time.Minute)
		e.wantError(e.secondStep(mt, codeAt(t, m.secret, e.clock.Now())), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)
	})
	t.Run("a token takes five codes", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		mt := e.passwordStep(t, m.email)
		for i := range 5 {
			r := e.secondStep(mt, "000000")
			if r.Status != http.StatusUnauthorized {
				t.Fatalf("try %d: %d %s", i+1, r.Status, r.Body)
			}
			e.wantError(r, http.StatusUnauthorized, quire.EINVALIDMFACODE)
		}
		e.wantError(e.secondStep(mt, codeAt(t, m.secret, e.clock.Now())), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)
		// A new password step gives a new token, and the right code works.
		if r := e.secondStep(e.passwordStep(t, m.email), codeAt(t, m.secret, e.clock.Now())); r.Status != http.StatusOK {
			t.Errorf("new token: %d %s", r.Status, r.Body)
		}
	})
	t.Run("of parallel second steps with one token and code, one signs in", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		mt := e.passwordStep(t, m.email)
		code := codeAt(t, m.secret, e.clock.Now())
		var (
			wg sync.WaitGroup
			mu sync.Mutex
			ok int
		)
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.withT(t).secondStep(mt, code)
				mu.Lock()
				defer mu.Unlock()
				switch r.Status {
				case http.StatusOK:
					ok++
				case http.StatusUnauthorized:
				default:
					t.Errorf("parallel second step: %d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if ok != 1 {
			t.Errorf("%d parallel second steps signed in, want 1", ok)
		}
	})
	t.Run("a token of a user switched off meanwhile is void", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		mt := e.passwordStep(t, m.email)
		if r := e.do("DELETE", "/api/auth/mfa/totp", bearer(m.token), jsonBody(map[string]string{"password": testPassword})); r.Status != http.StatusOK {
			t.Fatalf("switch off: %d", r.Status)
		}
		e.wantError(e.secondStep(mt, codeAt(t, m.secret, e.clock.Now())), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)
	})
}

func TestMFACodesUnderLimitsAndLocks(t *testing.T) {
	t.Parallel()
	t.Run("wrong codes count toward the limit of the address and email", func(t *testing.T) {
		t.Parallel()
		e, m := annEnrolled(t, withAuthConfig(func(c *auth.Config) { c.Limits.Limit = 3 }))
		mt := e.passwordStep(t, m.email)
		for range 3 {
			e.wantError(e.secondStep(mt, "000000"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		}
		// The limit is reached: the right code is not even checked, nor the password.
		r := e.secondStep(mt, codeAt(t, m.secret, e.clock.Now()))
		e.wantError(r, http.StatusTooManyRequests, quire.ETOOMANYATTEMPTS)
		if r.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		e.wantError(e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": m.email, "password": testPassword})),
			http.StatusTooManyRequests, quire.ETOOMANYATTEMPTS)
		// Another address is not limited by that pair.
		mt = e.passwordStep(t, m.email, fromAddr("127.0.0.2"))
		if r := e.secondStep(mt, codeAt(t, m.secret, e.clock.Now()), fromAddr("127.0.0.2")); r.Status != http.StatusOK {
			t.Errorf("from another address: %d %s", r.Status, r.Body)
		}
	})
	t.Run("wrong codes lock the email, and a right password between them does not reset the count", func(t *testing.T) {
		t.Parallel()
		e, m := annEnrolled(t, withAuthConfig(func(c *auth.Config) { c.Limits.LockThreshold = 3 }))
		mt := e.passwordStep(t, m.email)
		e.wantError(e.secondStep(mt, "000000"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		e.wantError(e.secondStep(mt, "000000", fromAddr("127.0.0.2")), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		mt = e.passwordStep(t, m.email, fromAddr("127.0.0.3"))
		e.wantError(e.secondStep(mt, "000000", fromAddr("127.0.0.3")), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		e.wantError(e.secondStep(mt, codeAt(t, m.secret, e.clock.Now())), http.StatusTooManyRequests, quire.EACCOUNTLOCKED)
		e.wantError(e.do("POST", "/api/auth/login", fromAddr("127.0.0.4"), jsonBody(map[string]string{"email": m.email, "password": testPassword})),
			http.StatusTooManyRequests, quire.EACCOUNTLOCKED)
		if n := len(e.withT(t).events(quire.ActionLocked)); n != 1 {
			t.Errorf("%d auth.locked events, want 1", n)
		}
	})
	t.Run("a right code resets the consecutive count", func(t *testing.T) {
		t.Parallel()
		e, m := annEnrolled(t, withAuthConfig(func(c *auth.Config) { c.Limits.LockThreshold = 3 }))
		mt := e.passwordStep(t, m.email)
		e.wantError(e.secondStep(mt, "000000"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		e.wantError(e.secondStep(mt, "000000"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		if r := e.secondStep(mt, codeAt(t, m.secret, e.clock.Now())); r.Status != http.StatusOK {
			t.Fatalf("right code: %d %s", r.Status, r.Body)
		}
		mt = e.passwordStep(t, m.email)
		e.wantError(e.secondStep(mt, "000000"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		e.wantError(e.secondStep(mt, "000000"), http.StatusUnauthorized, quire.EINVALIDMFACODE)
		e.passwordStep(t, m.email) // not locked
	})
	t.Run("a wrong password at switching off counts as a failed sign-in", func(t *testing.T) {
		t.Parallel()
		e, m := annEnrolled(t, withAuthConfig(func(c *auth.Config) { c.Limits.Limit = 2 }))
		for range 2 {
			e.wantError(e.do("DELETE", "/api/auth/mfa/totp", bearer(m.token), jsonBody(map[string]string{"password": "wrong password entirely"})),
				http.StatusBadRequest, quire.EINVALIDCURRENT)
		}
		e.wantError(e.do("DELETE", "/api/auth/mfa/totp", bearer(m.token), jsonBody(map[string]string{"password": testPassword})),
			http.StatusTooManyRequests, quire.ETOOMANYATTEMPTS)
	})
}

func TestRequireMFA(t *testing.T) {
	t.Parallel()
	e, admin := newSignedIn(t, "admin", "root@example.com")
	ed := e.user("ed@example.com", "editor", "")
	tok := e.login(ed.Email)
	pat := e.do("POST", "/api/auth/tokens", bearer(tok), jsonBody(map[string]string{"name": "script", "scope": "read"}))
	var created struct{ Secret string }
	pat.decode(t, &created)
	if r := e.do("PUT", "/api/admin/roles/editor", bearer(admin),
		jsonBody(map[string]any{"label": "Editor", "docs": "write", "admin": false, "requireMfa": true})); r.Status != http.StatusOK {
		t.Fatalf("put role: %d %s", r.Status, r.Body)
	}

	t.Run("without a second factor only set-up, me and logout answer", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/api/documentation/documents", nil},
			{"POST", "/api/documentation/documents", map[string]string{"title": "x"}},
			{"GET", "/api/documentation/folders", nil},
			{"GET", "/api/auth/sessions", nil},
			{"GET", "/api/auth/tokens", nil},
			{"POST", "/api/auth/tokens", map[string]string{"name": "n", "scope": "read"}},
			{"POST", "/api/auth/change-password", map[string]string{"currentPassword": testPassword, "newPassword": "another long password 12345"}},
			{"DELETE", "/api/auth/mfa/totp", map[string]string{"password": testPassword}},
		} {
			opts := []reqOpt{bearer(tok)}
			if c.body != nil {
				opts = append(opts, jsonBody(c.body))
			}
			e.wantError(e.do(c.method, c.path, opts...), http.StatusForbidden, quire.EMFASETUPREQUIRED)
		}
		// An API token made before is held back too.
		e.wantError(e.do("GET", "/api/documentation/documents", bearer(created.Secret)), http.StatusForbidden, quire.EMFASETUPREQUIRED)
		if r := e.do("GET", "/api/auth/me", bearer(tok)); r.Status != http.StatusOK {
			t.Errorf("me: %d %s", r.Status, r.Body)
		}
		// A new sign-in is one step and lands in the same place.
		again := e.login(ed.Email)
		e.wantError(e.do("GET", "/api/documentation/documents", bearer(again)), http.StatusForbidden, quire.EMFASETUPREQUIRED)
		if r := e.do("POST", "/api/auth/logout", bearer(again)); r.Status != http.StatusOK {
			t.Errorf("logout: %d %s", r.Status, r.Body)
		}
		// Other roles are not held.
		if r := e.do("GET", "/api/documentation/documents", bearer(admin)); r.Status != http.StatusOK {
			t.Errorf("admin: %d", r.Status)
		}
	})

	t.Run("the same session goes on once a second factor is set up", func(t *testing.T) {
		r := e.do("POST", "/api/auth/mfa/totp", bearer(tok))
		var setup struct{ Secret string }
		r.decode(t, &setup)
		e.wantError(e.do("GET", "/api/documentation/documents", bearer(tok)), http.StatusForbidden, quire.EMFASETUPREQUIRED)
		if r := e.do("POST", "/api/auth/mfa/totp/confirm", bearer(tok), jsonBody(map[string]string{"code": codeAt(t, setup.Secret, e.clock.Now())})); r.Status != http.StatusOK {
			t.Fatalf("confirm: %d %s", r.Status, r.Body)
		}
		for _, tk := range []string{tok, created.Secret} {
			if r := e.do("GET", "/api/documentation/documents", bearer(tk)); r.Status != http.StatusOK {
				t.Errorf("documents after set-up: %d %s", r.Status, r.Body)
			}
		}
	})

	t.Run("an administrator's reset brings the demand back", func(t *testing.T) {
		if r := e.do("DELETE", "/api/admin/users/"+ed.ID+"/mfa", bearer(admin)); r.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}
		e.wantError(e.do("GET", "/api/documentation/documents", bearer(tok)), http.StatusForbidden, quire.EMFASETUPREQUIRED)
	})
}

func TestAdminMFAReset(t *testing.T) {
	t.Parallel()
	e, root, admin := newEnvWithRoot(t)
	ann := e.user("ann@example.com", "editor", "")
	m := e.enrol(t, ann.Email)

	t.Run("only an administrator resets", func(t *testing.T) {
		e.wantError(e.do("DELETE", "/api/admin/users/"+ann.ID+"/mfa", bearer(m.token)), http.StatusForbidden, quire.EFORBIDDEN)
		e.wantError(e.do("DELETE", "/api/admin/users/"+unknownUserID+"/mfa", bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
		e.passwordStep(t, ann.Email) // still on
	})
	t.Run("a reset switches the second factor off and is recorded", func(t *testing.T) {
		e.withT(t).wantMessage(e.do("DELETE", "/api/admin/users/"+ann.ID+"/mfa", bearer(admin)), "Second factor reset")
		if adminUsers(t, e, admin)[ann.Email].MFA {
			t.Error("mfa true after reset")
		}
		e.login(ann.Email) // the password alone again
		evs := e.withT(t).events(quire.ActionMFAReset)
		if len(evs) != 1 || evs[0].Actor == nil || evs[0].Actor.ID != root.ID || evs[0].Target == nil || evs[0].Target.ID != ann.ID {
			t.Fatalf("auth.mfa_reset events = %+v", evs)
		}
		// The user may set one up again, with new recovery codes.
		m2 := e.enrol(t, ann.Email)
		for _, c := range m2.recovery {
			for _, old := range m.recovery {
				if c == old {
					t.Errorf("recovery code %s given twice", c)
				}
			}
		}
		mt := e.passwordStep(t, ann.Email)
		e.wantError(e.secondStep(mt, m.recovery[5]), http.StatusUnauthorized, quire.EINVALIDMFACODE)
	})
	t.Run("a reset of a user without one records nothing", func(t *testing.T) {
		bob := e.user("bob@example.com", "viewer", "")
		if r := e.do("DELETE", "/api/admin/users/"+bob.ID+"/mfa", bearer(admin)); r.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}
		if n := len(e.withT(t).events(quire.ActionMFAReset)); n != 1 {
			t.Errorf("%d auth.mfa_reset events, want 1", n)
		}
	})
}

// TestRequireMFAWithAPasskey: under a role's requireMfa a passkey is set up
// like a TOTP (registering one passes the gate) and counts as the second
// factor; a passkey sign-in asks for no TOTP code.
func TestRequireMFAWithAPasskey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPasskeys(nil))
	admin := e.login(e.user("root@example.com", "admin", "").Email)
	ed := e.user("ed@example.com", "editor", "")
	if r := e.do("PUT", "/api/admin/roles/editor", bearer(admin),
		jsonBody(map[string]any{"label": "Editor", "docs": "write", "admin": false, "requireMfa": true})); r.Status != http.StatusOK {
		t.Fatalf("put role: %d %s", r.Status, r.Body)
	}
	tok := e.login(ed.Email)
	e.wantError(e.do("GET", "/api/documentation/documents", bearer(tok)), http.StatusForbidden, quire.EMFASETUPREQUIRED)
	k := newSoftKey(t)
	e.registerPasskey(tok, "Laptop", k)
	if r := e.do("GET", "/api/documentation/documents", bearer(tok)); r.Status != http.StatusOK {
		t.Errorf("documents after registering a passkey: %d %s", r.Status, r.Body)
	}
	if !adminUsers(t, e, admin)[ed.Email].MFA {
		t.Error("mfa false with a passkey")
	}
	// With a passkey its only second factor, a right password alone opens
	// no session (the factor would never be asked for); a wrong one is a
	// failed sign-in as always, and the passkey signs in.
	login := func(password string) *resp {
		return e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": ed.Email, "password": password}))
	}
	r := login(testPassword)
	e.wantError(r, http.StatusForbidden, quire.EPASSWORDLOGINDISABLED)
	if !strings.Contains(string(r.Body), "passkey") || r.Header.Get("Set-Cookie") != "" {
		t.Errorf("password alone with a passkey: %s (cookie %q)", r.Body, r.Header.Get("Set-Cookie"))
	}
	e.wantError(login("not the password"), http.StatusUnauthorized, quire.EINVALIDCREDENTIALS)
	if r := e.passkeyLogin(k, "127.0.0.1"); r.Status != http.StatusOK {
		t.Errorf("passkey sign-in: %d %s", r.Status, r.Body)
	}
	// With a TOTP on as well (set up in the session that registered the
	// passkey), the password asks for its code, and the passkey alone
	// still signs in.
	r = e.do("POST", "/api/auth/mfa/totp", bearer(tok))
	var setup struct{ Secret string }
	r.decode(t, &setup)
	if r := e.do("POST", "/api/auth/mfa/totp/confirm", bearer(tok), jsonBody(map[string]string{"code": codeAt(t, setup.Secret, e.clock.Now())})); r.Status != http.StatusOK {
		t.Fatalf("confirm totp: %d %s", r.Status, r.Body)
	}
	if r := login(testPassword); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"mfaRequired":true`) {
		t.Errorf("password with a TOTP on: %d %s", r.Status, r.Body)
	}
	if r := e.passkeyLogin(k, "127.0.0.1"); r.Status != http.StatusOK {
		t.Errorf("passkey sign-in with a TOTP on: %d %s", r.Status, r.Body)
	}
}
