package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("sessions", testSessions) }

// newSession creates a session of userID for token, started at baseTime
// with a 7-day lifetime.
func newSession(t *testing.T, s quire.Store, userID, token string) *quire.Session {
	t.Helper()
	sess := &quire.Session{UserID: userID, TokenHash: tokenHash(token), CreatedAt: baseTime,
		ExpiresAt: baseTime.Add(168 * time.Hour), LastUsedAt: baseTime}
	if err := s.CreateSession(t.Context(), sess); err != nil {
		t.Fatalf("create session: %v", err)
	}
	return sess
}

func testSessions(t *testing.T, open Opener) {
	t.Run("a created session is found by its token hash with its user", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		dep := must(s.EnsureDepartment(ctx, "Engineering"))(t)
		u := newUser(t, s, "ada@example.com", "editor", dep.ID)
		created := newSession(t, s, u.ID, "token-1")
		if created.ID == "" {
			t.Fatal("CreateSession left ID empty")
		}
		sess, user, err := s.SessionByTokenHash(ctx, tokenHash("token-1"))
		if err != nil {
			t.Fatal(err)
		}
		want := quire.Session{ID: created.ID, UserID: u.ID, TokenHash: tokenHash("token-1"), CreatedAt: baseTime,
			ExpiresAt: baseTime.Add(168 * time.Hour), LastUsedAt: baseTime}
		if diff := cmp.Diff(want, *sess); diff != "" {
			t.Errorf("session (-want +got):\n%s", diff)
		}
		wantUser := must(s.UserByID(ctx, u.ID))(t)
		if diff := cmp.Diff(*wantUser, *user); diff != "" {
			t.Errorf("session's user (-want +got):\n%s", diff)
		}
		if user.DepartmentName != "Engineering" || user.Role.Label != "Editor" {
			t.Errorf("session's user has department %q and role label %q", user.DepartmentName, user.Role.Label)
		}
	})

	t.Run("an unknown token hash is not found", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		newSession(t, s, u.ID, "token-1")
		_, _, err := s.SessionByTokenHash(t.Context(), tokenHash("token-2"))
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("the session's user carries the role and department of this moment", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		newSession(t, s, u.ID, "token-1")
		dep := must(s.EnsureDepartment(ctx, "Sales"))(t)
		if err := s.SetUserRole(ctx, u.ID, "guest"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetUserDepartment(ctx, u.ID, dep.ID); err != nil {
			t.Fatal(err)
		}
		_, user, err := s.SessionByTokenHash(ctx, tokenHash("token-1"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(quire.Role{Key: "guest", Label: "Guest", Docs: quire.LevelNone}, user.Role); diff != "" {
			t.Errorf("role (-want +got):\n%s", diff)
		}
		if user.DepartmentID != dep.ID || user.DepartmentName != "Sales" {
			t.Errorf("department = %q %q, want %q Sales", user.DepartmentID, user.DepartmentName, dep.ID)
		}
	})

	t.Run("touch sets the last-use time and never moves it back", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		sess := newSession(t, s, u.ID, "token-1")
		wantTouchKeepsLatest(t, s.TouchSession, sess.ID, func() time.Time {
			got, _, err := s.SessionByTokenHash(ctx, tokenHash("token-1"))
			if err != nil {
				t.Fatal(err)
			}
			return got.LastUsedAt
		})
	})

	t.Run("revoke revokes one session and keeps the first revocation time", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		one := newSession(t, s, u.ID, "token-1")
		newSession(t, s, u.ID, "token-2")
		at := baseTime.Add(time.Hour)
		if err := s.RevokeSession(ctx, one.ID, at); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeSession(ctx, one.ID, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		wantRevoked(t, s, map[string]time.Time{"token-1": at, "token-2": {}})
		wantCode(t, s.RevokeSession(ctx, unknownID, at), quire.ENOTFOUND)
	})

	t.Run("revoke user sessions spares the one excepted and other users", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		keep := newSession(t, s, ada.ID, "ada-1")
		newSession(t, s, ada.ID, "ada-2")
		newSession(t, s, ada.ID, "ada-3")
		newSession(t, s, bob.ID, "bob-1")
		at := baseTime.Add(time.Hour)
		if err := s.RevokeUserSessions(ctx, ada.ID, keep.ID, at); err != nil {
			t.Fatal(err)
		}
		wantRevoked(t, s, map[string]time.Time{"ada-1": {}, "ada-2": at, "ada-3": at, "bob-1": {}})

		later := at.Add(time.Hour)
		if err := s.RevokeUserSessions(ctx, ada.ID, "", later); err != nil {
			t.Fatal(err)
		}
		wantRevoked(t, s, map[string]time.Time{"ada-1": later, "ada-2": at, "ada-3": at, "bob-1": {}})
	})
}

// wantRevoked checks the revocation time of the session of each token
// (zero: still valid).
func wantRevoked(t *testing.T, s quire.Store, want map[string]time.Time) {
	t.Helper()
	got := map[string]time.Time{}
	for token := range want {
		sess, _, err := s.SessionByTokenHash(t.Context(), tokenHash(token))
		if err != nil {
			t.Fatalf("session %s: %v", token, err)
		}
		got[token] = sess.RevokedAt
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revocation times by token (-want +got):\n%s", diff)
	}
}
