package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/auth"
)

// newPassword is a password that passes the policy, other than testPassword.
const newPassword = "a brand new passphrase for quire"

const forgotAnswer = "If an account exists for that email, a reset link has been sent."

// queuedLinks claims every mail due in the outbox (as a worker would,
// without sending) and returns the links to page found in the mails to
// address to, oldest first. Mails to others are claimed and dropped.
func queuedLinks(t *testing.T, e *env, to, page string) []string {
	t.Helper()
	mails, err := e.store.ClaimMail(context.Background(), time.Now(), time.Hour, 1000)
	if err != nil {
		t.Fatalf("claim mail: %v", err)
	}
	var links []string
	for _, m := range mails {
		if m.To != to {
			continue
		}
		for _, f := range strings.Fields(m.Text) {
			if strings.HasPrefix(f, "http://quire.test/"+page+"?token=") {
				links = append(links, f)
			}
		}
	}
	return links
}

// tokenOf returns the token of a link.
func tokenOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("link %q: %v", link, err)
	}
	tok := u.Query().Get("token")
	if len(tok) < 43 {
		t.Fatalf("link %q carries no 32-byte token", link)
	}
	return tok
}

// forgotToken asks for a reset of email and returns the mailed token.
func forgotToken(t *testing.T, e *env, email string) string {
	t.Helper()
	r := e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": email}))
	if r.Status != http.StatusOK {
		t.Fatalf("forgot-password: %d %s", r.Status, r.Body)
	}
	links := queuedLinks(t, e, quire.NormalizeEmail(email), "reset-password")
	if len(links) != 1 {
		t.Fatalf("%d reset links mailed to %s, want 1", len(links), email)
	}
	return tokenOf(t, links[0])
}

// invite creates an invited user and returns it with its setup token.
func invite(t *testing.T, e *env, email string) (*quire.User, string) {
	t.Helper()
	u, link, err := e.auth.CreateUser(context.Background(), auth.NewUser{Email: email, Name: nameOf(email), Role: "editor"})
	if err != nil {
		t.Fatalf("invite %s: %v", email, err)
	}
	if !strings.HasPrefix(link, "http://quire.test/setup-password?token=") {
		t.Fatalf("invitation link %q", link)
	}
	return u, tokenOf(t, link)
}

func message(t *testing.T, r *resp) string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var body map[string]string
	r.decode(t, &body)
	return body["message"]
}

