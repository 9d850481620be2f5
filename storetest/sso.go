package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() {
	register("sso identities", testSSOIdentities)
	register("sso flows", testSSOFlows)
}

const issuer = "https://id.example.com"

func testSSOIdentities(t *testing.T, open Opener) {
	t.Run("a linked identity finds its user as it is now", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		id := &quire.Identity{Issuer: issuer, Subject: "sub-1", UserID: u.ID, Email: "ada@example.com", CreatedAt: baseTime}
		if err := s.LinkIdentity(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := s.SetUserRole(ctx, u.ID, "viewer"); err != nil {
			t.Fatal(err)
		}
		got := must(s.IdentityUser(ctx, issuer, "sub-1"))(t)
		if got.ID != u.ID || got.Role.Key != "viewer" || got.Email != "ada@example.com" {
			t.Errorf("IdentityUser = %+v, want %s as viewer", got, u.ID)
		}
	})
	t.Run("the same subject at another issuer, or another subject, is someone else", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		if err := s.LinkIdentity(ctx, &quire.Identity{Issuer: issuer, Subject: "sub-1", UserID: u.ID, CreatedAt: baseTime}); err != nil {
			t.Fatal(err)
		}
		_, err := s.IdentityUser(ctx, "https://other.example.com", "sub-1")
		wantCode(t, err, quire.ENOTFOUND)
		_, err = s.IdentityUser(ctx, issuer, "sub-2")
		wantCode(t, err, quire.ENOTFOUND)
	})
	t.Run("an identity is linked to one user only", func(t *testing.T) {
		s, a := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		b := newUser(t, s, "bob@example.com", "editor", "")
		if err := s.LinkIdentity(ctx, &quire.Identity{Issuer: issuer, Subject: "sub-1", UserID: a.ID, CreatedAt: baseTime}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.LinkIdentity(ctx, &quire.Identity{Issuer: issuer, Subject: "sub-1", UserID: b.ID, CreatedAt: baseTime}), quire.ECONFLICT)
		got, err := s.IdentityUser(ctx, issuer, "sub-1")
		if err != nil || got.ID != a.ID {
			t.Errorf("IdentityUser = %v, %v; want %s", got, err, a.ID)
		}
	})
	t.Run("linking to an unknown user is not found", func(t *testing.T) {
		s := open(t)
		wantCode(t, s.LinkIdentity(t.Context(), &quire.Identity{Issuer: issuer, Subject: "sub-1", UserID: unknownID, CreatedAt: baseTime}), quire.ENOTFOUND)
	})
	t.Run("a user created with an identity is found by it, and the event is recorded", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		u := &quire.User{Email: "cy@example.com", Name: "Cy", Role: quire.Role{Key: "viewer"}, Status: quire.UserActive}
		id := &quire.Identity{Issuer: issuer, Subject: "sub-3", Email: "cy@example.com", CreatedAt: baseTime}
		ev := quire.NewEvent(quire.ActionUserCreated, baseTime, nil, quire.RequestInfo{}).On(quire.TargetUser, "", "Cy").With("via", "sso")
		if err := s.Recording(ev).CreateUserWithIdentity(ctx, u, id); err != nil {
			t.Fatal(err)
		}
		if u.ID == "" || id.UserID != u.ID || u.Status != quire.UserActive {
			t.Fatalf("user %+v, identity %+v", u, id)
		}
		got := must(s.IdentityUser(ctx, issuer, "sub-3"))(t)
		if diff := cmp.Diff([]string{u.ID, "viewer", "", string(quire.UserActive)},
			[]string{got.ID, got.Role.Key, got.PasswordHash, string(got.Status)}); diff != "" {
			t.Errorf("user (-want +got):\n%s", diff)
		}
		evs := must(s.AuditEvents(ctx, quire.AuditFilter{Action: quire.ActionUserCreated, Limit: 10}))(t)
		if len(evs) != 1 || evs[0].Details["via"] != "sso" || evs[0].Target == nil || evs[0].Target.ID != u.ID {
			t.Errorf("events = %+v, want one user.created via sso", evs)
		}
	})
	t.Run("a taken email or a linked identity creates nothing", func(t *testing.T) {
		s, a := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		if err := s.LinkIdentity(ctx, &quire.Identity{Issuer: issuer, Subject: "sub-1", UserID: a.ID, CreatedAt: baseTime}); err != nil {
			t.Fatal(err)
		}
		err := s.CreateUserWithIdentity(ctx, &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "viewer"}, Status: quire.UserActive},
			&quire.Identity{Issuer: issuer, Subject: "sub-9", CreatedAt: baseTime})
		wantCode(t, err, quire.ECONFLICT)
		if e, ok := err.(*quire.Error); !ok || e.Fields["email"] == "" {
			t.Errorf("error %v does not name the email", err)
		}
		_, err = s.IdentityUser(ctx, issuer, "sub-9")
		wantCode(t, err, quire.ENOTFOUND)

		err = s.CreateUserWithIdentity(ctx, &quire.User{Email: "new@example.com", Name: "New", Role: quire.Role{Key: "viewer"}, Status: quire.UserActive},
			&quire.Identity{Issuer: issuer, Subject: "sub-1", CreatedAt: baseTime})
		wantCode(t, err, quire.ECONFLICT)
		_, err = s.UserByEmail(ctx, "new@example.com")
		wantCode(t, err, quire.ENOTFOUND)
	})
}

