package storetest

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"quire"
)

func init() { register("users", testUsers) }

var defaultRoles = []quire.Role{
	{Key: "admin", Label: "Administrator", Docs: quire.LevelWrite, Admin: true},
	{Key: "editor", Label: "Editor", Docs: quire.LevelWrite},
	{Key: "guest", Label: "Guest", Docs: quire.LevelNone},
	{Key: "viewer", Label: "Viewer", Docs: quire.LevelView},
}

func testUsers(t *testing.T, open Opener) {
	t.Run("a created user reads back by id and by email with role and department", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		dep := must(s.EnsureDepartment(ctx, "Engineering"))(t)
		u := &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "editor"},
			DepartmentID: dep.ID, Timezone: "Europe/Berlin", Status: quire.UserActive, PasswordHash: "h1"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if u.ID == "" || u.CreatedAt.IsZero() || !u.UpdatedAt.Equal(u.CreatedAt) {
			t.Fatalf("CreateUser filled ID %q, CreatedAt %v, UpdatedAt %v", u.ID, u.CreatedAt, u.UpdatedAt)
		}
		want := quire.User{ID: u.ID, Email: "ada@example.com", Name: "Ada",
			Role:         quire.Role{Key: "editor", Label: "Editor", Docs: quire.LevelWrite},
			DepartmentID: dep.ID, DepartmentName: "Engineering", Timezone: "Europe/Berlin",
			Status: quire.UserActive, PasswordHash: "h1",
			// Times are kept at microsecond precision.
			CreatedAt: u.CreatedAt.Truncate(time.Microsecond), UpdatedAt: u.UpdatedAt.Truncate(time.Microsecond)}
		byID := must(s.UserByID(ctx, u.ID))(t)
		if diff := cmp.Diff(want, *byID); diff != "" {
			t.Errorf("UserByID (-want +got):\n%s", diff)
		}
		byEmail := must(s.UserByEmail(ctx, "ada@example.com"))(t)
		if diff := cmp.Diff(want, *byEmail); diff != "" {
			t.Errorf("UserByEmail (-want +got):\n%s", diff)
		}
	})

	t.Run("a user without department has empty department fields", func(t *testing.T) {
		s, u := openWithUser(t, open, "bob@example.com", "viewer")
		got := must(s.UserByID(t.Context(), u.ID))(t)
		if got.DepartmentID != "" || got.DepartmentName != "" {
			t.Errorf("department = %q %q, want none", got.DepartmentID, got.DepartmentName)
		}
		if diff := cmp.Diff(quire.Role{Key: "viewer", Label: "Viewer", Docs: quire.LevelView}, got.Role); diff != "" {
			t.Errorf("role (-want +got):\n%s", diff)
		}
	})

	t.Run("a taken email is a conflict", func(t *testing.T) {
		s := open(t)
		newUser(t, s, "ada@example.com", "editor", "")
		err := s.CreateUser(t.Context(), &quire.User{Email: "ada@example.com", Name: "Other",
			Role: quire.Role{Key: "viewer"}, Status: quire.UserInvited})
		wantCode(t, err, quire.ECONFLICT)
		if n, err := s.CountUsers(t.Context()); err != nil || n != 1 {
			t.Errorf("CountUsers = %d, %v; want 1", n, err)
		}
	})

	t.Run("an unknown role or department is a validation error", func(t *testing.T) {
		s := open(t)
		err := s.CreateUser(t.Context(), &quire.User{Email: "a@example.com", Name: "A",
			Role: quire.Role{Key: "nobody"}, Status: quire.UserInvited})
		wantCode(t, err, quire.EVALIDATION)
		err = s.CreateUser(t.Context(), &quire.User{Email: "a@example.com", Name: "A",
			Role: quire.Role{Key: "viewer"}, DepartmentID: unknownID, Status: quire.UserInvited})
		wantCode(t, err, quire.EVALIDATION)
		if n, err := s.CountUsers(t.Context()); err != nil || n != 0 {
			t.Errorf("CountUsers = %d, %v; want 0", n, err)
		}
	})

	t.Run("an unknown id or email is not found", func(t *testing.T) {
		s := open(t)
		newUser(t, s, "ada@example.com", "editor", "")
		_, err := s.UserByID(t.Context(), unknownID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = s.UserByEmail(t.Context(), "ADA@example.com")
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("users are listed by email and counted", func(t *testing.T) {
		s := open(t)
		for _, email := range []string{"carol@example.com", "ada@example.com", "bob@example.com"} {
			newUser(t, s, email, "viewer", "")
		}
		users := must(s.ListUsers(t.Context()))(t)
		var emails []string
		for _, u := range users {
			emails = append(emails, u.Email)
		}
		if diff := cmp.Diff([]string{"ada@example.com", "bob@example.com", "carol@example.com"}, emails); diff != "" {
			t.Errorf("ListUsers emails (-want +got):\n%s", diff)
		}
		if users[0].Role.Label != "Viewer" {
			t.Errorf("listed role label = %q, want Viewer", users[0].Role.Label)
		}
		if n, err := s.CountUsers(t.Context()); err != nil || n != 3 {
			t.Errorf("CountUsers = %d, %v; want 3", n, err)
		}
	})

	t.Run("an empty store has no users", func(t *testing.T) {
		s := open(t)
		users, err := s.ListUsers(t.Context())
		if err != nil || len(users) != 0 {
			t.Errorf("ListUsers = %v, %v; want none", users, err)
		}
		if n, err := s.CountUsers(t.Context()); err != nil || n != 0 {
			t.Errorf("CountUsers = %d, %v; want 0", n, err)
		}
	})

	t.Run("set role changes the role read next", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "viewer")
		if err := s.SetUserRole(t.Context(), u.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		got := must(s.UserByID(t.Context(), u.ID))(t)
		if diff := cmp.Diff(defaultRoles[0], got.Role); diff != "" {
			t.Errorf("role (-want +got):\n%s", diff)
		}
		wantCode(t, s.SetUserRole(t.Context(), u.ID, "nobody"), quire.EVALIDATION)
		wantCode(t, s.SetUserRole(t.Context(), unknownID, "viewer"), quire.ENOTFOUND)
	})

	t.Run("set department moves the user and empty clears it", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "viewer")
		ctx := t.Context()
		dep := must(s.EnsureDepartment(ctx, "Sales"))(t)
		if err := s.SetUserDepartment(ctx, u.ID, dep.ID); err != nil {
			t.Fatal(err)
		}
		got := must(s.UserByID(ctx, u.ID))(t)
		if got.DepartmentID != dep.ID || got.DepartmentName != "Sales" {
			t.Errorf("department = %q %q, want %q Sales", got.DepartmentID, got.DepartmentName, dep.ID)
		}
		if err := s.SetUserDepartment(ctx, u.ID, ""); err != nil {
			t.Fatal(err)
		}
		got = must(s.UserByID(ctx, u.ID))(t)
		if got.DepartmentID != "" || got.DepartmentName != "" {
			t.Errorf("department = %q %q, want none", got.DepartmentID, got.DepartmentName)
		}
		wantCode(t, s.SetUserDepartment(ctx, u.ID, unknownID), quire.EVALIDATION)
		wantCode(t, s.SetUserDepartment(ctx, unknownID, dep.ID), quire.ENOTFOUND)
	})

	t.Run("set timezone is stored", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "viewer")
		if err := s.SetUserTimezone(t.Context(), u.ID, "America/New_York"); err != nil {
			t.Fatal(err)
		}
		got := must(s.UserByID(t.Context(), u.ID))(t)
		if got.Timezone != "America/New_York" {
			t.Errorf("timezone = %q, want America/New_York", got.Timezone)
		}
		wantCode(t, s.SetUserTimezone(t.Context(), unknownID, "UTC"), quire.ENOTFOUND)
	})

	t.Run("disable marks the user disabled and revokes all its sessions", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		other := newUser(t, s, "bob@example.com", "editor", "")
		newSession(t, s, u.ID, "ada-1")
		newSession(t, s, u.ID, "ada-2")
		newSession(t, s, other.ID, "bob-1")
		at := baseTime.Add(time.Hour)
		if err := s.DisableUser(ctx, u.ID, at); err != nil {
			t.Fatal(err)
		}
		got := must(s.UserByID(ctx, u.ID))(t)
		if got.Status != quire.UserDisabled {
			t.Errorf("status = %q, want disabled", got.Status)
		}
		for _, c := range []struct {
			token string
			want  time.Time
		}{{"ada-1", at}, {"ada-2", at}, {"bob-1", time.Time{}}} {
			sess, _, err := s.SessionByTokenHash(ctx, tokenHash(c.token))
			if err != nil {
				t.Fatal(err)
			}
			if !sess.RevokedAt.Equal(c.want) {
				t.Errorf("session %s RevokedAt = %v, want %v", c.token, sess.RevokedAt, c.want)
			}
		}
		wantCode(t, s.DisableUser(ctx, unknownID, at), quire.ENOTFOUND)
	})

	t.Run("set password activates an invited user", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		u := newInvitedUser(t, s, "new@example.com")
		if err := s.SetPassword(ctx, u.ID, "hash-2", baseTime); err != nil {
			t.Fatal(err)
		}
		got := must(s.UserByID(ctx, u.ID))(t)
		if got.Status != quire.UserActive || got.PasswordHash != "hash-2" {
			t.Errorf("status %q hash %q, want active hash-2", got.Status, got.PasswordHash)
		}
		wantCode(t, s.SetPassword(ctx, unknownID, "h", baseTime), quire.ENOTFOUND)
	})

	t.Run("a password hash is replaced only while it is the one read", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "viewer")
		ctx := t.Context()
		before := must(s.UserByID(ctx, u.ID))(t)
		newToken(t, s, u.ID, quire.PurposeReset, "secret-1", nil)
		if err := s.ReplacePasswordHash(ctx, u.ID, before.PasswordHash, "hash-2"); err != nil {
			t.Fatal(err)
		}
		if err := s.ReplacePasswordHash(ctx, u.ID, before.PasswordHash, "hash-3"); err != nil {
			t.Fatal(err)
		}
		got := must(s.UserByID(ctx, u.ID))(t)
		if got.PasswordHash != "hash-2" || got.Status != before.Status || !got.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("hash %q status %q updated %v, want hash-2 and the rest as before (%q, %v)",
				got.PasswordHash, got.Status, got.UpdatedAt, before.Status, before.UpdatedAt)
		}
		// The same password hashed again is no change of password: the
		// user's links stay usable.
		tok := must(s.TokenByHash(ctx, quire.PurposeReset, tokenHash("secret-1")))(t)
		if !tok.UsedAt.IsZero() {
			t.Errorf("the reset token was used at %v", tok.UsedAt)
		}
		if err := s.ReplacePasswordHash(ctx, unknownID, "hash-2", "hash-4"); err != nil {
			t.Errorf("unknown user: %v, want nothing done", err)
		}
	})

	// A password change that raced with DisableUser (its session checked
	// just before) must not re-enable the account.
	t.Run("set password leaves a disabled user disabled", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "viewer")
		ctx := t.Context()
		if err := s.DisableUser(ctx, u.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPassword(ctx, u.ID, "hash-2", baseTime); err != nil {
			t.Fatal(err)
		}
		got := must(s.UserByID(ctx, u.ID))(t)
		if got.Status != quire.UserDisabled || got.PasswordHash != "hash-2" {
			t.Errorf("status %q hash %q, want disabled hash-2", got.Status, got.PasswordHash)
		}
	})

	t.Run("the default roles are listed by key", func(t *testing.T) {
		s := open(t)
		roles := must(s.Roles(t.Context()))(t)
		if diff := cmp.Diff(defaultRoles, roles); diff != "" {
			t.Errorf("Roles (-want +got):\n%s", diff)
		}
		r := must(s.Role(t.Context(), "viewer"))(t)
		if diff := cmp.Diff(defaultRoles[3], *r); diff != "" {
			t.Errorf("Role(viewer) (-want +got):\n%s", diff)
		}
		_, err := s.Role(t.Context(), "nobody")
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("put role creates a role and replaces it", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		auditor := quire.Role{Key: "auditor", Label: "Auditor", Docs: quire.LevelView}
		if err := s.PutRole(ctx, auditor); err != nil {
			t.Fatal(err)
		}
		u := newUser(t, s, "ada@example.com", "auditor", "")
		auditor = quire.Role{Key: "auditor", Label: "Chief auditor", Docs: quire.LevelWrite, Admin: true}
		if err := s.PutRole(ctx, auditor); err != nil {
			t.Fatal(err)
		}
		roles := must(s.Roles(ctx))(t)
		want := append([]quire.Role{defaultRoles[0], auditor}, defaultRoles[1:]...)
		if diff := cmp.Diff(want, roles); diff != "" {
			t.Errorf("Roles (-want +got):\n%s", diff)
		}
		got := must(s.UserByID(ctx, u.ID))(t)
		if diff := cmp.Diff(auditor, got.Role); diff != "" {
			t.Errorf("user's role after replacement (-want +got):\n%s", diff)
		}
		wantCode(t, s.PutRole(ctx, quire.Role{Key: "", Label: "Nameless"}), quire.EVALIDATION)
	})

	t.Run("ensure department is idempotent and departments are listed by name", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		sales := must(s.EnsureDepartment(ctx, "Sales"))(t)
		eng := must(s.EnsureDepartment(ctx, "Engineering"))(t)
		again := must(s.EnsureDepartment(ctx, "Sales"))(t)
		if diff := cmp.Diff(sales, again); diff != "" {
			t.Errorf("second EnsureDepartment (-first +second):\n%s", diff)
		}
		if sales.ID == "" || sales.ID == eng.ID {
			t.Errorf("department IDs %q and %q, want distinct and set", sales.ID, eng.ID)
		}
		deps := must(s.Departments(ctx))(t)
		if diff := cmp.Diff([]quire.Department{*eng, *sales}, deps); diff != "" {
			t.Errorf("Departments (-want +got):\n%s", diff)
		}
	})

	t.Run("projects are created once and hold members", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		p := must(s.CreateProject(ctx, "Apollo"))(t)
		if p.ID == "" || p.Name != "Apollo" {
			t.Fatalf("CreateProject = %+v", p)
		}
		_, err := s.CreateProject(ctx, "Apollo")
		wantCode(t, err, quire.ECONFLICT)

		ada := newUser(t, s, "ada@example.com", "editor", "")
		bob := newUser(t, s, "bob@example.com", "editor", "")
		carol := newUser(t, s, "carol@example.com", "editor", "")
		for _, id := range []string{bob.ID, ada.ID, ada.ID} { // adding twice is no error
			if err := s.AddProjectMember(ctx, p.ID, id); err != nil {
				t.Fatal(err)
			}
		}
		got := must(s.ProjectByName(ctx, "Apollo"))(t)
		want := quire.Project{ID: p.ID, Name: "Apollo", MemberIDs: []string{ada.ID, bob.ID}}
		if diff := cmp.Diff(want, *got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("ProjectByName (-want +got):\n%s", diff)
		}
		for _, c := range []struct {
			user *quire.User
			want bool
		}{{ada, true}, {bob, true}, {carol, false}} {
			member := must(s.IsProjectMember(ctx, p.ID, c.user.ID))(t)
			if member != c.want {
				t.Errorf("IsProjectMember(%s) = %v, want %v", c.user.Email, member, c.want)
			}
		}
	})

	t.Run("projects are listed all or by member", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		zephyr := must(s.CreateProject(ctx, "Zephyr"))(t)
		apollo := must(s.CreateProject(ctx, "Apollo"))(t)
		if err := s.AddProjectMember(ctx, zephyr.ID, ada.ID); err != nil {
			t.Fatal(err)
		}
		all := must(s.Projects(ctx, ""))(t)
		if diff := cmp.Diff([]quire.Project{{ID: apollo.ID, Name: "Apollo"}, {ID: zephyr.ID, Name: "Zephyr"}}, all, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Projects(all) (-want +got):\n%s", diff)
		}
		mine := must(s.Projects(ctx, ada.ID))(t)
		if diff := cmp.Diff([]quire.Project{{ID: zephyr.ID, Name: "Zephyr"}}, mine, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Projects(ada) (-want +got):\n%s", diff)
		}
		none, err := s.Projects(ctx, bob.ID)
		if err != nil || len(none) != 0 {
			t.Errorf("Projects(bob) = %v, %v", none, err)
		}
	})

	t.Run("a project without members and an unknown project", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		p := must(s.CreateProject(ctx, "Gemini"))(t)
		got := must(s.ProjectByName(ctx, "Gemini"))(t)
		if diff := cmp.Diff(quire.Project{ID: p.ID, Name: "Gemini"}, *got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ProjectByName (-want +got):\n%s", diff)
		}
		_, err := s.ProjectByName(ctx, "Mercury")
		wantCode(t, err, quire.ENOTFOUND)
		u := newUser(t, s, "ada@example.com", "editor", "")
		_, err = s.IsProjectMember(ctx, unknownID, u.ID)
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, s.AddProjectMember(ctx, unknownID, u.ID), quire.ENOTFOUND)
		wantCode(t, s.AddProjectMember(ctx, p.ID, unknownID), quire.ENOTFOUND)
	})
}

