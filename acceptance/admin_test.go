package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"quire"
	"quire/auth"
)

// The Administration area and the pages around sign-in that product.md
// section 9 adds, through plain HTTP as a browser without script sends them.

func TestAdminPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root, admin := e.signedInUser("root@example.com", "admin", "")
	ed := e.user("ed@example.com", "editor", "Engineering")

	t.Run("only an administrator sees the area and its link", func(t *testing.T) {
		b := e.signedIn(ed.Email)
		for _, path := range []string{"/admin/users", "/admin/departments", "/admin/projects", "/admin/roles", "/admin/users/" + root.ID} {
			if p := b.get(path); p.Status != http.StatusForbidden {
				t.Errorf("GET %s as an editor: %d", path, p.Status)
			}
		}
		if p := b.post("/admin/users/"+root.ID+"/disable", url.Values{}); p.Status != http.StatusForbidden {
			t.Errorf("POST disable as an editor: %d", p.Status)
		}
		if p := b.get("/documents"); p.byID("admin-link") != nil {
			t.Error("an editor sees the Administration link")
		}
		if p := admin.get("/documents"); p.byID("admin-link") == nil {
			t.Error("an administrator does not see the Administration link")
		}
	})

	t.Run("the users page lists status, lock, second factor and last sign-in", func(t *testing.T) {
		p := admin.get("/admin/users")
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		table := p.text("users")
		for _, want := range []string{"root@example.com", "ed@example.com", "Engineering", "active", "25 Nov 2026 10:00 UTC"} {
			if !strings.Contains(table, want) {
				t.Errorf("users table lacks %q: %s", want, table)
			}
		}
	})

	t.Run("an invitation says what happened, and a refused one names the field", func(t *testing.T) {
		p := admin.post("/admin/users", url.Values{"email": {"new@example.com"}, "name": {"New"}, "role": {"viewer"}})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/admin/users?m=user-invited" {
			t.Fatalf("invite: %d to %q: %s", p.Status, p.Header.Get("Location"), p.text("page-error"))
		}
		if flash := textOfClass(admin.get(p.Header.Get("Location")), "flash"); flash != "Invitation sent." {
			t.Errorf("flash %q", flash)
		}
		p = admin.post("/admin/users", url.Values{"email": {"new@example.com"}, "name": {"Again"}, "role": {"viewer"}})
		if p.Status != http.StatusBadRequest || p.text("page-error") != "Validation failed: Email is already taken." || p.text("err-email") != "is already taken" {
			t.Errorf("taken: %d %q %q", p.Status, p.text("page-error"), p.text("err-email"))
		}
	})

	t.Run("the last administrator cannot be disabled, and the page says so", func(t *testing.T) {
		p := admin.post("/admin/users/"+root.ID+"/disable", url.Values{})
		if p.Status != http.StatusConflict || p.text("page-error") != "This would leave no active administrator." {
			t.Errorf("disable: %d %q", p.Status, p.text("page-error"))
		}
	})

	t.Run("a department still used cannot be deleted, and the page says so", func(t *testing.T) {
		p := admin.get("/admin/departments")
		if !strings.Contains(p.text("departments"), "") || p.Status != http.StatusOK {
			t.Fatalf("departments: %d", p.Status)
		}
		p = admin.post("/admin/departments/"+ed.DepartmentID+"/delete", url.Values{})
		if p.Status != http.StatusConflict || p.text("page-error") != "The department is still in use." {
			t.Errorf("delete: %d %q", p.Status, p.text("page-error"))
		}
	})

	t.Run("every form is refused from another site", func(t *testing.T) {
		p := admin.do("POST", "/admin/departments", url.Values{"name": {"Evil"}}, http.Header{"Sec-Fetch-Site": {"cross-site"}})
		if p.Status != http.StatusForbidden {
			t.Errorf("cross-site: %d", p.Status)
		}
		ds, _ := e.store.Departments(context.Background())
		for _, d := range ds {
			if d.Name == "Evil" {
				t.Error("the cross-site form created a department")
			}
		}
	})

	t.Run("projects, members and roles are managed from their pages", func(t *testing.T) {
		p := admin.post("/admin/projects", url.Values{"name": {"Apollo"}})
		if p.Header.Get("Location") != "/admin/projects?m=project-created" {
			t.Fatalf("create project: %d %q", p.Status, p.text("page-error"))
		}
		proj, err := e.store.ProjectByName(context.Background(), "Apollo")
		if err != nil {
			t.Fatal(err)
		}
		p = admin.post("/admin/projects/"+proj.ID+"/members", url.Values{"userId": {ed.ID}})
		if p.Header.Get("Location") != "/admin/projects?m=member-added" {
			t.Fatalf("add member: %d %q", p.Status, p.text("page-error"))
		}
		if member, _ := e.store.IsProjectMember(context.Background(), proj.ID, ed.ID); !member {
			t.Error("not a member")
		}
		p = admin.post("/admin/roles", url.Values{"key": {"auditor"}, "label": {"Auditor"}, "docs": {"view"}, "requireMfa": {"on"}})
		if p.Header.Get("Location") != "/admin/roles?m=role-saved" {
			t.Fatalf("role: %d %q", p.Status, p.text("page-error"))
		}
		if r, err := e.store.Role(context.Background(), "auditor"); err != nil || !r.RequireMFA || r.Docs != quire.LevelView {
			t.Errorf("role = %+v, %v", r, err)
		}
		p = admin.post("/admin/roles", url.Values{"key": {"admin"}, "label": {"Administrator"}, "docs": {"write"}})
		if p.Status != http.StatusConflict {
			t.Errorf("taking the admin mark off: %d %q", p.Status, p.text("page-error"))
		}
	})
}