func testSSOFlows(t *testing.T, open Opener) {
	newFlow := func(state string, at time.Time) *quire.SSOFlow {
		return &quire.SSOFlow{StateHash: tokenHash(state), Nonce: "nonce-" + state, Verifier: "verifier-" + state,
			Next: "/documents?q=x", CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
	}
	// storeFlow stores a new flow of state, created at at, and returns it,
	// failing the test when it cannot.
	storeFlow := func(t *testing.T, s quire.Store, state string, at time.Time) *quire.SSOFlow {
		t.Helper()
		f := newFlow(state, at)
		if err := s.CreateSSOFlow(t.Context(), f, 0); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Run("a flow is taken once, as it was stored", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		f := storeFlow(t, s, "one", baseTime)
		got := must(s.TakeSSOFlow(ctx, tokenHash("one"), baseTime.Add(time.Minute)))(t)
		if diff := cmp.Diff(f, got); diff != "" {
			t.Errorf("flow (-want +got):\n%s", diff)
		}
		_, err := s.TakeSSOFlow(ctx, tokenHash("one"), baseTime.Add(time.Minute))
		wantCode(t, err, quire.ENOTFOUND)
	})
	t.Run("an unknown or expired flow is not found", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		storeFlow(t, s, "one", baseTime)
		_, err := s.TakeSSOFlow(ctx, tokenHash("two"), baseTime)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = s.TakeSSOFlow(ctx, tokenHash("one"), baseTime.Add(10*time.Minute))
		wantCode(t, err, quire.ENOTFOUND)
	})
	t.Run("of parallel takes one gets the flow", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		storeFlow(t, s, "race", baseTime)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins int
		)
		for range 8 {
			wg.Go(func() {
				_, err := s.TakeSSOFlow(ctx, tokenHash("race"), baseTime)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case quire.ErrorCode(err) == quire.ENOTFOUND:
				default:
					t.Errorf("take: %v", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Errorf("%d takes got the flow, want 1", wins)
		}
	})
	t.Run("a new flow prunes expired ones and keeps live ones", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		storeFlow(t, s, "old", baseTime)
		storeFlow(t, s, "live", baseTime.Add(5*time.Minute))
		storeFlow(t, s, "new", baseTime.Add(11*time.Minute))
		// The old flow is gone even for a clock that would still accept it.
		_, err := s.TakeSSOFlow(ctx, tokenHash("old"), baseTime)
		wantCode(t, err, quire.ENOTFOUND)
		if _, err := s.TakeSSOFlow(ctx, tokenHash("live"), baseTime.Add(11*time.Minute)); err != nil {
			t.Errorf("live flow: %v", err)
		}
	})
	t.Run("a state hash is used once", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		storeFlow(t, s, "one", baseTime)
		wantCode(t, s.CreateSSOFlow(ctx, newFlow("one", baseTime), 0), quire.ECONFLICT)
	})
}