func TestForgotPassword(t *testing.T) {
	t.Parallel()
	t.Run("an existing and an unknown email get the same answer, and only the account a mail", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		got := []string{
			message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": " ADA@example.com "}))),
			message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "nobody@example.com"}))),
		}
		if diff := cmp.Diff([]string{forgotAnswer, forgotAnswer}, got); diff != "" {
			t.Errorf("answers (-want +got):\n%s", diff)
		}
		mails, err := e.store.ClaimMail(context.Background(), time.Now(), time.Hour, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(mails) != 1 || mails[0].To != "ada@example.com" || mails[0].Subject != "Reset your quire password" {
			t.Fatalf("queued %+v, want one reset mail to ada", mails)
		}
		if !strings.Contains(mails[0].Text, "http://quire.test/reset-password?token=") {
			t.Errorf("mail text has no link built from the public URL:\n%s", mails[0].Text)
		}
	})

	t.Run("invited and disabled accounts get the same answer and no mail", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		invite(t, e, "ivy@example.com")
		queuedLinks(t, e, "", "") // the invitation itself
		e.user("dan@example.com", "editor", "")
		if err := e.auth.Disable(context.Background(), "dan@example.com"); err != nil {
			t.Fatal(err)
		}
		for _, email := range []string{"ivy@example.com", "dan@example.com"} {
			if got := message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": email}))); got != forgotAnswer {
				t.Errorf("%s: answer %q", email, got)
			}
		}
		if mails, _ := e.store.ClaimMail(context.Background(), time.Now(), time.Hour, 100); len(mails) != 0 {
			t.Errorf("queued %d mails, want none", len(mails))
		}
	})

	t.Run("requests are limited per client address", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for i := range 10 {
			r := e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": fmt.Sprintf("u%d@example.com", i)}),
				fromAddr("127.0.0.5"))
			if got := message(t, r); got != forgotAnswer {
				t.Fatalf("request %d: %q", i+1, got)
			}
		}
		r := e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "other@example.com"}), fromAddr("127.0.0.5"))
		e.wantError(r, http.StatusTooManyRequests, quire.ETOOMANYATTEMPTS)
		if s := retryAfter(t, r); s > 3600 {
			t.Errorf("Retry-After %d is beyond the hour", s)
		}
		r = e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "other@example.com"}), fromAddr("127.0.0.6"))
		if got := message(t, r); got != forgotAnswer {
			t.Errorf("another address: %q", got)
		}
		e.clock.Advance(time.Hour + time.Second)
		r = e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "other@example.com"}), fromAddr("127.0.0.5"))
		if got := message(t, r); got != forgotAnswer {
			t.Errorf("after an hour: %q", got)
		}
	})

	t.Run("an email gets at most three mails an hour, whatever the addresses, with the same answer", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		for i := range 5 {
			r := e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"}),
				fromAddr(fmt.Sprintf("127.0.1.%d", i+1)))
			if got := message(t, r); got != forgotAnswer {
				t.Fatalf("request %d: %q", i+1, got)
			}
		}
		if links := queuedLinks(t, e, "ada@example.com", "reset-password"); len(links) != 3 {
			t.Errorf("%d mails, want 3", len(links))
		}
	})

	t.Run("a missing, mistyped or malformed email is a validation error", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for _, c := range []struct {
			name, body, field, want string
		}{
			{"missing", `{}`, "email", "is required"},
			{"null", `{"email": null}`, "email", "is required"},
			{"empty", `{"email": ""}`, "email", "is required"},
			{"a number", `{"email": 42}`, "email", "must be a string"},
			{"not an address", `{"email": "ada at example"}`, "email", "must be an email address"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := e.withT(t).do("POST", "/api/auth/forgot-password", rawBody(c.body), header("Content-Type", "application/json"))
				body := e.withT(t).wantError(r, http.StatusBadRequest, quire.EVALIDATION)
				if diff := cmp.Diff(map[string]any{c.field: c.want}, body["fields"]); diff != "" {
					t.Errorf("fields (-want +got):\n%s", diff)
				}
			})
		}
		e.wantError(e.do("POST", "/api/auth/forgot-password", header("Content-Type", "application/json")), http.StatusBadRequest, quire.EINVALIDJSON)
	})

	t.Run("no log line carries the token", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		tok := forgotToken(t, e, "ada@example.com")
		if strings.Contains(e.logText(), tok) {
			t.Errorf("the log shows the token:\n%s", e.logText())
		}
	})
}

// forgotFloor is auth's least time of a forgot-password answer.
const forgotFloor = 25 * time.Millisecond

