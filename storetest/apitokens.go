package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() {
	register("api tokens", testAPITokens)
	register("session lists", testSessionLists)
}

// newAPIToken creates a token of userID for secret, created at created and
// valid for 90 days.
func newAPIToken(t *testing.T, s quire.Store, userID, name string, scope quire.TokenScope, secret string, created time.Time) *quire.APIToken {
	t.Helper()
	tok := &quire.APIToken{UserID: userID, Name: name, Scope: scope, TokenHash: tokenHash(secret),
		CreatedAt: created, ExpiresAt: created.Add(90 * 24 * time.Hour), IP: "192.0.2.7", UserAgent: "curl/8.5"}
	if err := s.CreateAPIToken(t.Context(), tok); err != nil {
		t.Fatalf("create api token: %v", err)
	}
	if tok.ID == "" {
		t.Fatal("CreateAPIToken left ID empty")
	}
	return tok
}

// apiTokenBySecret reads the API token of secret, failing the test when it
// cannot.
func apiTokenBySecret(t *testing.T, s quire.Store, secret string) *quire.APIToken {
	t.Helper()
	tok, _, err := s.APITokenByHash(t.Context(), tokenHash(secret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tokenIDs lists the ids of tokens in order.
func tokenIDs(ts []quire.APIToken) []string {
	return pluck(ts, func(t quire.APIToken) string { return t.ID })
}

func listAPITokens(t *testing.T, s quire.Store, userID string, now time.Time) []quire.APIToken {
	t.Helper()
	ts := must(s.APITokens(t.Context(), userID, now))(t)
	return ts
}

func testAPITokens(t *testing.T, open Opener) {
	t.Run("a created token is found by its hash with its user as it is now", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		created := baseTime.Add(123456 * time.Microsecond)
		tok := newAPIToken(t, s, u.ID, "CI export", quire.ScopeWrite, "quire_pat_one", created)
		if err := s.SetUserRole(ctx, u.ID, "viewer"); err != nil {
			t.Fatal(err)
		}
		got, user, err := s.APITokenByHash(ctx, tokenHash("quire_pat_one"))
		if err != nil {
			t.Fatal(err)
		}
		want := quire.APIToken{ID: tok.ID, UserID: u.ID, Name: "CI export", Scope: quire.ScopeWrite,
			TokenHash: tokenHash("quire_pat_one"), CreatedAt: created, ExpiresAt: created.Add(90 * 24 * time.Hour)}
		if diff := cmp.Diff(want, *got); diff != "" {
			t.Errorf("token (-want +got):\n%s", diff)
		}
		if user.ID != u.ID || user.Role.Key != "viewer" || user.Status != quire.UserActive {
			t.Errorf("token's user = %s role %s status %s, want %s viewer active", user.ID, user.Role.Key, user.Status, u.ID)
		}
	})

	t.Run("an unknown hash is not found", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		newAPIToken(t, s, u.ID, "one", quire.ScopeRead, "quire_pat_one", baseTime)
		_, _, err := s.APITokenByHash(t.Context(), tokenHash("quire_pat_two"))
		wantCode(t, err, quire.ENOTFOUND)
		// A session's hash is no token's.
		newSession(t, s, u.ID, "quire_pat_session")
		_, _, err = s.APITokenByHash(t.Context(), tokenHash("quire_pat_session"))
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("the list holds the user's own valid tokens, newest first, without hashes", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		old := newAPIToken(t, s, ada.ID, "old", quire.ScopeRead, "s1", baseTime)
		newer := newAPIToken(t, s, ada.ID, "newer", quire.ScopeWrite, "s2", baseTime.Add(time.Hour))
		revoked := newAPIToken(t, s, ada.ID, "revoked", quire.ScopeRead, "s3", baseTime.Add(2*time.Hour))
		short := &quire.APIToken{UserID: ada.ID, Name: "short", Scope: quire.ScopeRead, TokenHash: tokenHash("s4"),
			CreatedAt: baseTime.Add(3 * time.Hour), ExpiresAt: baseTime.Add(4 * time.Hour)}
		if err := s.CreateAPIToken(ctx, short); err != nil {
			t.Fatal(err)
		}
		newAPIToken(t, s, bob.ID, "bob's", quire.ScopeRead, "s5", baseTime)
		if err := s.RevokeAPIToken(ctx, ada.ID, revoked.ID, baseTime.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		now := baseTime.Add(3*time.Hour + time.Minute)
		got := listAPITokens(t, s, ada.ID, now)
		if diff := cmp.Diff([]string{short.ID, newer.ID, old.ID}, tokenIDs(got)); diff != "" {
			t.Errorf("tokens before the short one expires (-want +got):\n%s", diff)
		}
		want := quire.APIToken{ID: old.ID, UserID: ada.ID, Name: "old", Scope: quire.ScopeRead, CreatedAt: baseTime,
			ExpiresAt: baseTime.Add(90 * 24 * time.Hour), IP: "192.0.2.7", UserAgent: "curl/8.5"}
		if diff := cmp.Diff(want, got[2]); diff != "" {
			t.Errorf("listed token (-want +got):\n%s", diff)
		}
		got = listAPITokens(t, s, ada.ID, baseTime.Add(4*time.Hour))
		if diff := cmp.Diff([]string{newer.ID, old.ID}, tokenIDs(got)); diff != "" {
			t.Errorf("tokens once the short one expired (-want +got):\n%s", diff)
		}
		if got := listAPITokens(t, s, unknownID, now); len(got) != 0 {
			t.Errorf("tokens of an unknown user = %v, want none", got)
		}
	})

	t.Run("touch sets the last-use time and never moves it back", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		tok := newAPIToken(t, s, u.ID, "one", quire.ScopeRead, "s1", baseTime)
		later := wantTouchKeepsLatest(t, s.TouchAPIToken, tok.ID, func() time.Time {
			return apiTokenBySecret(t, s, "s1").LastUsedAt
		})
		if l := listAPITokens(t, s, u.ID, later); len(l) != 1 || !l[0].LastUsedAt.Equal(later) {
			t.Errorf("listed tokens = %+v, want one last used at %v", l, later)
		}
	})

	t.Run("a token is revoked by its user only, once, while valid", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		tok := newAPIToken(t, s, ada.ID, "one", quire.ScopeRead, "s1", baseTime)
		at := baseTime.Add(time.Hour)
		wantCode(t, s.RevokeAPIToken(ctx, bob.ID, tok.ID, at), quire.ENOTFOUND)
		wantCode(t, s.RevokeAPIToken(ctx, ada.ID, unknownID, at), quire.ENOTFOUND)
		if err := s.RevokeAPIToken(ctx, ada.ID, tok.ID, at); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.RevokeAPIToken(ctx, ada.ID, tok.ID, at.Add(time.Minute)), quire.ENOTFOUND)
		got := apiTokenBySecret(t, s, "s1")
		if !got.RevokedAt.Equal(at) {
			t.Errorf("RevokedAt = %v, want %v", got.RevokedAt, at)
		}
		expired := newAPIToken(t, s, ada.ID, "two", quire.ScopeRead, "s2", baseTime)
		wantCode(t, s.RevokeAPIToken(ctx, ada.ID, expired.ID, expired.ExpiresAt), quire.ENOTFOUND)
	})

	t.Run("disabling the user revokes its tokens and no one else's", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		newAPIToken(t, s, ada.ID, "one", quire.ScopeRead, "s1", baseTime)
		newAPIToken(t, s, bob.ID, "bob's", quire.ScopeRead, "s2", baseTime)
		at := baseTime.Add(time.Hour)
		if err := s.DisableUser(ctx, ada.ID, at); err != nil {
			t.Fatal(err)
		}
		got := apiTokenBySecret(t, s, "s1")
		if !got.RevokedAt.Equal(at) {
			t.Errorf("disabled user's token RevokedAt = %v, want %v", got.RevokedAt, at)
		}
		if got := listAPITokens(t, s, bob.ID, at); len(got) != 1 {
			t.Errorf("bob's tokens = %d, want 1", len(got))
		}
	})

	t.Run("a password reset revokes the user's tokens; a change of password keeps them", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		newAPIToken(t, s, u.ID, "one", quire.ScopeRead, "s1", baseTime)
		if err := s.SetPassword(ctx, u.ID, newHash, baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got := listAPITokens(t, s, u.ID, baseTime.Add(time.Minute)); len(got) != 1 {
			t.Fatalf("tokens after a change of password = %d, want 1", len(got))
		}
		newToken(t, s, u.ID, quire.PurposeReset, "reset-secret", nil)
		at := baseTime.Add(2 * time.Minute)
		if _, err := s.RedeemToken(ctx, quire.PurposeReset, tokenHash("reset-secret"), newHash, at); err != nil {
			t.Fatal(err)
		}
		got := apiTokenBySecret(t, s, "s1")
		if !got.RevokedAt.Equal(at) {
			t.Errorf("token RevokedAt after a reset = %v, want %v", got.RevokedAt, at)
		}
	})
}

