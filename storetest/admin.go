package storetest

import (
	"slices"
	"testing"
	"time"

	"quire"
)

// The administration's store methods (product.md section 9).

func init() { register("admin", testAdmin) }

func testAdmin(t *testing.T, open Opener) {
	t.Run("the admin list says who is locked and when each last signed in", func(t *testing.T) {
		s, a := openWithUser(t, open, "a@example.com", "admin")
		ctx := t.Context()
		b := newUser(t, s, "b@example.com", "viewer", "")
		invited := &quire.User{Email: "c@example.com", Name: "C", Role: quire.Role{Key: "viewer"}, Status: quire.UserInvited}
		if err := s.CreateUser(ctx, invited); err != nil {
			t.Fatal(err)
		}
		for _, at := range []time.Time{baseTime, baseTime.Add(time.Hour)} {
			sess := &quire.Session{UserID: a.ID, TokenHash: []byte("token " + at.String()), CreatedAt: at,
				ExpiresAt: at.Add(24 * time.Hour), LastUsedAt: at}
			if err := s.CreateSession(ctx, sess); err != nil {
				t.Fatal(err)
			}
		}
		for range smallLimits.LockThreshold {
			fail(t, s, "192.0.2.1", b.Email, baseTime, quire.LoginLimits{Limit: 100, Window: time.Hour,
				LockThreshold: smallLimits.LockThreshold, LockDuration: 30 * time.Minute})
		}
		users := must(s.AdminUsers(ctx, baseTime.Add(time.Minute)))(t)
		type row struct {
			Email  string
			Status quire.UserStatus
			Locked bool
			Last   time.Time
		}
		var got []row
		for _, u := range users {
			got = append(got, row{u.Email, u.Status, u.Locked, u.LastLoginAt})
		}
		want := []row{
			{"a@example.com", quire.UserActive, false, baseTime.Add(time.Hour)},
			{"b@example.com", quire.UserActive, true, time.Time{}},
			{"c@example.com", quire.UserInvited, false, time.Time{}},
		}
		if !slices.Equal(got, want) {
			t.Errorf("AdminUsers = %+v, want %+v", got, want)
		}
		// One user reads as the list shows it.
		for _, u := range users {
			one, err := s.AdminUser(ctx, baseTime.Add(time.Minute), u.ID)
			if err != nil {
				t.Fatalf("AdminUser(%s): %v", u.Email, err)
			}
			if one.ID != u.ID || one.Locked != u.Locked || !one.LastLoginAt.Equal(u.LastLoginAt) || one.Status != u.Status {
				t.Errorf("AdminUser(%s) = %+v, the list has %+v", u.Email, *one, u)
			}
		}
		for _, id := range []string{unknownID, ""} {
			if _, err := s.AdminUser(ctx, baseTime, id); quire.ErrorCode(err) != quire.ENOTFOUND {
				t.Errorf("AdminUser(%q): %v, want NOT_FOUND", id, err)
			}
		}
		// The lock ends with its time.
		users = must(s.AdminUsers(ctx, baseTime.Add(time.Hour)))(t)
		if users[1].Locked {
			t.Error("b is still locked after its lock ended")
		}
	})

	t.Run("a user's name changes", func(t *testing.T) {
		s, u := openWithUser(t, open, "a@example.com", "viewer")
		if err := s.SetUserName(t.Context(), u.ID, "Ada"); err != nil {
			t.Fatal(err)
		}
		got, err := s.UserByID(t.Context(), u.ID)
		if err != nil || got.Name != "Ada" {
			t.Fatalf("name = %v, %v, want Ada", got, err)
		}
		wantCode(t, s.SetUserName(t.Context(), unknownID, "X"), quire.ENOTFOUND)
	})

	t.Run("the first administrator must change its password until it sets one", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		u := &quire.User{Email: "root@example.com", Name: "Root", Role: quire.Role{Key: "admin"},
			Status: quire.UserActive, PasswordHash: "x", MustChangePassword: true}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		got, err := s.UserByEmail(ctx, u.Email)
		if err != nil || !got.MustChangePassword {
			t.Fatalf("MustChangePassword = %v, %v; want true", got, err)
		}
		if err := s.SetPassword(ctx, u.ID, "y", baseTime); err != nil {
			t.Fatal(err)
		}
		if got, err = s.UserByID(ctx, u.ID); err != nil || got.MustChangePassword {
			t.Fatalf("after SetPassword MustChangePassword = %v, %v; want false", got, err)
		}
	})

	t.Run("a role keeps its second-factor demand", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		r := quire.Role{Key: "auditor", Label: "Auditor", Docs: quire.LevelView, RequireMFA: true}
		if err := s.PutRole(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, err := s.Role(ctx, "auditor")
		if err != nil || *got != r {
			t.Fatalf("Role = %+v, %v; want %+v", got, err, r)
		}
		roles := must(s.Roles(ctx))(t)
		for _, x := range roles {
			if x.RequireMFA != (x.Key == "auditor") {
				t.Errorf("role %s RequireMFA = %v", x.Key, x.RequireMFA)
			}
		}
	})

	t.Run("resending an invitation voids the earlier link and needs an invited user", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		u := newInvitedUser(t, s, "new@example.com")
		token := func(h string) *quire.OneTimeToken {
			return &quire.OneTimeToken{UserID: u.ID, Purpose: quire.PurposeSetup, TokenHash: []byte(h),
				CreatedAt: baseTime, ExpiresAt: baseTime.Add(time.Hour)}
		}
		mail := func() *quire.Mail { return &quire.Mail{To: u.Email, Subject: "s", Text: "t", CreatedAt: baseTime} }
		if err := s.CreateToken(ctx, token("first"), mail()); err != nil {
			t.Fatal(err)
		}
		second, m := token("second"), mail()
		if err := s.ResendInvite(ctx, second, m); err != nil {
			t.Fatal(err)
		}
		if second.ID == "" || m.ID == "" {
			t.Fatal("ResendInvite left the token's or the mail's ID empty")
		}
		if _, err := s.MailByID(ctx, m.ID); err != nil {
			t.Fatalf("the new mail is not queued: %v", err)
		}
		_, err := s.RedeemToken(ctx, quire.PurposeSetup, []byte("first"), "h", baseTime.Add(time.Minute))
		wantCode(t, err, quire.EINVALIDTOKEN)
		if _, err := s.RedeemToken(ctx, quire.PurposeSetup, []byte("second"), "h", baseTime.Add(time.Minute)); err != nil {
			t.Fatalf("the new link: %v", err)
		}
		wantCode(t, s.ResendInvite(ctx, token("third"), mail()), quire.ENOTINVITED)
		unknown := token("fourth")
		unknown.UserID = unknownID
		wantCode(t, s.ResendInvite(ctx, unknown, mail()), quire.ENOTFOUND)
	})

	t.Run("a department or project made while recording names itself in its event; an existing department writes none", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		made := func(action, target, name string) quire.Store {
			return s.Recording(quire.NewEvent(action, baseTime, nil, quire.RequestInfo{}).On(target, "", name))
		}
		ensured := must(made(quire.ActionDepartmentCreated, quire.TargetDepartment, "Sales").EnsureDepartment(ctx, "Sales"))(t)
		if again, err := made(quire.ActionDepartmentCreated, quire.TargetDepartment, "Sales").EnsureDepartment(ctx, "Sales"); err != nil || again.ID != ensured.ID {
			t.Fatalf("EnsureDepartment again = %v, %v; want %s", again, err, ensured.ID)
		}
		created := must(made(quire.ActionDepartmentCreated, quire.TargetDepartment, "Legal").CreateDepartment(ctx, "Legal"))(t)
		p := must(made(quire.ActionProjectCreated, quire.TargetProject, "Apollo").CreateProject(ctx, "Apollo"))(t)
		var got []string
		for _, e := range auditEvents(t, s, quire.AuditFilter{}) {
			got = append(got, e.Action+" "+e.Target.Name+" "+e.Target.ID)
		}
		want := []string{quire.ActionDepartmentCreated + " Legal " + created.ID, quire.ActionDepartmentCreated + " Sales " + ensured.ID,
			quire.ActionProjectCreated + " Apollo " + p.ID}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
	})

	t.Run("departments are created, renamed, and deleted only when unused", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		d := must(s.CreateDepartment(ctx, "Sales"))(t)
		_, err := s.CreateDepartment(ctx, "Sales")
		wantCode(t, err, quire.ECONFLICT)
		other := must(s.CreateDepartment(ctx, "Support"))(t)
		_, err = s.RenameDepartment(ctx, other.ID, "Sales")
		wantCode(t, err, quire.ECONFLICT)
		if got, err := s.RenameDepartment(ctx, d.ID, "Field sales"); err != nil || got.Name != "Field sales" {
			t.Fatalf("RenameDepartment = %v, %v", got, err)
		}
		_, err = s.RenameDepartment(ctx, unknownID, "X")
		wantCode(t, err, quire.ENOTFOUND)

		u := newUser(t, s, "a@example.com", "editor", d.ID)
		wantCode(t, s.DeleteDepartment(ctx, d.ID), quire.EINUSE)
		if err := s.SetUserDepartment(ctx, u.ID, ""); err != nil {
			t.Fatal(err)
		}
		doc := &quire.Document{Title: "t", ContentType: "plain", Status: "draft", Visibility: "department",
			OwnerID: u.ID, DepartmentID: d.ID}
		if err := s.CreateDocument(ctx, doc, baseTime); err != nil {
			t.Fatal(err)
		}
		// A document in the trash still names it.
		if err := s.DeleteDocument(ctx, quire.Visibility{All: true}, doc.ID, u.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteDepartment(ctx, d.ID), quire.EINUSE)
		if err := s.PurgeDocument(ctx, quire.Visibility{All: true}, doc.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteDepartment(ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteDepartment(ctx, d.ID), quire.ENOTFOUND)
		ds, err := s.Departments(ctx)
		if err != nil || len(ds) != 1 || ds[0].Name != "Support" {
			t.Fatalf("Departments = %v, %v", ds, err)
		}
	})

	t.Run("projects are renamed, listed with members, and deleted only when no document is filed in them", func(t *testing.T) {
		s, a := openWithUser(t, open, "a@example.com", "editor")
		ctx := t.Context()
		b := newUser(t, s, "b@example.com", "editor", "")
		p := must(s.CreateProject(ctx, "Apollo"))(t)
		q := must(s.CreateProject(ctx, "Borealis"))(t)
		for _, u := range []*quire.User{b, a} {
			if err := s.AddProjectMember(ctx, p.ID, u.ID); err != nil {
				t.Fatal(err)
			}
		}
		_, err := s.RenameProject(ctx, q.ID, "Apollo")
		wantCode(t, err, quire.ECONFLICT)
		_, err = s.RenameProject(ctx, unknownID, "X")
		wantCode(t, err, quire.ENOTFOUND)
		got, err := s.RenameProject(ctx, p.ID, "Zenith")
		if err != nil || got.Name != "Zenith" || len(got.MemberIDs) != 2 {
			t.Fatalf("RenameProject = %+v, %v", got, err)
		}
		members := []string{a.ID, b.ID}
		slices.Sort(members)
		ps := must(s.ProjectsWithMembers(ctx))(t)
		if len(ps) != 2 || ps[0].Name != "Borealis" || ps[0].MemberIDs != nil || ps[1].Name != "Zenith" ||
			!slices.Equal(ps[1].MemberIDs, members) {
			t.Fatalf("ProjectsWithMembers = %+v", ps)
		}
		if err := s.RemoveProjectMember(ctx, p.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveProjectMember(ctx, p.ID, b.ID); err != nil {
			t.Fatalf("removing a non-member: %v", err)
		}
		wantCode(t, s.RemoveProjectMember(ctx, unknownID, b.ID), quire.ENOTFOUND)
		if member, err := s.IsProjectMember(ctx, p.ID, b.ID); err != nil || member {
			t.Fatalf("b is still a member: %v, %v", member, err)
		}
		byID, err := s.ProjectByID(ctx, p.ID)
		if err != nil || !slices.Equal(byID.MemberIDs, []string{a.ID}) {
			t.Fatalf("ProjectByID = %+v, %v", byID, err)
		}
		_, err = s.ProjectByID(ctx, unknownID)
		wantCode(t, err, quire.ENOTFOUND)

		doc := &quire.Document{Title: "t", ContentType: "plain", Status: "draft", Visibility: "project",
			OwnerID: a.ID, ProjectID: p.ID}
		if err := s.CreateDocument(ctx, doc, baseTime); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteProject(ctx, p.ID), quire.EINUSE)
		if err := s.DeleteProject(ctx, q.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteProject(ctx, q.ID), quire.ENOTFOUND)
	})
}