// textOfClass returns the text of the first element of that class.
func textOfClass(p *page, class string) string {
	n := find(p.Doc, func(n *html.Node) bool { return attr(n, "class") == class })
	if n == nil {
		return ""
	}
	return textOf(n)
}

func TestFirstAdministratorMustChangePassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, _, err := e.auth.CreateUser(context.Background(), auth.NewUser{Email: "admin@localhost", Name: "Administrator",
		Role: "admin", Password: testPassword, MustChangePassword: true}); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn("admin@localhost")
	for _, path := range []string{"/documents", "/admin/users", "/folders"} {
		p := b.get(path)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/account/password?m=must-change" {
			t.Errorf("GET %s: %d to %q", path, p.Status, p.Header.Get("Location"))
		}
	}
	if p := b.post("/admin/departments", url.Values{"name": {"Sales"}}); p.Status != http.StatusSeeOther ||
		p.Header.Get("Location") != "/account/password?m=must-change" {
		t.Errorf("POST: %d to %q", p.Status, p.Header.Get("Location"))
	}
	p := b.get("/account/password?m=must-change")
	if p.Status != http.StatusOK || !strings.HasPrefix(textOfClass(p, "flash"), "Choose a password of your own") {
		t.Fatalf("password page: %d %q", p.Status, textOfClass(p, "flash"))
	}
	const mine = "my very own administrator passphrase"
	p = b.post("/account/password", url.Values{"current": {testPassword}, "password": {mine}, "confirm": {mine}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("change: %d %q", p.Status, p.text("page-error"))
	}
	if p := b.get("/admin/users"); p.Status != http.StatusOK {
		t.Errorf("after the change: %d", p.Status)
	}
}

func TestGuestSeesWhatItMayDo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.user("guest@example.com", "guest", "")
	b := e.browser()
	p := b.post("/login", url.Values{"email": {g.Email}, "password": {testPassword}})
	if p.Header.Get("Location") != "/welcome" {
		t.Fatalf("sign-in leads to %q", p.Header.Get("Location"))
	}
	for _, path := range []string{"/welcome", "/documents", "/folders"} {
		p := b.get(path)
		if p.byID("welcome") == nil || p.byID("welcome-sign-out") == nil {
			t.Errorf("GET %s (%d) is not the welcome page with a sign-out button", path, p.Status)
		}
		if text := p.text("welcome"); !strings.Contains(text, "not read documents") || !strings.Contains(text, "Ask an administrator") {
			t.Errorf("GET %s says %q", path, text)
		}
	}
	if p := b.post("/logout", url.Values{}); p.Status != http.StatusSeeOther {
		t.Errorf("sign out: %d", p.Status)
	}
	if b.cookie() != "" {
		t.Error("still signed in")
	}
}

func TestAdminNameTakenNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.signedIn(e.user("root@example.com", "admin", "").Email)
	for _, path := range []string{"/admin/departments", "/admin/projects"} {
		if p := admin.post(path, url.Values{"name": {"Sales"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("%s: %d %q", path, p.Status, p.text("page-error"))
		}
		p := admin.post(path, url.Values{"name": {"Sales"}})
		if p.Status != http.StatusBadRequest || p.text("page-error") != "Validation failed: Name is already taken." || p.text("err-name") != "is already taken" {
			t.Errorf("%s taken: %d %q %q", path, p.Status, p.text("page-error"), p.text("err-name"))
		}
	}
}