func testSessionLists(t *testing.T, open Opener) {
	t.Run("the list holds the user's own valid sessions with address and browser, newest first", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		first := &quire.Session{UserID: ada.ID, TokenHash: tokenHash("a1"), CreatedAt: baseTime,
			ExpiresAt: baseTime.Add(168 * time.Hour), LastUsedAt: baseTime.Add(time.Minute),
			IP: "2001:db8::1", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"}
		if err := s.CreateSession(ctx, first); err != nil {
			t.Fatal(err)
		}
		second := &quire.Session{UserID: ada.ID, TokenHash: tokenHash("a2"), CreatedAt: baseTime.Add(time.Hour),
			ExpiresAt: baseTime.Add(2 * time.Hour), LastUsedAt: baseTime.Add(time.Hour), IP: "192.0.2.1"}
		if err := s.CreateSession(ctx, second); err != nil {
			t.Fatal(err)
		}
		revoked := newSession(t, s, ada.ID, "a3")
		if err := s.RevokeSession(ctx, revoked.ID, baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		newSession(t, s, bob.ID, "b1")

		got := must(s.UserSessions(ctx, ada.ID, baseTime.Add(90*time.Minute)))(t)
		want := []quire.Session{
			{ID: second.ID, UserID: ada.ID, CreatedAt: second.CreatedAt, ExpiresAt: second.ExpiresAt,
				LastUsedAt: second.LastUsedAt, IP: "192.0.2.1"},
			{ID: first.ID, UserID: ada.ID, CreatedAt: first.CreatedAt, ExpiresAt: first.ExpiresAt,
				LastUsedAt: first.LastUsedAt, IP: first.IP, UserAgent: first.UserAgent},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sessions (-want +got):\n%s", diff)
		}
		got = must(s.UserSessions(ctx, ada.ID, baseTime.Add(2*time.Hour)))(t)
		if len(got) != 1 || got[0].ID != first.ID {
			t.Errorf("sessions once the second expired = %+v, want the first only", got)
		}
	})

	t.Run("a session is revoked by its user only, once", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		sess := newSession(t, s, ada.ID, "a1")
		at := baseTime.Add(time.Hour)
		wantCode(t, s.RevokeUserSession(ctx, bob.ID, sess.ID, at), quire.ENOTFOUND)
		wantCode(t, s.RevokeUserSession(ctx, ada.ID, unknownID, at), quire.ENOTFOUND)
		if err := s.RevokeUserSession(ctx, ada.ID, sess.ID, at); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.RevokeUserSession(ctx, ada.ID, sess.ID, at), quire.ENOTFOUND)
		got, _, err := s.SessionByTokenHash(ctx, tokenHash("a1"))
		if err != nil {
			t.Fatal(err)
		}
		if !got.RevokedAt.Equal(at) {
			t.Errorf("RevokedAt = %v, want %v", got.RevokedAt, at)
		}
	})
}