// TestForgotPasswordTiming shows that forgot-password cannot tell an
// account from no account by its time. An upper bound on a time difference
// would flake on a shared machine, so the test asserts the causes instead:
// both kinds of request make exactly the same calls to the store (which
// runs the same statements for both; see quire.TokenStore.RequestReset),
// and no answer comes before the floor that hides the remaining difference
// (two more rows written for an account). The medians are logged.
func TestForgotPasswordTiming(t *testing.T) {
	t.Parallel()
	var spy *spyStore
	e := newEnv(t, withStore(func(t testing.TB) quire.Store {
		spy = &spyStore{Store: current.open(t)}
		return spy
	}))
	e.user("ada@example.com", "editor", "")

	const rounds = 60
	var existing, unknown []time.Duration
	var existingCalls, unknownCalls [][]string
	for i := range rounds {
		// A new hour each round, so the per-address and per-email limits
		// never stop the existing account from getting its mail.
		e.clock.Advance(time.Hour + time.Second)
		for _, c := range []struct {
			email string
			times *[]time.Duration
			calls *[][]string
		}{
			{"ada@example.com", &existing, &existingCalls},
			{fmt.Sprintf("nobody%d@example.com", i), &unknown, &unknownCalls},
		} {
			spy.reset()
			start := time.Now()
			r := e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": c.email}))
			took := time.Since(start)
			if took < forgotFloor {
				t.Fatalf("%s: answered after %v, before the %v floor", c.email, took, forgotFloor)
			}
			*c.times = append(*c.times, took)
			if got := message(t, r); got != forgotAnswer {
				t.Fatalf("%s: %q", c.email, got)
			}
			*c.calls = append(*c.calls, spy.calls())
		}
	}
	if links := queuedLinks(t, e, "ada@example.com", "reset-password"); len(links) != rounds {
		t.Fatalf("%d mails to the account, want %d: the rounds did not each send one", len(links), rounds)
	}
	want := []string{"RequestReset"}
	for i := range rounds {
		if diff := cmp.Diff(want, existingCalls[i]); diff != "" {
			t.Fatalf("round %d, existing email: store calls (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(want, unknownCalls[i]); diff != "" {
			t.Fatalf("round %d, unknown email: store calls (-want +got):\n%s", i, diff)
		}
	}
	t.Logf("forgot-password over %d calls each: median %v for an existing email, %v for an unknown one",
		rounds, median(existing), median(unknown))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// spyStore records which methods of the account stores are called, and
// passes every call on to the real store.
type spyStore struct {
	quire.Store
	mu  sync.Mutex
	log []string
	// into is the spy that logs the calls of this one (Recording's).
	into *spyStore
}

func (s *spyStore) rec(name string) {
	if s.into != nil {
		s = s.into
	}
	s.mu.Lock()
	s.log = append(s.log, name)
	s.mu.Unlock()
}

func (s *spyStore) reset() {
	s.mu.Lock()
	s.log = nil
	s.mu.Unlock()
}

func (s *spyStore) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *spyStore) CreateUser(ctx context.Context, u *quire.User) error {
	s.rec("CreateUser")
	return s.Store.CreateUser(ctx, u)
}
func (s *spyStore) UserByID(ctx context.Context, id string) (*quire.User, error) {
	s.rec("UserByID")
	return s.Store.UserByID(ctx, id)
}
func (s *spyStore) UserByEmail(ctx context.Context, email string) (*quire.User, error) {
	s.rec("UserByEmail")
	return s.Store.UserByEmail(ctx, email)
}
func (s *spyStore) ListUsers(ctx context.Context) ([]quire.User, error) {
	s.rec("ListUsers")
	return s.Store.ListUsers(ctx)
}
func (s *spyStore) CountUsers(ctx context.Context) (int, error) {
	s.rec("CountUsers")
	return s.Store.CountUsers(ctx)
}
func (s *spyStore) SetPassword(ctx context.Context, userID, hash string, now time.Time) error {
	s.rec("SetPassword")
	return s.Store.SetPassword(ctx, userID, hash, now)
}
func (s *spyStore) Role(ctx context.Context, key string) (*quire.Role, error) {
	s.rec("Role")
	return s.Store.Role(ctx, key)
}
func (s *spyStore) SessionByTokenHash(ctx context.Context, hash []byte) (*quire.Session, *quire.User, error) {
	s.rec("SessionByTokenHash")
	return s.Store.SessionByTokenHash(ctx, hash)
}
func (s *spyStore) RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error {
	s.rec("RevokeUserSessions")
	return s.Store.RevokeUserSessions(ctx, userID, except, at)
}
func (s *spyStore) BeginLogin(ctx context.Context, addr, email string, now time.Time, l quire.LoginLimits) (string, error) {
	s.rec("BeginLogin")
	return s.Store.BeginLogin(ctx, addr, email, now, l)
}
func (s *spyStore) LoginFailed(ctx context.Context, email string, now time.Time, l quire.LoginLimits, locked *quire.Event) error {
	s.rec("LoginFailed")
	return s.Store.LoginFailed(ctx, email, now, l, locked)
}

// Recording returns a spy of the recording store that logs into s.
func (s *spyStore) Recording(evs ...*quire.Event) quire.Store {
	return &spyStore{Store: s.Store.Recording(evs...), into: s}
}
func (s *spyStore) LoginSucceeded(ctx context.Context, attemptID, email string) error {
	s.rec("LoginSucceeded")
	return s.Store.LoginSucceeded(ctx, attemptID, email)
}
func (s *spyStore) ClearLoginFailures(ctx context.Context, email string) error {
	s.rec("ClearLoginFailures")
	return s.Store.ClearLoginFailures(ctx, email)
}
func (s *spyStore) CreateToken(ctx context.Context, t *quire.OneTimeToken, m *quire.Mail) error {
	s.rec("CreateToken")
	return s.Store.CreateToken(ctx, t, m)
}
func (s *spyStore) TokenByHash(ctx context.Context, p quire.TokenPurpose, hash []byte) (*quire.OneTimeToken, error) {
	s.rec("TokenByHash")
	return s.Store.TokenByHash(ctx, p, hash)
}
func (s *spyStore) RedeemToken(ctx context.Context, p quire.TokenPurpose, hash []byte, pw string, now time.Time) (*quire.User, error) {
	s.rec("RedeemToken")
	return s.Store.RedeemToken(ctx, p, hash, pw, now)
}
func (s *spyStore) RequestReset(ctx context.Context, addr, email string, now time.Time, window time.Duration, perAddr, perEmail int,
	t *quire.OneTimeToken, m *quire.Mail) (bool, error) {
	s.rec("RequestReset")
	return s.Store.RequestReset(ctx, addr, email, now, window, perAddr, perEmail, t, m)
}
func (s *spyStore) QueueMail(ctx context.Context, m *quire.Mail) error {
	s.rec("QueueMail")
	return s.Store.QueueMail(ctx, m)
}

func TestResetPassword(t *testing.T) {
	t.Parallel()
	t.Run("a reset token works once, and only the new password signs in afterwards", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		tok := forgotToken(t, e, "ada@example.com")
		r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
		if got := message(t, r); got != "Password has been reset" {
			t.Errorf("message %q", got)
		}
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)), 401, quire.EINVALIDCREDENTIALS)
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", newPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in with the new password: %d %s", r.Status, r.Body)
		}
		r = e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": "yet another good passphrase"}))
		e.wantErrorMessage(r, http.StatusBadRequest, quire.EINVALIDTOKEN, "The link is invalid or has expired")
	})

	t.Run("a weak password is refused with the reason, and the token stays usable", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		tok := forgotToken(t, e, "ada@example.com")
		for _, c := range []struct{ password, message string }{
			{"", "Password must be at least 15 characters long"},
			{"short one", "Password must be at least 15 characters long"},
			{strings.Repeat("x", 129), "Password must be at most 128 characters long"},
			{"ADA@example.com", "Password must not be the email address"},
			{"PasswordPassword", "Password is too common, choose another"},
		} {
			r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": c.password}))
			body := e.wantError(r, http.StatusBadRequest, quire.EWEAKPASSWORD)
			if body["message"] != c.message {
				t.Errorf("%q: message %q, want %q", c.password, body["message"], c.message)
			}
		}
		r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
		if got := message(t, r); got != "Password has been reset" {
			t.Errorf("message %q", got)
		}
	})

	t.Run("an unknown, expired or used token is INVALID_TOKEN whatever the password", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		tok := forgotToken(t, e, "ada@example.com")
		for _, c := range []struct{ name, token, password string }{
			{"unknown token, weak password", strings.Repeat("A", 43), "weak"},
			{"unknown token, good password", strings.Repeat("A", 43), newPassword},
			{"an oversized token", strings.Repeat("A", 10000), newPassword},
		} {
			r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": c.token, "password": c.password}))
			e.wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
		}
		e.clock.Advance(time.Hour)
		for _, password := range []string{"weak", newPassword} {
			r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": password}))
			e.wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
		}
	})

	t.Run("a token one microsecond before its expiry still works", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		tok := forgotToken(t, e, "ada@example.com")
		e.clock.Advance(time.Hour - time.Microsecond)
		r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
		if got := message(t, r); got != "Password has been reset" {
			t.Errorf("message %q", got)
		}
	})

	t.Run("a reset revokes every session of the user and clears the lock", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withAuthConfig(func(c *auth.Config) { c.Limits.LockThreshold = 3 }))
		e.user("bob@example.com", "editor", "")
		sessions := []string{e.login("ada@example.com"), e.login("ada@example.com")}
		bobs := e.login("bob@example.com")
		failLogins(t, e, 3, "ada@example.com", fromAddr("127.0.0.9"))
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)), 429, quire.EACCOUNTLOCKED)

		tok := forgotToken(t, e, "ada@example.com")
		message(t, e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": newPassword})))
		for _, s := range sessions {
			e.wantError(e.do("GET", "/api/auth/me", bearer(s)), 401, quire.EUNAUTHORIZED)
		}
		if r := e.do("GET", "/api/auth/me", bearer(bobs)); r.Status != http.StatusOK {
			t.Errorf("another user's session: %d", r.Status)
		}
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", newPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in after the reset: %d %s, want the lock cleared", r.Status, r.Body)
		}
	})

	t.Run("a user disabled after the mail was sent cannot use it", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		tok := forgotToken(t, e, "ada@example.com")
		if err := e.auth.Disable(context.Background(), "ada@example.com"); err != nil {
			t.Fatal(err)
		}
		r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
		e.wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", newPassword)), 401, quire.EINVALIDCREDENTIALS)
	})

	t.Run("a setup token is not a reset token, nor the other way round", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, setup := invite(t, e, "ivy@example.com")
		e.user("ada@example.com", "editor", "")
		reset := forgotToken(t, e, "ada@example.com")
		e.wantError(e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": setup, "password": newPassword})),
			http.StatusBadRequest, quire.EINVALIDTOKEN)
		e.wantError(e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": reset, "password": newPassword})),
			http.StatusBadRequest, quire.EINVALIDTOKEN)
	})

	t.Run("missing fields are named", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for _, path := range []string{"/api/auth/reset-password", "/api/auth/setup-password"} {
			body := e.wantError(e.do("POST", path, jsonBody(map[string]any{"token": "", "password": nil})), http.StatusBadRequest, quire.EVALIDATION)
			if diff := cmp.Diff(map[string]any{"token": "is required", "password": "is required"}, body["fields"]); diff != "" {
				t.Errorf("%s fields (-want +got):\n%s", path, diff)
			}
		}
	})
}