func init() {
	register("last admin", testLastAdmin)
	register("enable user", testEnableUser)
}

// testLastAdmin checks the LAST_ADMIN guard of SetUserRole, DisableUser and
// PutRole (product.md section 9): only active users of an admin role count.
func testLastAdmin(t *testing.T, open Opener) {
	// isAdmin reports whether the user is, now, an active administrator.
	isAdmin := func(t *testing.T, s quire.Store, id string) bool {
		t.Helper()
		u := must(s.UserByID(t.Context(), id))(t)
		return u.Status == quire.UserActive && u.Role.Admin
	}

	t.Run("the last active administrator can be neither demoted nor disabled, nor its role unmarked", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "admin")
		ctx := t.Context()
		newUser(t, s, "bob@example.com", "editor", "")
		wantCode(t, s.SetUserRole(ctx, ada.ID, "editor"), quire.ELASTADMIN)
		wantCode(t, s.DisableUser(ctx, ada.ID, baseTime), quire.ELASTADMIN)
		wantCode(t, s.PutRole(ctx, quire.Role{Key: "admin", Label: "Administrator", Docs: quire.LevelWrite}), quire.ELASTADMIN)
		if !isAdmin(t, s, ada.ID) {
			t.Error("a refused change was written")
		}
		r, err := s.Role(ctx, "admin")
		if err != nil || !r.Admin {
			t.Errorf("admin role = %+v, %v; want it still marked admin", r, err)
		}
		// What leaves the administrator in place passes.
		if err := s.SetUserRole(ctx, ada.ID, "admin"); err != nil {
			t.Errorf("set the same admin role: %v", err)
		}
		if err := s.PutRole(ctx, quire.Role{Key: "admin", Label: "Admins", Docs: quire.LevelView, Admin: true}); err != nil {
			t.Errorf("relabel the admin role: %v", err)
		}
	})

	t.Run("with a second administrator one may go, then the other may not", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		if err := s.PutRole(ctx, quire.Role{Key: "boss", Label: "Boss", Docs: quire.LevelWrite, Admin: true}); err != nil {
			t.Fatal(err)
		}
		ada := newUser(t, s, "ada@example.com", "admin", "")
		bob := newUser(t, s, "bob@example.com", "boss", "")
		if err := s.SetUserRole(ctx, ada.ID, "viewer"); err != nil {
			t.Fatalf("demote one of two: %v", err)
		}
		wantCode(t, s.DisableUser(ctx, bob.ID, baseTime), quire.ELASTADMIN)
		wantCode(t, s.PutRole(ctx, quire.Role{Key: "boss", Label: "Boss", Docs: quire.LevelWrite}), quire.ELASTADMIN)
		// Once ada is an administrator again, bob's role may lose its mark.
		if err := s.SetUserRole(ctx, ada.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRole(ctx, quire.Role{Key: "boss", Label: "Boss", Docs: quire.LevelWrite}); err != nil {
			t.Fatalf("unmark a role while another has an administrator: %v", err)
		}
		if isAdmin(t, s, bob.ID) {
			t.Error("bob is still an administrator")
		}
		wantCode(t, s.DisableUser(ctx, ada.ID, baseTime), quire.ELASTADMIN)
	})

	t.Run("invited and disabled administrators do not count", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "admin")
		ctx := t.Context()
		invited := &quire.User{Email: "inv@example.com", Name: "Inv", Role: quire.Role{Key: "admin"}, Status: quire.UserInvited}
		if err := s.CreateUser(ctx, invited); err != nil {
			t.Fatal(err)
		}
		bob := newUser(t, s, "bob@example.com", "admin", "")
		if err := s.DisableUser(ctx, bob.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.SetUserRole(ctx, ada.ID, "viewer"), quire.ELASTADMIN)
		// An invited or disabled administrator may be changed freely.
		if err := s.SetUserRole(ctx, invited.ID, "viewer"); err != nil {
			t.Error(err)
		}
		if err := s.DisableUser(ctx, bob.ID, baseTime); err != nil {
			t.Error(err)
		}
		// Enabled again, bob counts, and ada may go.
		if err := s.EnableUser(ctx, bob.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		if err := s.DisableUser(ctx, ada.ID, baseTime); err != nil {
			t.Errorf("disable one of two active administrators: %v", err)
		}
	})

	t.Run("a store without any active administrator refuses nothing", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "viewer")
		ctx := t.Context()
		if err := s.PutRole(ctx, quire.Role{Key: "admin", Label: "Administrator", Docs: quire.LevelWrite}); err != nil {
			t.Error(err)
		}
		if err := s.DisableUser(ctx, u.ID, baseTime); err != nil {
			t.Error(err)
		}
	})

	t.Run("of parallel changes that each take one of the last two administrators away, exactly one passes", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		changes := map[string]func(a, b *quire.User) (error, error){
			"two demotions": func(a, b *quire.User) (error, error) {
				return parallel(func() error { return s.SetUserRole(ctx, a.ID, "editor") },
					func() error { return s.SetUserRole(ctx, b.ID, "viewer") })
			},
			"a demotion and a disable": func(a, b *quire.User) (error, error) {
				return parallel(func() error { return s.SetUserRole(ctx, a.ID, "editor") },
					func() error { return s.DisableUser(ctx, b.ID, baseTime) })
			},
			"two disables": func(a, b *quire.User) (error, error) {
				return parallel(func() error { return s.DisableUser(ctx, a.ID, baseTime) },
					func() error { return s.DisableUser(ctx, b.ID, baseTime) })
			},
			"a disable and a role unmarked": func(a, b *quire.User) (error, error) {
				return parallel(func() error { return s.DisableUser(ctx, a.ID, baseTime) },
					func() error {
						return s.PutRole(ctx, quire.Role{Key: b.Role.Key, Label: "Boss", Docs: quire.LevelWrite})
					})
			},
		}
		round := 0
		var survivors []*quire.User
		for name, change := range changes {
			for range 5 {
				round++
				// Each round has its own two administrators: ada of role
				// admin, bob of a role boss of its own.
				boss := quire.Role{Key: "boss" + strconv.Itoa(round), Label: "Boss", Docs: quire.LevelWrite, Admin: true}
				if err := s.PutRole(ctx, boss); err != nil {
					t.Fatal(err)
				}
				a := newUser(t, s, "ada"+strconv.Itoa(round)+"@example.com", "admin", "")
				b := newUser(t, s, "bob"+strconv.Itoa(round)+"@example.com", boss.Key, "")
				b.Role = boss
				// Retire the previous round's survivor, now that this
				// round's two are there: they are the last two.
				for _, u := range survivors {
					if err := s.SetUserRole(ctx, u.ID, "editor"); err != nil {
						t.Fatal(err)
					}
				}
				survivors = survivors[:0]
				errA, errB := change(a, b)
				refused := 0
				for _, err := range []error{errA, errB} {
					switch code := quire.ErrorCode(err); {
					case err == nil:
					case code == quire.ELASTADMIN:
						refused++
					default:
						t.Fatalf("%s: unexpected error %v", name, err)
					}
				}
				left := 0
				for _, id := range []string{a.ID, b.ID} {
					if isAdmin(t, s, id) {
						left++
					}
				}
				if refused != 1 || left != 1 {
					t.Fatalf("%s: %d refused (%v, %v), %d administrators left; want 1 and 1", name, refused, errA, errB, left)
				}
				for _, u := range []*quire.User{a, b} {
					if isAdmin(t, s, u.ID) {
						survivors = append(survivors, u)
					}
				}
			}
		}
	})
}

