package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/auth"
)

type loginBody struct {
	Message     string         `json:"message"`
	AccessToken string         `json:"accessToken"`
	User        map[string]any `json:"user"`
}

func creds(email, password string) reqOpt {
	return jsonBody(map[string]string{"email": email, "password": password})
}

func TestLogin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.user("ada@example.com", "editor", "Engineering")

	t.Run("succeeds with a token, the user and an HttpOnly cookie", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword))
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		var body loginBody
		r.decode(t, &body)
		if body.Message != "Login successful" {
			t.Errorf("message %q", body.Message)
		}
		if len(body.AccessToken) < 43 {
			t.Errorf("token %q is shorter than 32 bytes of base64", body.AccessToken)
		}
		want := map[string]any{
			"id": u.ID, "email": "ada@example.com", "name": "Ada", "role": "editor", "roleLabel": "Editor",
			"department": "Engineering", "departmentId": u.DepartmentID, "timezone": nil,
		}
		if d := cmp.Diff(want, body.User); d != "" {
			t.Errorf("user (-want +got):\n%s", d)
		}
		sc := r.Header.Get("Set-Cookie")
		for _, part := range []string{"auth_token=" + body.AccessToken, "Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=604800"} {
			if !strings.Contains(sc, part) {
				t.Errorf("Set-Cookie %q lacks %q", sc, part)
			}
		}
		if strings.Contains(sc, "Secure") {
			t.Errorf("Set-Cookie %q is Secure on plain http", sc)
		}
	})

	t.Run("matches the email trimmed and case-insensitively", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", creds("  ADA@Example.COM ", testPassword))
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	})

	t.Run("gives each sign-in a new token", func(t *testing.T) {
		if a, b := e.login("ada@example.com"), e.login("ada@example.com"); a == b {
			t.Fatal("two sign-ins returned the same token")
		}
	})

	t.Run("stores a valid timezone on the user", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", jsonBody(map[string]string{
			"email": "ada@example.com", "password": testPassword, "timezone": "Europe/Paris"}))
		var body loginBody
		r.decode(t, &body)
		if body.User["timezone"] != "Europe/Paris" {
			t.Fatalf("timezone %v", body.User["timezone"])
		}
		me := e.do("GET", "/api/auth/me", bearer(body.AccessToken))
		var mb struct{ User map[string]any }
		me.decode(t, &mb)
		if mb.User["timezone"] != "Europe/Paris" {
			t.Fatalf("me timezone %v", mb.User["timezone"])
		}
	})

	t.Run("refuses a timezone that is not an IANA name", func(t *testing.T) {
		for _, tz := range []string{"Mars/Olympus", "Local", "../../etc/passwd", strings.Repeat("A", 100)} {
			r := e.do("POST", "/api/auth/login", jsonBody(map[string]string{
				"email": "ada@example.com", "password": testPassword, "timezone": tz}))
			body := e.wantError(r, 400, "VALIDATION_ERROR")
			if f, _ := body["fields"].(map[string]any); f["timezone"] == nil {
				t.Errorf("%q: fields %v do not name timezone", tz, body["fields"])
			}
		}
	})
}