func TestSetupPassword(t *testing.T) {
	t.Parallel()
	t.Run("an invited user cannot sign in until the setup link sets a password, once", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, tok := invite(t, e, "ivy@example.com")
		e.wantError(e.do("POST", "/api/auth/login", creds("ivy@example.com", newPassword)), 401, quire.EINVALIDCREDENTIALS)

		r := e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tok, "password": "short"}))
		e.wantError(r, http.StatusBadRequest, quire.EWEAKPASSWORD)
		r = e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
		if got := message(t, r); got != "Password set" {
			t.Errorf("message %q", got)
		}
		if r := e.do("POST", "/api/auth/login", creds("ivy@example.com", newPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in after setup: %d %s", r.Status, r.Body)
		}
		r = e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tok, "password": "another fine passphrase"}))
		e.wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
	})

	t.Run("an invitation expires after seven days", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, tok := invite(t, e, "ivy@example.com")
		e.clock.Advance(168 * time.Hour)
		r := e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
		e.wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
	})

	t.Run("the invitation mail is queued with the link the CLI prints", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, tok := invite(t, e, "ivy@example.com")
		links := queuedLinks(t, e, "ivy@example.com", "setup-password")
		if diff := cmp.Diff([]string{"http://quire.test/setup-password?token=" + tok}, links); diff != "" {
			t.Errorf("mailed links (-want +got):\n%s", diff)
		}
	})
}

