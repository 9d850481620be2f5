package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/auth"
)

type sessionWire struct {
	ID         string `json:"id"`
	CreatedAt  string `json:"createdAt"`
	LastUsedAt string `json:"lastUsedAt"`
	IP         string `json:"ip"`
	UserAgent  string `json:"userAgent"`
	Current    bool   `json:"current"`
}

type apiTokenWire struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Scope      string  `json:"scope"`
	CreatedAt  string  `json:"createdAt"`
	ExpiresAt  string  `json:"expiresAt"`
	LastUsedAt *string `json:"lastUsedAt"`
}

// loginAs signs in with testPassword from addr with that User-Agent.
func (e *env) loginAs(email, addr, userAgent string) string {
	e.t.Helper()
	r := e.do("POST", "/api/auth/login", fromAddr(addr), header("User-Agent", userAgent),
		jsonBody(map[string]string{"email": email, "password": testPassword}))
	var body loginBody
	e.wantJSON(r, http.StatusOK, &body)
	return body.AccessToken
}

func (e *env) sessions(token string) []sessionWire {
	e.t.Helper()
	return wantMember[[]sessionWire](e.t, e.do("GET", "/api/auth/sessions", bearer(token)), http.StatusOK, "sessions")
}

// newAPIToken creates a token with the session token and returns it with
// its secret.
func (e *env) newAPIToken(session, name, scope string) (apiTokenWire, string) {
	e.t.Helper()
	var out struct {
		Token  apiTokenWire `json:"token"`
		Secret string       `json:"secret"`
	}
	e.wantJSON(e.do("POST", "/api/auth/tokens", bearer(session), jsonBody(map[string]string{"name": name, "scope": scope})), http.StatusCreated, &out)
	return out.Token, out.Secret
}

func (e *env) apiTokens(session string) []apiTokenWire {
	e.t.Helper()
	return wantMember[[]apiTokenWire](e.t, e.do("GET", "/api/auth/tokens", bearer(session)), http.StatusOK, "tokens")
}