// parallel runs f and g at once and returns their errors.
func parallel(f, g func() error) (error, error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	var ef, eg error
	wg.Add(2)
	go func() { defer wg.Done(); <-start; ef = f() }()
	go func() { defer wg.Done(); <-start; eg = g() }()
	close(start)
	wg.Wait()
	return ef, eg
}

func testEnableUser(t *testing.T, open Opener) {
	t.Run("enable brings a disabled user back, invited when it never chose a password", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		inv := newInvitedUser(t, s, "inv@example.com")
		for _, u := range []*quire.User{ada, inv} {
			if err := s.DisableUser(ctx, u.ID, baseTime); err != nil {
				t.Fatal(err)
			}
			if err := s.EnableUser(ctx, u.ID, baseTime.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		for id, want := range map[string]quire.UserStatus{ada.ID: quire.UserActive, inv.ID: quire.UserInvited} {
			got := must(s.UserByID(ctx, id))(t)
			if got.Status != want || !got.UpdatedAt.Equal(baseTime.Add(time.Minute)) {
				t.Errorf("%s: status %s, updated %v; want %s at %v", got.Email, got.Status, got.UpdatedAt, want, baseTime.Add(time.Minute))
			}
		}
		// Enabling a user that is not disabled changes nothing.
		if err := s.EnableUser(ctx, ada.ID, baseTime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.UserByID(ctx, ada.ID); got.Status != quire.UserActive || !got.UpdatedAt.Equal(baseTime.Add(time.Minute)) {
			t.Errorf("enable of an active user changed it: %+v", got)
		}
		wantCode(t, s.EnableUser(ctx, unknownID, baseTime), quire.ENOTFOUND)
	})
}