// TestRedeemLimit: reset-password and setup-password together take 20
// requests per client address in 15 minutes, whatever their outcome, then
// 429 TOO_MANY_ATTEMPTS with Retry-After, checked before the token.
func TestRedeemLimit(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)
	_, setup := invite(t, e, "ivy@example.com")
	reset := forgotToken(t, e, "ada@example.com")
	attempt := func(path, token string, opts ...reqOpt) *resp {
		return e.do("POST", path, append(opts, jsonBody(map[string]string{"token": token, "password": newPassword}))...)
	}
	for i := range 20 {
		path := "/api/auth/reset-password"
		if i%2 == 1 {
			path = "/api/auth/setup-password"
		}
		e.wantError(attempt(path, fmt.Sprintf("guessed-token-%d", i)), http.StatusBadRequest, quire.EINVALIDTOKEN)
	}

	t.Run("the next request from that address is refused, a good token too", func(t *testing.T) {
		for _, path := range []string{"/api/auth/reset-password", "/api/auth/setup-password"} {
			tok := reset
			if path == "/api/auth/setup-password" {
				tok = setup
			}
			r := attempt(path, tok)
			body := e.withT(t).wantError(r, http.StatusTooManyRequests, quire.ETOOMANYATTEMPTS)
			if body["message"] != "Too many login attempts, please try again later." {
				t.Errorf("%s: message %q", path, body["message"])
			}
			if n := retryAfter(t, r); n > 15*60 {
				t.Errorf("%s: Retry-After %d, beyond the 15-minute window", path, n)
			}
		}
		if r := e.withT(t).do("POST", "/api/auth/login", creds("ada@example.com", testPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in, which the limit does not cover: %d %s", r.Status, r.Body)
		}
	})

	t.Run("another address is not limited, and the refused tokens still work", func(t *testing.T) {
		if got := message(t, attempt("/api/auth/reset-password", reset, fromAddr("127.0.0.3"))); got != "Password has been reset" {
			t.Errorf("reset: %q", got)
		}
		if got := message(t, attempt("/api/auth/setup-password", setup, fromAddr("127.0.0.3"))); got != "Password set" {
			t.Errorf("setup: %q", got)
		}
	})

	t.Run("the address is let through again once the window has passed", func(t *testing.T) {
		e.clock.Advance(15 * time.Minute)
		e.withT(t).wantError(attempt("/api/auth/reset-password", "guessed-again"), http.StatusBadRequest, quire.EINVALIDTOKEN)
	})
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	change := func(current, next string) reqOpt {
		return jsonBody(map[string]string{"currentPassword": current, "newPassword": next})
	}
	// wrongCurrentPasswords sends n changes of password with a wrong
	// current password for the holder of tok, each of which must be
	// refused as INVALID_CURRENT_PASSWORD with its message.
	wrongCurrentPasswords := func(e *env, tok string, n int) {
		e.t.Helper()
		for i := range n {
			r := e.do("POST", "/api/auth/change-password", bearer(tok), change(fmt.Sprintf("wrong guess %d", i), newPassword))
			e.wantErrorMessage(r, http.StatusBadRequest, quire.EINVALIDCURRENT, "Current password is incorrect")
		}
	}

	t.Run("a change keeps the caller's session and revokes the user's others", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		e.user("bob@example.com", "editor", "")
		mine, other, bobs := e.login("ada@example.com"), e.login("ada@example.com"), e.login("bob@example.com")
		r := e.do("POST", "/api/auth/change-password", bearer(mine), change(testPassword, newPassword))
		if got := message(t, r); got != "Password changed" {
			t.Errorf("message %q", got)
		}
		if r := e.do("GET", "/api/auth/me", bearer(mine)); r.Status != http.StatusOK {
			t.Errorf("the caller's session: %d", r.Status)
		}
		e.wantError(e.do("GET", "/api/auth/me", bearer(other)), 401, quire.EUNAUTHORIZED)
		if r := e.do("GET", "/api/auth/me", bearer(bobs)); r.Status != http.StatusOK {
			t.Errorf("another user's session: %d", r.Status)
		}
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)), 401, quire.EINVALIDCREDENTIALS)
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", newPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in with the new password: %d", r.Status)
		}
	})

	t.Run("a weak new password is refused and the old one stays", func(t *testing.T) {
		t.Parallel()
		e, tok := newSignedIn(t, "editor", "ada@example.com")
		r := e.do("POST", "/api/auth/change-password", bearer(tok), change(testPassword, "ada@example.com"))
		e.wantError(r, http.StatusBadRequest, quire.EWEAKPASSWORD)
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in with the old password: %d", r.Status)
		}
	})

	t.Run("wrong current passwords count as failed sign-ins of the email", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withAuthConfig(func(c *auth.Config) { c.Limits.Limit = 3 }))
		tok := e.login("ada@example.com")
		wrongCurrentPasswords(e, tok, 3)
		r := e.do("POST", "/api/auth/change-password", bearer(tok), change(testPassword, newPassword))
		e.wantError(r, http.StatusTooManyRequests, quire.ETOOMANYATTEMPTS)
		retryAfter(t, r)
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)), http.StatusTooManyRequests, quire.ETOOMANYATTEMPTS)
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), fromAddr("127.0.0.3")); r.Status != http.StatusOK {
			t.Errorf("sign-in from another address: %d", r.Status)
		}
	})

	t.Run("enough wrong current passwords lock the account", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withAuthConfig(func(c *auth.Config) { c.Limits.LockThreshold = 2 }))
		tok := e.login("ada@example.com")
		wrongCurrentPasswords(e, tok, 2)
		e.wantError(e.do("POST", "/api/auth/change-password", bearer(tok), change(testPassword, newPassword)),
			http.StatusTooManyRequests, quire.EACCOUNTLOCKED)
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), fromAddr("127.0.0.3")),
			http.StatusTooManyRequests, quire.EACCOUNTLOCKED)
	})

	t.Run("it needs a signed-in caller", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.wantError(e.do("POST", "/api/auth/change-password", change(testPassword, newPassword)), 401, quire.EUNAUTHORIZED)
	})

	t.Run("missing fields are named", func(t *testing.T) {
		t.Parallel()
		e, tok := newSignedIn(t, "editor", "ada@example.com")
		body := e.wantError(e.do("POST", "/api/auth/change-password", bearer(tok), jsonBody(map[string]any{})),
			http.StatusBadRequest, quire.EVALIDATION)
		if diff := cmp.Diff(map[string]any{"currentPassword": "is required", "newPassword": "is required"}, body["fields"]); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
	})
}