func TestLoginFailures(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)
	disabled := e.user("off@example.com", "editor", "")
	if err := e.auth.Disable(context.Background(), disabled.Email); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.auth.CreateUser(context.Background(), auth.NewUser{Email: "new@example.com", Name: "New", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, email, password string
	}{
		{"a wrong password", "ada@example.com", "not the password at all"},
		{"an unknown email", "nobody@example.com", testPassword},
		{"a disabled account", "off@example.com", testPassword},
		{"an account not yet set up", "new@example.com", testPassword},
	} {
		t.Run(tc.name+" is 401 with one message for all", func(t *testing.T) {
			r := e.do("POST", "/api/auth/login", creds(tc.email, tc.password))
			e.wantErrorMessage(r, 401, "INVALID_CREDENTIALS", "Invalid email or password")
		})
	}

	bad := []struct {
		name   string
		opts   []reqOpt
		status int
		code   string
		field  string
	}{
		{"an empty body", []reqOpt{rawBody(""), header("Content-Type", "application/json")}, 400, "INVALID_JSON", ""},
		{"invalid JSON", []reqOpt{rawBody(`{"email":`), header("Content-Type", "application/json")}, 400, "INVALID_JSON", ""},
		{"a JSON array", []reqOpt{rawBody(`[1,2]`)}, 400, "INVALID_JSON", ""},
		{"trailing data", []reqOpt{rawBody(`{"email":"a@b.c","password":"x"} {}`)}, 400, "INVALID_JSON", ""},
		{"invalid UTF-8", []reqOpt{rawBody("{\"email\":\"\xff\xfe\",\"password\":\"x\"}")}, 400, "INVALID_JSON", ""},
		{"nesting deeper than 32", []reqOpt{rawBody(`{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`)}, 400, "INVALID_JSON", ""},
		{"a missing email", []reqOpt{jsonBody(map[string]string{"password": "x"})}, 400, "VALIDATION_ERROR", "email"},
		{"a missing password", []reqOpt{jsonBody(map[string]string{"email": "a@b.c"})}, 400, "VALIDATION_ERROR", "password"},
		{"an email of the wrong type", []reqOpt{rawBody(`{"email": 5, "password": "x"}`)}, 400, "VALIDATION_ERROR", "email"},
		{"a text/plain body", []reqOpt{rawBody(`{"email":"a@b.c","password":"x"}`), header("Content-Type", "text/plain")}, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"a body over 2 MiB", []reqOpt{rawBody(`{"email":"` + strings.Repeat("a", 2<<20) + `"}`)}, 413, "PAYLOAD_TOO_LARGE", ""},
	}
	for _, tc := range bad {
		t.Run(tc.name+" is "+tc.code, func(t *testing.T) {
			r := e.do("POST", "/api/auth/login", append(tc.opts, noSpecCheck())...)
			body := e.wantError(r, tc.status, tc.code)
			if tc.field != "" {
				if f, _ := body["fields"].(map[string]any); f[tc.field] == nil {
					t.Errorf("fields %v do not name %s", body["fields"], tc.field)
				}
			}
		})
	}

	t.Run("a JSON body with charset is accepted", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", rawBody(`{"email":"ada@example.com","password":"`+testPassword+`"}`),
			header("Content-Type", "application/json; charset=utf-8"))
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	})

	t.Run("unknown fields are ignored", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", jsonBody(map[string]any{"email": "ada@example.com", "password": testPassword, "remember": true}))
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	})
}

func TestSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user("ada@example.com", "editor", "Engineering")

	t.Run("me answers the user for a bearer token", func(t *testing.T) {
		r := e.do("GET", "/api/auth/me", bearer(e.login("ada@example.com")))
		var body struct{ User map[string]any }
		r.decode(t, &body)
		if r.Status != 200 || body.User["email"] != "ada@example.com" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("me answers the user for the cookie alone", func(t *testing.T) {
		r := e.do("GET", "/api/auth/me", cookie("auth_token", e.login("ada@example.com")))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	for _, tc := range []struct {
		name string
		opts []reqOpt
	}{
		{"no token", nil},
		{"an unknown token", []reqOpt{bearer("x" + strings.Repeat("A", 42))}},
		{"a Basic header", []reqOpt{header("Authorization", "Basic YTpi")}},
		{"a Bearer header without a token", []reqOpt{header("Authorization", "Bearer ")}},
		{"a malformed header beside a valid cookie", []reqOpt{header("Authorization", "Token abc"), cookie("auth_token", e.login("ada@example.com"))}},
		{"an empty cookie", []reqOpt{cookie("auth_token", "")}},
	} {
		t.Run("me is 401 with "+tc.name, func(t *testing.T) {
			e.wantError(e.do("GET", "/api/auth/me", tc.opts...), 401, "UNAUTHORIZED")
		})
	}

	t.Run("the header wins over the cookie", func(t *testing.T) {
		r := e.do("GET", "/api/auth/me", bearer(e.login("ada@example.com")), cookie("auth_token", "garbage"))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("logout revokes the token and clears the cookie", func(t *testing.T) {
		token := e.login("ada@example.com")
		r := e.do("POST", "/api/auth/logout", bearer(token))
		e.withT(t).wantMessage(r, "Logged out")
		if sc := r.Header.Get("Set-Cookie"); !strings.Contains(sc, "auth_token=;") || !strings.Contains(sc, "Max-Age=0") {
			t.Errorf("Set-Cookie %q does not clear the cookie", sc)
		}
		e.wantError(e.do("GET", "/api/auth/me", bearer(token)), 401, "UNAUTHORIZED")
		e.wantError(e.do("GET", "/api/auth/me", cookie("auth_token", token)), 401, "UNAUTHORIZED")
		e.wantError(e.do("POST", "/api/auth/logout", bearer(token)), 401, "UNAUTHORIZED")
	})

	t.Run("logout needs no body", func(t *testing.T) {
		r := e.do("POST", "/api/auth/logout", bearer(e.login("ada@example.com")), header("Content-Type", "application/json"))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("a role change applies to the very next request", func(t *testing.T) {
		token := e.login("ada@example.com")
		if err := e.auth.SetRole(context.Background(), "ada@example.com", "viewer"); err != nil {
			t.Fatal(err)
		}
		defer e.auth.SetRole(context.Background(), "ada@example.com", "editor")
		var body struct{ User map[string]any }
		e.do("GET", "/api/auth/me", bearer(token)).decode(t, &body)
		if body.User["role"] != "viewer" || body.User["roleLabel"] != "Viewer" {
			t.Fatalf("user %v", body.User)
		}
	})
}

func TestSessionLifetime(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)

	t.Run("a token idle for 24 hours is refused", func(t *testing.T) {
		token := e.login("ada@example.com")
		e.clock.Advance(23 * time.Hour)
		if r := e.do("GET", "/api/auth/me", bearer(token)); r.Status != 200 {
			t.Fatalf("after 23h: %d", r.Status)
		}
		e.clock.Advance(23 * time.Hour) // 23h since the last use
		if r := e.do("GET", "/api/auth/me", bearer(token)); r.Status != 200 {
			t.Fatalf("23h after last use: %d", r.Status)
		}
		e.clock.Advance(24 * time.Hour)
		e.wantError(e.do("GET", "/api/auth/me", bearer(token)), 401, "UNAUTHORIZED")
	})

	t.Run("a token in use is refused after 7 days", func(t *testing.T) {
		token := e.login("ada@example.com")
		for i := 0; i < 7; i++ {
			e.clock.Advance(20 * time.Hour)
			if r := e.do("GET", "/api/auth/me", bearer(token)); r.Status != 200 {
				t.Fatalf("after %dh: %d", 20*(i+1), r.Status)
			}
		}
		e.clock.Advance(28*time.Hour + time.Second) // 168h and a second since sign-in
		e.wantError(e.do("GET", "/api/auth/me", bearer(token)), 401, "UNAUTHORIZED")
	})

	t.Run("disabling the user revokes all its sessions", func(t *testing.T) {
		e.user("bob@example.com", "viewer", "")
		a, b := e.login("bob@example.com"), e.login("bob@example.com")
		if err := e.auth.Disable(context.Background(), "bob@example.com"); err != nil {
			t.Fatal(err)
		}
		e.wantError(e.do("GET", "/api/auth/me", bearer(a)), 401, "UNAUTHORIZED")
		e.wantError(e.do("GET", "/api/auth/me", bearer(b)), 401, "UNAUTHORIZED")
	})
}

func TestCrossOrigin(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)

	t.Run("a cookie-authenticated logout from another site is refused", func(t *testing.T) {
		token := e.login("ada@example.com")
		e.wantError(e.do("POST", "/api/auth/logout", cookie("auth_token", token), header("Sec-Fetch-Site", "cross-site")), 403, "CROSS_ORIGIN")
		e.wantError(e.do("POST", "/api/auth/logout", cookie("auth_token", token), header("Origin", "https://evil.example")), 403, "CROSS_ORIGIN")
		if r := e.do("GET", "/api/auth/me", cookie("auth_token", token)); r.Status != 200 {
			t.Fatalf("the refused logout signed out: %d", r.Status)
		}
	})

	t.Run("a same-origin cookie logout is accepted", func(t *testing.T) {
		token := e.login("ada@example.com")
		r := e.do("POST", "/api/auth/logout", cookie("auth_token", token), header("Sec-Fetch-Site", "same-origin"))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("a cross-origin GET with the cookie is served", func(t *testing.T) {
		r := e.do("GET", "/api/auth/me", cookie("auth_token", e.login("ada@example.com")), header("Sec-Fetch-Site", "cross-site"))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("bearer calls are not affected", func(t *testing.T) {
		r := e.do("POST", "/api/auth/logout", bearer(e.login("ada@example.com")), header("Origin", "https://evil.example"))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("a cross-origin login is refused", func(t *testing.T) {
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), header("Sec-Fetch-Site", "cross-site")), 403, "CROSS_ORIGIN")
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), header("Origin", "http://evil.example")), 403, "CROSS_ORIGIN")
	})
}

// failLogins sends n wrong sign-ins for email from addr and checks each is
// answered 401.
func failLogins(t *testing.T, e *env, n int, email string, opts ...reqOpt) {
	t.Helper()
	for i := 0; i < n; i++ {
		r := e.do("POST", "/api/auth/login", append([]reqOpt{creds(email, "wrong password number "+strconv.Itoa(i))}, opts...)...)
		e.wantError(r, 401, "INVALID_CREDENTIALS")
	}
}

func retryAfter(t *testing.T, r *resp) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n <= 0 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	return n
}

func TestLoginLimit(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)
	e.user("bob@example.com", "editor", "")

	failLogins(t, e, 20, "ada@example.com")

	t.Run("the 21st attempt is refused even with the correct password", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword))
		e.wantErrorMessage(r, 429, "TOO_MANY_ATTEMPTS", "Too many login attempts, please try again later.")
		if s := retryAfter(t, r); s > 15*60 {
			t.Errorf("Retry-After %d is beyond the window", s)
		}
	})

	t.Run("another email from the same address is not limited", func(t *testing.T) {
		if r := e.do("POST", "/api/auth/login", creds("bob@example.com", testPassword)); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("the same email from another address is not limited", func(t *testing.T) {
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), fromAddr("127.0.0.2")); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("a spoofed X-Forwarded-For is ignored without trusted proxies", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), header("X-Forwarded-For", "203.0.113.9"))
		e.wantError(r, 429, "TOO_MANY_ATTEMPTS")
	})

	t.Run("the email is matched normalised", func(t *testing.T) {
		e.wantError(e.do("POST", "/api/auth/login", creds(" ADA@example.com", testPassword)), 429, "TOO_MANY_ATTEMPTS")
	})

	t.Run("once the oldest failure leaves the window, sign-in works again", func(t *testing.T) {
		e.clock.Advance(15*time.Minute + time.Second)
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func TestLoginLimitSlides(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)
	failLogins(t, e, 10, "ada@example.com")
	e.clock.Advance(10 * time.Minute)
	failLogins(t, e, 10, "ada@example.com")
	r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword))
	e.wantError(r, 429, "TOO_MANY_ATTEMPTS")
	if s := retryAfter(t, r); s != 5*60 {
		t.Errorf("Retry-After %d, want 300 (when the first ten leave the window)", s)
	}
	e.clock.Advance(5*time.Minute + time.Second)
	if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)); r.Status != 200 {
		t.Fatalf("after the first ten left: %d %s", r.Status, r.Body)
	}
}

func TestLoginLimitBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t, withHTTPConfig(func(c *serverConfig) { c.TrustedProxies = trustedProxies("127.0.0.1/32") }))
	failLogins(t, e, 20, "ada@example.com", header("X-Forwarded-For", "198.51.100.7"))

	t.Run("the forwarded client is limited", func(t *testing.T) {
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword),
			header("X-Forwarded-For", "198.51.100.7")), 429, "TOO_MANY_ATTEMPTS")
	})
	t.Run("another forwarded client is not", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), header("X-Forwarded-For", "198.51.100.8"))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("the right-most untrusted hop is the client", func(t *testing.T) {
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword),
			header("X-Forwarded-For", "10.9.9.9, 198.51.100.7")), 429, "TOO_MANY_ATTEMPTS")
	})
	t.Run("an untrusted peer's header is ignored", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword),
			header("X-Forwarded-For", "198.51.100.7"), fromAddr("127.0.0.3"))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func TestParallelFailuresAreCountedAtomically(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.do("POST", "/api/auth/login", creds("ada@example.com", fmt.Sprintf("wrong %d", i)))
			mu.Lock()
			counts[r.Status]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if counts[401] != 20 || counts[429] != 80 {
		t.Fatalf("answers %v, want exactly 20×401 and 80×429", counts)
	}
}

func TestAccountLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAuthConfig(func(c *auth.Config) {
		c.Limits.Limit = 1000
		c.Limits.LockThreshold = 5
	}))
	e.user("ada@example.com", "editor", "")

	t.Run("consecutive failures from any addresses lock the email", func(t *testing.T) {
		for i := 0; i < 5; i++ {
			failLogins(t, e, 1, "ada@example.com", fromAddr(fmt.Sprintf("127.0.0.%d", 10+i)))
		}
		r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword), fromAddr("127.0.0.99"))
		e.wantError(r, 429, "ACCOUNT_LOCKED")
		if s := retryAfter(t, r); s != 30*60 {
			t.Errorf("Retry-After %d, want 1800", s)
		}
	})

	t.Run("unlock clears the lock", func(t *testing.T) {
		if err := e.auth.Unlock(context.Background(), "ADA@example.com"); err != nil {
			t.Fatal(err)
		}
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("a success resets the consecutive count", func(t *testing.T) {
		failLogins(t, e, 4, "ada@example.com")
		e.login("ada@example.com")
		failLogins(t, e, 4, "ada@example.com")
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("the lock lifts after its duration", func(t *testing.T) {
		failLogins(t, e, 5, "ada@example.com")
		e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)), 429, "ACCOUNT_LOCKED")
		e.clock.Advance(30*time.Minute + time.Second)
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})

	t.Run("unknown emails lock the same way", func(t *testing.T) {
		failLogins(t, e, 5, "ghost@example.com")
		e.wantError(e.do("POST", "/api/auth/login", creds("ghost@example.com", "anything at all here")), 429, "ACCOUNT_LOCKED")
	})
}

func TestLockWinsOverLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAuthConfig(func(c *auth.Config) {
		c.Limits.Limit = 3
		c.Limits.LockThreshold = 3
	}))
	e.user("ada@example.com", "editor", "")
	failLogins(t, e, 3, "ada@example.com")
	e.wantError(e.do("POST", "/api/auth/login", creds("ada@example.com", testPassword)), 429, "ACCOUNT_LOCKED")
}