// wantMessage checks a 200 {"message": msg}.
func (e *env) wantMessage(r *resp, msg string) {
	e.t.Helper()
	var out struct {
		Message string `json:"message"`
	}
	e.wantJSON(r, http.StatusOK, &out)
	if out.Message != msg {
		e.t.Fatalf("message %q, want %q", out.Message, msg)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	t.Run("the list shows the caller's own sessions with address, browser and the current one", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		e.user("bob@example.com", "editor", "")
		first := e.loginAs("ada@example.com", "127.0.0.2", "Firefox/140.0")
		e.clock.Advance(time.Minute)
		second := e.loginAs("ada@example.com", "127.0.0.3", "Chromium/141.0")
		e.loginAs("bob@example.com", "127.0.0.4", "curl/8")

		got := e.sessions(second)
		want := []sessionWire{
			{CreatedAt: "2026-11-25T10:01:00.000000Z", LastUsedAt: "2026-11-25T10:01:00.000000Z",
				IP: "127.0.0.3", UserAgent: "Chromium/141.0", Current: true},
			{CreatedAt: "2026-11-25T10:00:00.000000Z", LastUsedAt: "2026-11-25T10:00:00.000000Z",
				IP: "127.0.0.2", UserAgent: "Firefox/140.0"},
		}
		if diff := cmp.Diff(want, got, cmpIgnoreID()); diff != "" {
			t.Errorf("sessions (-want +got):\n%s", diff)
		}
		if got := e.sessions(first); len(got) != 2 || got[1].Current != true || got[0].Current {
			t.Errorf("sessions seen by the first = %+v, want the first current", got)
		}
	})

	t.Run("one session is signed out; another user's is not found", func(t *testing.T) {
		t.Parallel()
		e, mine := newSignedIn(t, "editor", "ada@example.com", "bob@example.com")
		other := e.login("ada@example.com")
		bobs := e.login("bob@example.com")
		var otherID, bobID string
		for _, s := range e.sessions(mine) {
			if !s.Current {
				otherID = s.ID
			}
		}
		bobID = e.sessions(bobs)[0].ID

		e.wantError(e.do("DELETE", "/api/auth/sessions/"+bobID, bearer(mine)), http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("DELETE", "/api/auth/sessions/not-an-id", bearer(mine)), http.StatusNotFound, quire.ENOTFOUND)
		if r := e.do("GET", "/api/auth/me", bearer(bobs)); r.Status != http.StatusOK {
			t.Fatalf("bob after ada tried his session: %d", r.Status)
		}
		e.wantMessage(e.do("DELETE", "/api/auth/sessions/"+otherID, bearer(mine)), "Session revoked")
		e.wantError(e.do("GET", "/api/auth/me", bearer(other)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		e.wantError(e.do("DELETE", "/api/auth/sessions/"+otherID, bearer(mine)), http.StatusNotFound, quire.ENOTFOUND)
		if got := e.sessions(mine); len(got) != 1 || !got[0].Current {
			t.Errorf("sessions after the revocation = %+v, want the current one alone", got)
		}
	})

	t.Run("signing out the current session clears its cookie", func(t *testing.T) {
		t.Parallel()
		e, tok := newSignedIn(t, "editor", "ada@example.com")
		id := e.sessions(tok)[0].ID
		r := e.do("DELETE", "/api/auth/sessions/"+id, cookie(cookieName, tok))
		e.wantMessage(r, "Session revoked")
		if sc := r.Header.Get("Set-Cookie"); !strings.HasPrefix(sc, cookieName+"=;") {
			t.Errorf("Set-Cookie = %q, want the cookie cleared", sc)
		}
		e.wantError(e.do("GET", "/api/auth/me", bearer(tok)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
	})

	t.Run("every other session is signed out, the current one and other users' stay", func(t *testing.T) {
		t.Parallel()
		e, mine := newSignedIn(t, "editor", "ada@example.com", "bob@example.com")
		o1, o2 := e.login("ada@example.com"), e.login("ada@example.com")
		bobs := e.login("bob@example.com")
		e.wantMessage(e.do("DELETE", "/api/auth/sessions", bearer(mine)), "Other sessions revoked")
		for _, tok := range []string{o1, o2} {
			e.wantError(e.do("GET", "/api/auth/me", bearer(tok)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		}
		for _, tok := range []string{mine, bobs} {
			if r := e.do("GET", "/api/auth/me", bearer(tok)); r.Status != http.StatusOK {
				t.Errorf("GET /api/auth/me: %d, want 200", r.Status)
			}
		}
	})

	t.Run("the session endpoints refuse the cookie cross-origin and need a sign-in", func(t *testing.T) {
		t.Parallel()
		e, tok := newSignedIn(t, "editor", "ada@example.com")
		e.wantError(e.do("DELETE", "/api/auth/sessions", cookie(cookieName, tok), header("Sec-Fetch-Site", "cross-site")),
			http.StatusForbidden, quire.ECROSSORIGIN)
		e.wantError(e.do("GET", "/api/auth/sessions"), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		e.wantError(e.do("DELETE", "/api/auth/sessions/x"), http.StatusUnauthorized, quire.EUNAUTHORIZED)
	})
}

// unknownUUID is a well-formed id that names nothing.
const unknownUUID = "0190b2a4-0000-7000-8000-000000000000"

// cmpIgnoreID compares wire structs without their ids.
func cmpIgnoreID() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ID" }, cmp.Ignore())
}

func TestAPITokens(t *testing.T) {
	t.Parallel()
	t.Run("a token is created with its secret shown once, and listed without it", func(t *testing.T) {
		t.Parallel()
		e, sess := newSignedIn(t, "viewer", "ada@example.com")
		tok, secret := e.newAPIToken(sess, "  nightly export  ", "read")
		want := apiTokenWire{ID: tok.ID, Name: "nightly export", Scope: "read",
			CreatedAt: "2026-11-25T10:00:00.000000Z", ExpiresAt: "2026-02-23T10:00:00.000000Z"}
		want.ExpiresAt = "2027-02-23T10:00:00.000000Z" // 90 days on
		if diff := cmp.Diff(want, tok); diff != "" {
			t.Errorf("token (-want +got):\n%s", diff)
		}
		if !strings.HasPrefix(secret, "quire_pat_") || len(secret) != len("quire_pat_")+43 {
			t.Errorf("secret %q, want quire_pat_ and 43 characters", secret)
		}
		r := e.do("GET", "/api/auth/tokens", bearer(sess))
		if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), secret[len("quire_pat_"):]) {
			t.Errorf("the list shows the secret: %s", r.Body)
		}
		if diff := cmp.Diff([]apiTokenWire{want}, e.apiTokens(sess)); diff != "" {
			t.Errorf("tokens (-want +got):\n%s", diff)
		}
	})

	t.Run("names, scopes and expiries out of bounds are refused naming the field", func(t *testing.T) {
		t.Parallel()
		e, sess := newSignedIn(t, "editor", "ada@example.com")
		now := e.clock.Now()
		cases := []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"scope": "read"}, "name"},
			{map[string]any{"name": "  ", "scope": "read"}, "name"},
			{map[string]any{"name": strings.Repeat("é", 101), "scope": "read"}, "name"},
			{map[string]any{"name": "a\tb", "scope": "read"}, "name"},
			{map[string]any{"name": "x"}, "scope"},
			{map[string]any{"name": "x", "scope": "admin"}, "scope"},
			{map[string]any{"name": "x", "scope": "read", "expiresAt": now.Add(-time.Second).Format(time.RFC3339)}, "expiresAt"},
			{map[string]any{"name": "x", "scope": "read", "expiresAt": now.Format(time.RFC3339)}, "expiresAt"},
			{map[string]any{"name": "x", "scope": "read", "expiresAt": now.Add(366*24*time.Hour + time.Second).Format(time.RFC3339)}, "expiresAt"},
			{map[string]any{"name": "x", "scope": "read", "expiresAt": "next week"}, "expiresAt"},
			{map[string]any{"name": 7, "scope": "read"}, "name"},
		}
		for _, c := range cases {
			r := e.do("POST", "/api/auth/tokens", bearer(sess), jsonBody(c.body))
			body := e.wantError(r, http.StatusBadRequest, quire.EVALIDATION)
			fields, _ := body["fields"].(map[string]any)
			if _, ok := fields[c.field]; !ok || len(fields) != 1 {
				t.Errorf("%v: fields %v, want %s alone", c.body, fields, c.field)
			}
		}
		r := e.do("POST", "/api/auth/tokens", bearer(sess), jsonBody(map[string]any{"name": strings.Repeat("é", 100),
			"scope": "write", "expiresAt": now.Add(366 * 24 * time.Hour).Format(time.RFC3339)}))
		if r.Status != http.StatusCreated {
			t.Errorf("100 characters and 366 days: %d %s, want 201", r.Status, r.Body)
		}
		if got := e.apiTokens(sess); len(got) != 1 {
			t.Errorf("%d tokens, want only the valid one", len(got))
		}
	})

	t.Run("a read token reads the documents API with its user's visibility and is refused every write", func(t *testing.T) {
		t.Parallel()
		fx, ada := newDocsFixtureWithAda(t)
		bob := fx.person("bob@example.com", "editor", "Sales", false)
		_, read := fx.newAPIToken(ada, "reader", "read")
		mine := fx.create(ada, map[string]any{"title": "Ada's", "content": "x", "visibility": "private"})
		bobs := fx.create(bob, map[string]any{"title": "Bob's", "content": "x", "visibility": "private"})

		if r := fx.do("GET", docsPath+"/"+mine.ID, bearer(read)); r.Status != http.StatusOK {
			t.Errorf("GET own document with a read token: %d %s", r.Status, r.Body)
		}
		fx.wantError(fx.do("GET", docsPath+"/"+bobs.ID, bearer(read)), http.StatusNotFound, quire.ENOTFOUND)
		if l := decodeList(t, fx.do("GET", docsPath, bearer(read))); l.Pagination.Total != 1 {
			t.Errorf("the read token lists %d documents, want its user's 1", l.Pagination.Total)
		}
		for _, w := range []struct{ method, path string }{
			{"POST", docsPath},
			{"PUT", docsPath + "/" + mine.ID},
			{"DELETE", docsPath + "/" + mine.ID},
			{"POST", docsPath + "/" + mine.ID + "/versions/1/restore"},
			{"POST", "/api/documentation/folders"},
			{"POST", "/api/documentation/trash/" + mine.ID + "/restore"},
			{"DELETE", "/api/documentation/trash/" + mine.ID},
		} {
			r := fx.do(w.method, w.path, bearer(read), jsonBody(map[string]any{"title": "changed", "content": "y", "name": "F"}))
			fx.wantError(r, http.StatusForbidden, quire.EFORBIDDEN)
		}
		got := decodeDoc(t, fx.do("GET", docsPath+"/"+mine.ID, bearer(ada)))
		if got.Title != "Ada's" || got.Version != 1 {
			t.Errorf("after the refused writes: title %q version %d", got.Title, got.Version)
		}
	})

	t.Run("a write token writes, never more than its user's role allows", func(t *testing.T) {
		t.Parallel()
		fx, ada := newDocsFixtureWithAda(t)
		vic := fx.person("vic@example.com", "viewer", "Engineering", false)
		_, write := fx.newAPIToken(ada, "writer", "write")
		_, viewerWrite := fx.newAPIToken(vic, "viewer's", "write")

		doc := fx.create(write, map[string]any{"title": "By script", "content": "x", "visibility": "department"})
		if doc.Owner.Name != "Ada" {
			t.Errorf("owner %q, want Ada", doc.Owner.Name)
		}
		r := fx.do("PUT", docsPath+"/"+doc.ID, bearer(write), jsonBody(map[string]any{"title": "By script, twice"}))
		if got := decodeDoc(t, r); got.Version != 2 {
			t.Errorf("version after a write-token update = %d, want 2", got.Version)
		}
		if r := fx.do("GET", docsPath+"/"+doc.ID, bearer(viewerWrite)); r.Status != http.StatusOK {
			t.Errorf("viewer's write token reads: %d", r.Status)
		}
		fx.wantError(fx.do("PUT", docsPath+"/"+doc.ID, bearer(viewerWrite), jsonBody(map[string]any{"title": "no"})),
			http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("POST", docsPath, bearer(viewerWrite), jsonBody(map[string]any{"title": "no", "content": "x"})),
			http.StatusForbidden, quire.EFORBIDDEN)
	})

	t.Run("a write token's keyed write is replayed; a read token's is refused before its key is kept", func(t *testing.T) {
		t.Parallel()
		fx, ada := newDocsFixtureWithAda(t)
		_, write := fx.newAPIToken(ada, "writer", "write")
		_, read := fx.newAPIToken(ada, "reader", "read")
		body := map[string]any{"title": "Nightly report", "content": "x"}
		fx.wantError(fx.do("POST", docsPath, bearer(read), header("Idempotency-Key", "k-1"), jsonBody(body)),
			http.StatusForbidden, quire.EFORBIDDEN)
		first := fx.do("POST", docsPath, bearer(write), header("Idempotency-Key", "k-1"), jsonBody(body))
		again := fx.do("POST", docsPath, bearer(write), header("Idempotency-Key", "k-1"), jsonBody(body))
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("keyed creates: %d, then %d replayed %q", first.Status, again.Status, again.Header.Get("Idempotent-Replayed"))
		}
		if d1, d2 := decodeDoc(t, first), decodeDoc(t, again); d1.ID != d2.ID {
			t.Errorf("the repeat created another document: %s, %s", d1.ID, d2.ID)
		}
		if l := decodeList(t, fx.do("GET", docsPath, bearer(read))); l.Pagination.Total != 1 {
			t.Errorf("%d documents, want 1", l.Pagination.Total)
		}
	})

	t.Run("a token is refused on the signed-in user, sign-out, passwords, sessions, tokens and administration", func(t *testing.T) {
		t.Parallel()
		e, sess := newSignedIn(t, "admin", "ada@example.com")
		tok, write := e.newAPIToken(sess, "writer", "write")
		sessionID := e.sessions(sess)[0].ID
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/api/auth/me", nil},
			{"POST", "/api/auth/logout", nil},
			{"POST", "/api/auth/change-password", map[string]string{"currentPassword": testPassword, "newPassword": newPassword}},
			{"GET", "/api/auth/sessions", nil},
			{"DELETE", "/api/auth/sessions", nil},
			{"DELETE", "/api/auth/sessions/" + sessionID, nil},
			{"POST", "/api/auth/tokens", map[string]string{"name": "another", "scope": "write"}},
			{"GET", "/api/auth/tokens", nil},
			{"DELETE", "/api/auth/tokens/" + tok.ID, nil},
			{"GET", "/api/admin/audit", nil},
		} {
			opts := []reqOpt{bearer(write)}
			if c.body != nil {
				opts = append(opts, jsonBody(c.body))
			}
			e.wantError(e.do(c.method, c.path, opts...), http.StatusForbidden, quire.EFORBIDDEN)
		}
		// Nothing of the refused calls happened.
		if r := e.do("GET", "/api/auth/me", bearer(sess)); r.Status != http.StatusOK {
			t.Errorf("the session after the refused calls: %d", r.Status)
		}
		if got := e.apiTokens(sess); len(got) != 1 {
			t.Errorf("%d tokens after the refused calls, want 1", len(got))
		}
		if _, err := e.auth.Login(context.Background(), quire.RequestInfo{IP: "127.0.0.1"}, "ada@example.com", testPassword, ""); err != nil {
			t.Errorf("the old password after a refused change: %v", err)
		}
	})

	t.Run("a token works in the Authorization header only, never as the cookie", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		_, read := e.newAPIToken(e.login("ada@example.com"), "reader", "read")
		e.wantError(e.do("GET", docsPath, cookie(cookieName, read)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		if r := e.do("GET", docsPath, bearer(read)); r.Status != http.StatusOK {
			t.Errorf("GET with the header: %d", r.Status)
		}
		e.wantError(e.do("GET", docsPath, bearer(read+"x")), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		e.wantError(e.do("GET", docsPath, bearer("quire_pat_")), http.StatusUnauthorized, quire.EUNAUTHORIZED)
	})

	t.Run("a revoked or expired token is unauthorized; another user's is not found", func(t *testing.T) {
		t.Parallel()
		e, sess := newSignedIn(t, "editor", "ada@example.com", "bob@example.com")
		bobSess := e.login("bob@example.com")
		tok, secret := e.newAPIToken(sess, "one", "read")
		r := e.do("POST", "/api/auth/tokens", bearer(sess), jsonBody(map[string]any{"name": "short", "scope": "read",
			"expiresAt": e.clock.Now().Add(time.Hour).Format(time.RFC3339Nano)}))
		if r.Status != http.StatusCreated {
			t.Fatalf("create a short token: %d %s", r.Status, r.Body)
		}
		var short struct {
			Secret string `json:"secret"`
		}
		r.decode(t, &short)

		e.wantError(e.do("DELETE", "/api/auth/tokens/"+tok.ID, bearer(bobSess)), http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("DELETE", "/api/auth/tokens/nope", bearer(sess)), http.StatusNotFound, quire.ENOTFOUND)
		if r := e.do("GET", docsPath, bearer(secret)); r.Status != http.StatusOK {
			t.Fatalf("token after bob's try: %d", r.Status)
		}
		e.wantMessage(e.do("DELETE", "/api/auth/tokens/"+tok.ID, bearer(sess)), "API token revoked")
		e.wantError(e.do("GET", docsPath, bearer(secret)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		e.wantError(e.do("DELETE", "/api/auth/tokens/"+tok.ID, bearer(sess)), http.StatusNotFound, quire.ENOTFOUND)

		e.clock.Advance(time.Hour)
		e.wantError(e.do("GET", docsPath, bearer(short.Secret)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		if got := e.apiTokens(e.login("ada@example.com")); len(got) != 0 {
			t.Errorf("tokens listed after revocation and expiry: %+v", got)
		}
	})

	t.Run("the last use is recorded at most once a minute", func(t *testing.T) {
		t.Parallel()
		e, sess := newSignedIn(t, "editor", "ada@example.com")
		_, secret := e.newAPIToken(sess, "one", "read")
		lastUsed := func() string {
			t.Helper()
			l := e.apiTokens(sess)
			if len(l) != 1 || l[0].LastUsedAt == nil {
				return "never"
			}
			return *l[0].LastUsedAt
		}
		if got := lastUsed(); got != "never" {
			t.Errorf("lastUsedAt before any use = %s", got)
		}
		e.clock.Advance(10 * time.Second)
		e.do("GET", docsPath, bearer(secret))
		e.clock.Advance(50 * time.Second)
		e.do("GET", docsPath, bearer(secret))
		if got := lastUsed(); got != "2026-11-25T10:00:10.000000Z" {
			t.Errorf("lastUsedAt after two uses within a minute = %s, want the first", got)
		}
		e.clock.Advance(10 * time.Second)
		e.do("GET", docsPath, bearer(secret))
		if got := lastUsed(); got != "2026-11-25T10:01:10.000000Z" {
			t.Errorf("lastUsedAt a minute on = %s, want 10:01:10", got)
		}
	})

	t.Run("disabling the user or resetting its password revokes its tokens; changing it keeps them", func(t *testing.T) {
		t.Parallel()
		e, sess := newSignedIn(t, "editor", "ada@example.com", "bob@example.com")
		_, kept := e.newAPIToken(sess, "kept", "read")
		r := e.do("POST", "/api/auth/change-password", bearer(sess),
			jsonBody(map[string]string{"currentPassword": testPassword, "newPassword": newPassword}))
		e.wantMessage(r, "Password changed")
		if r := e.do("GET", docsPath, bearer(kept)); r.Status != http.StatusOK {
			t.Fatalf("token after a change of password: %d, want 200", r.Status)
		}
		tok := forgotToken(t, e, "ada@example.com")
		r = e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": testPassword}))
		e.wantMessage(r, "Password has been reset")
		e.wantError(e.do("GET", docsPath, bearer(kept)), http.StatusUnauthorized, quire.EUNAUTHORIZED)

		_, bobs := e.newAPIToken(e.login("bob@example.com"), "bob's", "write")
		if err := e.auth.Disable(context.Background(), "bob@example.com"); err != nil {
			t.Fatal(err)
		}
		e.wantError(e.do("GET", docsPath, bearer(bobs)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
	})

	t.Run("a token never meets the sign-in limits of its user", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, withAuthConfig(func(c *auth.Config) {
			c.Limits.Limit, c.Limits.LockThreshold = 3, 3
		}))
		e.user("ada@example.com", "editor", "")
		_, secret := e.newAPIToken(e.login("ada@example.com"), "one", "read")
		for range 3 {
			e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": "ada@example.com", "password": "wrong password!"}))
		}
		r := e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": "ada@example.com", "password": testPassword}))
		e.wantError(r, http.StatusTooManyRequests, quire.EACCOUNTLOCKED)
		for range 5 {
			if r := e.do("GET", docsPath, bearer(secret)); r.Status != http.StatusOK {
				t.Fatalf("token while the account is locked: %d %s", r.Status, r.Body)
			}
		}
	})

	t.Run("creating and revoking tokens and signing out sessions are recorded in the audit log", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		ada := e.user("ada@example.com", "admin", "")
		sess := e.loginAs("ada@example.com", "127.0.0.5", "Firefox/140.0")
		other, third := e.login("ada@example.com"), e.login("ada@example.com")
		tok, secret := e.newAPIToken(sess, "nightly export", "read")
		// Refused calls record nothing.
		e.wantError(e.do("DELETE", "/api/auth/tokens/"+unknownUUID, bearer(sess)), http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("DELETE", "/api/auth/sessions/"+unknownUUID, bearer(sess)), http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("POST", "/api/auth/tokens", bearer(secret), jsonBody(map[string]string{"name": "x", "scope": "read"})),
			http.StatusForbidden, quire.EFORBIDDEN)
		e.wantMessage(e.do("DELETE", "/api/auth/tokens/"+tok.ID, bearer(sess), fromAddr("127.0.0.5"), header("X-Request-Id", "req-revoke-token")),
			"API token revoked")
		var otherID string
		for _, s := range e.sessions(other) {
			if s.Current {
				otherID = s.ID
			}
		}
		e.wantMessage(e.do("DELETE", "/api/auth/sessions/"+otherID, bearer(sess)), "Session revoked")
		e.wantMessage(e.do("DELETE", "/api/auth/sessions", bearer(sess)), "Other sessions revoked")
		e.wantError(e.do("GET", "/api/auth/me", bearer(third)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		var current string
		for _, s := range e.sessions(sess) {
			current = s.ID
		}

		var got []eventWire
		for _, prefix := range []string{"token.", "session."} {
			page, raw := e.audit(t, sess, url.Values{"action": {prefix}})
			if strings.Contains(string(raw), secret[len(quire.APITokenPrefix):]) {
				t.Fatalf("the audit log holds the secret: %s", raw)
			}
			got = append(got, page.Events...)
		}
		actor := &personWire{ID: ada.ID, Name: ada.Name}
		want := []eventWire{
			{Action: "token.revoked", Actor: actor, Target: &targetWire{Type: "token", ID: tok.ID}, IP: "127.0.0.5",
				RequestID: "req-revoke-token", Details: map[string]any{}},
			{Action: "token.created", Actor: actor, Target: &targetWire{Type: "token", ID: tok.ID, Name: "nightly export"},
				IP: "127.0.0.1", Details: map[string]any{"scope": "read", "expiresAt": tok.ExpiresAt}},
			{Action: "session.revoked", Actor: actor, Target: &targetWire{Type: "user", ID: ada.ID, Name: ada.Name}, IP: "127.0.0.1",
				Details: map[string]any{"except": current}},
			{Action: "session.revoked", Actor: actor, Target: &targetWire{Type: "session", ID: otherID}, IP: "127.0.0.1",
				Details: map[string]any{}},
		}
		ignore := cmp.FilterPath(func(p cmp.Path) bool {
			switch p.Last().String() {
			case ".ID", ".At", ".RequestID":
				return p.Index(-2).Type().Name() == "eventWire"
			}
			return false
		}, cmp.Ignore())
		if diff := cmp.Diff(want, got, ignore); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if len(got) > 0 && got[0].RequestID != "req-revoke-token" {
			t.Errorf("token.revoked request id %q", got[0].RequestID)
		}
	})

	t.Run("the token endpoints refuse the cookie cross-origin and need a sign-in", func(t *testing.T) {
		t.Parallel()
		e, sess := newSignedIn(t, "editor", "ada@example.com")
		e.wantError(e.do("POST", "/api/auth/tokens", cookie(cookieName, sess), header("Sec-Fetch-Site", "cross-site"),
			jsonBody(map[string]string{"name": "x", "scope": "read"})), http.StatusForbidden, quire.ECROSSORIGIN)
		e.wantError(e.do("POST", "/api/auth/tokens", jsonBody(map[string]string{"name": "x", "scope": "read"})),
			http.StatusUnauthorized, quire.EUNAUTHORIZED)
		e.wantError(e.do("GET", "/api/auth/tokens"), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		e.wantError(e.do("DELETE", "/api/auth/tokens/x"), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		e.wantError(e.do("POST", "/api/auth/tokens", bearer(sess), rawBody("")), http.StatusBadRequest, quire.EINVALIDJSON)
		if got := e.apiTokens(sess); len(got) != 0 {
			t.Errorf("%d tokens after refused creations", len(got))
		}
	})
}
