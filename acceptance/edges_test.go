package acceptance

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

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
	t.Parallel()
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

// tokenRequests sees the requests quire makes to the provider's token
// endpoint: whether each authenticated with HTTP Basic and whether its form
// carried the client secret.
type tokenRequests struct {
	mu     sync.Mutex
	basic  []bool
	inBody []bool
}

func (tr *tokenRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		if form.Get("grant_type") == "authorization_code" {
			_, _, basic := r.BasicAuth()
			tr.mu.Lock()
			tr.basic = append(tr.basic, basic)
			tr.inBody = append(tr.inBody, form.Has("client_secret"))
			tr.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestSSOCodeExchangeLogsTheProvidersReason: a code the provider refuses
// (invalid_grant) is one request, authenticated as discovery says
// (client_secret_basic first), and its reason is logged. x/oauth2's
// automatic style tried again with the secret in the form and returned
// only the second error.
func TestSSOCodeExchangeLogsTheProvidersReason(t *testing.T) {
	t.Parallel()
	tr := &tokenRequests{}
	s := newSSOEnv(t, func(c *sso.Config) { c.HTTPClient = &http.Client{Transport: tr, Timeout: 30 * time.Second} })
	s.user("ada@example.com", "editor", "")
	b := s.browser()
	back := s.authorize(b, idpAda.Username, idpAda.Password)
	u, err := url.Parse(back)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("code", "not-"+q.Get("code"))
	wantRefused(t, b, b.get(u.Path+"?"+q.Encode()), "could not confirm who you are")
	tr.mu.Lock()
	if len(tr.basic) != 1 || !tr.basic[0] || tr.inBody[0] {
		t.Errorf("token requests: HTTP Basic %v, secret in the form %v; want one, with HTTP Basic and no secret in the form", tr.basic, tr.inBody)
	}
	tr.mu.Unlock()
	logs := s.logs.String()
	if !strings.Contains(logs, "error=invalid_grant") {
		t.Errorf("the log does not give the provider's reason (invalid_grant):\n%s", logs)
	}
	if strings.Contains(logs, s.idp.ClientSecret) {
		t.Errorf("the log holds the client secret:\n%s", logs)
	}

	// A good code still signs in, in one request.
	tr.mu.Lock()
	tr.basic, tr.inBody = nil, nil
	tr.mu.Unlock()
	if p := s.signIn(s.browser(), idpAda); p.Status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %q", p.Status, p.text("sso-refused"))
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.basic) != 1 || !tr.basic[0] || tr.inBody[0] {
		t.Errorf("token requests of a good code: HTTP Basic %v, secret in the form %v", tr.basic, tr.inBody)
	}
}

// TestAdminUsersShowTheSecondFactor: the Administration's list of users
// says, per user, whether it has a second factor, as the API's mfa does,
// and no longer that second factors are not available.
func TestAdminUsersShowTheSecondFactor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user("root@example.com", "admin", "")
	_, u := e.signedInUser("ada@example.com", "editor", "")
	e.user("bob@example.com", "editor", "")
	u.setUpTOTP()

	a := e.signedIn("root@example.com")
	p := a.get("/admin/users")
	got := map[string]string{}
	for _, tr := range findAll(p.byID("users"), func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-email") != "" }) {
		got[attr(tr, "data-email")] = textOfClass(&page{Doc: tr}, "user-mfa")
	}
	want := map[string]string{"root@example.com": "no", "ada@example.com": "yes", "bob@example.com": "no"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second factor column (-want +got):\n%s", diff)
	}
	if strings.Contains(textOf(p.Doc), "not available yet") {
		t.Error("the page still says second factors are not available")
	}
}

// TestSSOStartsAreThrottledAndFlowsBounded: anonymous /auth/oidc/start
// wrote one row per request without a cap (12,389 in 10 s). One address
// may begin StartsPerAddr sign-ins a minute (then 429 with Retry-After),
// and the database keeps at most MaxFlows pending ones, the oldest dropped
// for a new one.
func TestSSOStartsAreThrottledAndFlowsBounded(t *testing.T) {
	// A clock that stays inside one minute, so that the window cannot turn
	// during the test; near enough the wall clock for the provider's tokens.
	// Each reading is a millisecond later, so that the flows' ages differ.
	at := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
	var ticks atomic.Int64
	s := newSSOEnv(t, func(c *sso.Config) {
		c.StartsPerAddr, c.MaxFlows = 5, 3
		c.Now = func() time.Time { return at.Add(time.Duration(ticks.Add(1)) * time.Millisecond) }
	})
	s.user("ada@example.com", "editor", "")
	first := s.browser()
	back := s.authorize(first, idpAda.Username, idpAda.Password) // start 1
	for i := range 3 {                                           // starts 2 to 4: the first flow makes room
		if p := s.browser().get(sso.StartPath); p.Status != http.StatusSeeOther {
			t.Fatalf("start %d: %d", i+2, p.Status)
		}
	}
	wantRefused(t, first, first.get(back), "has expired or was used already")
	if p := s.browser().get(sso.StartPath); p.Status != http.StatusSeeOther { // start 5
		t.Fatalf("start 5: %d", p.Status)
	}
	p := s.browser().get(sso.StartPath)
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Fatalf("start 6 from the same address: %d, Retry-After %q; want 429 with Retry-After", p.Status, p.Header.Get("Retry-After"))
	}
}