func init() { register("api token events", testAPITokenEvents) }

// testAPITokenEvents: the writes of tokens and of the sign-out of sessions
// record the events they are given, naming a created token, and a refused
// revocation records none.
func testAPITokenEvents(t *testing.T, open Opener) {
	s, ada := openWithUser(t, open, "ada@example.com", "editor")
	ctx := t.Context()
	bob := newUser(t, s, "bob@example.com", "editor", "")
	ev := func(action string) *quire.Event { return quire.CLIEvent(action, baseTime) }
	count := func(action string) int {
		t.Helper()
		return len(auditEvents(t, s, quire.AuditFilter{Action: action}))
	}

	tok := &quire.APIToken{UserID: ada.ID, Name: "export", Scope: quire.ScopeRead, TokenHash: tokenHash("s1"),
		CreatedAt: baseTime, ExpiresAt: baseTime.Add(time.Hour)}
	if err := s.Recording(ev("token.created").On(quire.TargetToken, "", "export")).CreateAPIToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got := auditEvents(t, s, quire.AuditFilter{Action: "token.created"})
	if len(got) != 1 || got[0].Target == nil || got[0].Target.ID != tok.ID {
		t.Fatalf("token.created events %+v, want one naming token %s", got, tok.ID)
	}

	wantCode(t, s.Recording(ev("token.revoked")).RevokeAPIToken(ctx, bob.ID, tok.ID, baseTime), quire.ENOTFOUND)
	if n := count("token.revoked"); n != 0 {
		t.Errorf("%d token.revoked events after a refused revocation, want 0", n)
	}
	if err := s.Recording(ev("token.revoked")).RevokeAPIToken(ctx, ada.ID, tok.ID, baseTime); err != nil {
		t.Fatal(err)
	}
	if n := count("token.revoked"); n != 1 {
		t.Errorf("%d token.revoked events, want 1", n)
	}

	sess := newSession(t, s, ada.ID, "a1")
	newSession(t, s, ada.ID, "a2")
	wantCode(t, s.Recording(ev("session.revoked")).RevokeUserSession(ctx, bob.ID, sess.ID, baseTime), quire.ENOTFOUND)
	if n := count("session.revoked"); n != 0 {
		t.Errorf("%d session.revoked events after a refused revocation, want 0", n)
	}
	if err := s.Recording(ev("session.revoked")).RevokeUserSession(ctx, ada.ID, sess.ID, baseTime); err != nil {
		t.Fatal(err)
	}
	if err := s.Recording(ev("session.revoked")).RevokeUserSessions(ctx, ada.ID, "", baseTime); err != nil {
		t.Fatal(err)
	}
	if n := count("session.revoked"); n != 2 {
		t.Errorf("%d session.revoked events, want 2", n)
	}
}