func TestWireConventions(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)

	t.Run("a valid client request id is echoed", func(t *testing.T) {
		r := e.do("GET", "/healthz", header("X-Request-Id", "abc.DEF_123-x"))
		if got := r.Header.Get("X-Request-Id"); got != "abc.DEF_123-x" {
			t.Fatalf("X-Request-Id %q", got)
		}
	})

	t.Run("an invalid request id is replaced", func(t *testing.T) {
		for _, id := range []string{"has space", strings.Repeat("a", 129), "semi;colon"} {
			r := e.do("GET", "/healthz", header("X-Request-Id", id))
			if got := r.Header.Get("X-Request-Id"); got == "" || got == id {
				t.Errorf("X-Request-Id %q for %q", got, id)
			}
		}
	})

	t.Run("api answers are not cached", func(t *testing.T) {
		for _, p := range []string{"/api/auth/me", "/api/openapi.json", "/api/nothing"} {
			if cc := e.do("GET", p).Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q", p, cc)
			}
		}
	})

	t.Run("api answers forbid content sniffing", func(t *testing.T) {
		tok := e.login("ada@example.com")
		for _, tc := range []struct {
			method, path string
			opts         []reqOpt
		}{
			{"GET", "/api/auth/me", []reqOpt{bearer(tok)}},
			{"GET", "/api/auth/me", nil},
			{"GET", "/api/openapi.json", nil},
			{"GET", "/api/nothing", nil},
			{"DELETE", "/api/auth/me", []reqOpt{bearer(tok)}},
			{"POST", "/api/auth/login", []reqOpt{rawBody("{")}},
			{"GET", "/api/documentation/documents?limit=x", []reqOpt{bearer(tok)}},
		} {
			if got := e.do(tc.method, tc.path, tc.opts...).Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s %s: X-Content-Type-Options %q, want nosniff", tc.method, tc.path, got)
			}
		}
	})

	t.Run("an unknown route is a JSON 404", func(t *testing.T) {
		e.wantError(e.do("GET", "/api/nothing/here"), 404, "NOT_FOUND")
	})

	t.Run("a wrong method is a JSON 405 with Allow", func(t *testing.T) {
		r := e.do("DELETE", "/api/auth/me", bearer(e.login("ada@example.com")))
		e.wantError(r, 405, "METHOD_NOT_ALLOWED")
		if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") {
			t.Errorf("Allow %q", allow)
		}
	})

	t.Run("health, readiness, metrics and the OpenAPI document need no token", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz", "/metrics", "/api/openapi.json"} {
			if r := e.do("GET", p); r.Status != 200 {
				t.Errorf("%s: %d", p, r.Status)
			}
		}
		if body := string(e.do("GET", "/metrics").Body); !strings.Contains(body, "quire_http_requests_total") {
			t.Errorf("metrics lack quire_http_requests_total")
		}
	})

	t.Run("logs carry no password and no token", func(t *testing.T) {
		token := e.login("ada@example.com")
		e.do("GET", "/api/auth/me", bearer(token))
		logs := e.logText()
		if strings.Contains(logs, testPassword) || strings.Contains(logs, token) {
			t.Fatal("a secret reached the log")
		}
		if !strings.Contains(logs, `"route":"POST /api/auth/login"`) {
			t.Fatalf("no request line names the route pattern:\n%s", logs)
		}
	})
}

// TestOIDCOnlyRefusesOtherWaysIn: under --oidc-only a sign-in that is
// neither the identity provider's nor an administrator's is refused, a
// passkey's included, so that someone the provider removed cannot go on.
func TestOIDCOnlyRefusesOtherWaysIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAuthConfig(func(c *auth.Config) { c.PasswordAdminsOnly = true }))
	ed := e.user("ed@example.com", "editor", "")
	root := e.user("root@example.com", "admin", "")
	ctx := context.Background()
	if _, err := e.auth.SignInVerified(ctx, quire.RequestInfo{}, &ed, "passkey"); quire.ErrorCode(err) != quire.EPASSWORDLOGINDISABLED {
		t.Errorf("an editor's passkey sign-in under --oidc-only: %v", err)
	}
	if _, err := e.auth.SignInVerified(ctx, quire.RequestInfo{}, &ed, auth.MethodSSO); err != nil {
		t.Errorf("an editor's SSO sign-in: %v", err)
	}
	if _, err := e.auth.SignInVerified(ctx, quire.RequestInfo{}, &root, "passkey"); err != nil {
		t.Errorf("an administrator's passkey sign-in: %v", err)
	}
}

// TestSignInWithAHugeEmailKeepsNothingOfIt: an anonymous sign-in with an
// address longer than any account's is answered as any failed one, and
// the store and the audit log keep a name of bounded size, not what was
// sent.
func TestSignInWithAHugeEmailKeepsNothingOfIt(t *testing.T) {
	t.Parallel()
	e, _, root := newEnvWithRoot(t)
	huge := strings.Repeat("a", 1500<<10) + "@example.com"
	if r := e.do("POST", "/api/auth/login", creds(huge, "whatever-password-123")); r.Status != http.StatusUnauthorized {
		t.Fatalf("login: %d %s", r.Status, excerpt(r.Body))
	}
	a := e.do("GET", "/api/admin/audit?action=auth.login_failed", bearer(root))
	if a.Status != http.StatusOK {
		t.Fatalf("audit: %d %s", a.Status, excerpt(a.Body))
	}
	if len(a.Body) > 16<<10 || !strings.Contains(string(a.Body), "longer than 254") {
		t.Errorf("the failed sign-in's event: %d bytes, %s", len(a.Body), excerpt(a.Body))
	}
}
