package web

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"quire"
	"quire/auth"
)

// The Administration area (product.md section 9): users, departments,
// projects with members, and roles, over the same auth service methods as
// the administrator API, so the same guards (LAST_ADMIN, IN_USE,
// NOT_INVITED) hold. Every form is a plain POST, checked for cross-origin
// by signedIn; after a change the browser is sent back with a ?m= key that
// names what happened, and a refusal re-renders the page with its reason.

func init() {
	for k, v := range map[string]string{
		"user-invited":       "Invitation sent.",
		"user-saved":         "User saved.",
		"user-disabled":      "User disabled: their sessions have ended.",
		"user-enabled":       "User enabled: they can sign in again.",
		"user-unlocked":      "User unlocked.",
		"invite-resent":      "Invitation sent again; the earlier link no longer works.",
		"department-created": "Department created.",
		"department-saved":   "Department renamed.",
		"department-deleted": "Department deleted.",
		"project-created":    "Project created.",
		"project-saved":      "Project renamed.",
		"project-deleted":    "Project deleted.",
		"member-added":       "Member added.",
		"member-removed":     "Member removed.",
		"role-saved":         "Role saved.",
		"must-change":        "Choose a password of your own before you go on: the one you signed in with was printed when the server started.",
	} {
		flashes[k] = v
	}
}

// admin adapts an administration page: signed in, and an administrator
// (anyone else gets the 403 page).
func (s *server) admin(fn actorFunc) http.Handler {
	return s.signedIn(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := auth.RequireAdmin(a); err != nil {
			return err
		}
		return fn(w, r, a)
	})
}

// adminPage is the data of every administration page.
type adminPage struct {
	layout
	Section     string
	Users       []adminUserRow
	Subject     *adminUserRow // the user of the user page
	Roles       []quire.Role
	Departments []quire.Department
	Projects    []adminProjectRow
	Form        url.Values // the values of a refused form, to show again
}

type adminUserRow struct {
	quire.AdminUser
}

type adminProjectRow struct {
	quire.Project
	Members    []quire.AdminUser
	NonMembers []quire.AdminUser
}

// refusal turns a refused change into the message shown above the form,
// naming each field the service named.
func refusal(err error, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(quire.ErrorMessage(err))
	var e *quire.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		names := make([]string, 0, len(e.Fields))
		for n := range e.Fields {
			names = append(names, n)
		}
		sort.Strings(names)
		b.WriteString(":")
		for i, n := range names {
			if i > 0 {
				b.WriteString(";")
			}
			l := labels[n]
			if l == "" {
				l = n
			}
			b.WriteString(" " + l + " " + e.Fields[n])
		}
	}
	b.WriteString(".")
	return b.String()
}

var adminFieldLabels = map[string]string{
	"email": "Email", "name": "Name", "role": "Role", "departmentId": "Department",
	"label": "Label", "docs": "Documents", "key": "Key",
}

// load fills what the section's page shows.
func (s *server) loadAdmin(r *http.Request, a quire.Actor, p *adminPage) error {
	ctx := r.Context()
	users, err := s.auth.AdminUsers(ctx, a)
	if err != nil {
		return err
	}
	p.Users = make([]adminUserRow, len(users))
	for i := range users {
		p.Users[i] = adminUserRow{users[i]}
	}
	if p.Roles, err = s.auth.Roles(ctx, a); err != nil {
		return err
	}
	if p.Departments, err = s.auth.Departments(ctx, a); err != nil {
		return err
	}
	if p.Section == "projects" {
		ps, err := s.auth.Projects(ctx, a)
		if err != nil {
			return err
		}
		for _, pr := range ps {
			row := adminProjectRow{Project: pr}
			member := map[string]bool{}
			for _, id := range pr.MemberIDs {
				member[id] = true
			}
			for _, u := range users {
				if member[u.ID] {
					row.Members = append(row.Members, u)
				} else {
					row.NonMembers = append(row.NonMembers, u)
				}
			}
			p.Projects = append(p.Projects, row)
		}
	}
	return nil
}

// renderAdmin shows the section's page; err, when set, is the refusal of
// the form just sent, shown above it with the values it held.
func (s *server) renderAdmin(w http.ResponseWriter, r *http.Request, a quire.Actor, section, title string, err error) error {
	p := adminPage{layout: s.section(r, &a, "admin", title), Section: section, Form: url.Values{}}
	status := http.StatusOK
	if err != nil {
		st, ok := statusOf(errorCode(err))
		if !ok || st >= 500 {
			return err
		}
		status = st
		p.Error = refusal(err, adminFieldLabels)
		var e *quire.Error
		if errors.As(err, &e) {
			for k, v := range e.Fields {
				p.Fields[k] = v
			}
		}
		p.Form = r.PostForm
		p.Flash = ""
	}
	if lerr := s.loadAdmin(r, a, &p); lerr != nil {
		return lerr
	}
	page := "admin_" + section + ".html"
	if section == "user" {
		id := r.PathValue("id")
		for i := range p.Users {
			if p.Users[i].ID == id {
				p.Subject = &p.Users[i]
			}
		}
		if p.Subject == nil {
			return quire.Errorf(quire.ENOTFOUND, "There is no such user.")
		}
	}
	return s.show(w, r, status, page, p)
}

func handleAdminHome() actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
		return nil
	}
}

func handleAdminSection(s *server, section, title string) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		return s.renderAdmin(w, r, a, section, title, nil)
	}
}

// adminAct is a form that changes something: do runs it and returns the
// page to go back to with what happened; a refusal re-renders section.
func adminAct(s *server, section, title string, do func(r *http.Request, a quire.Actor) (string, error)) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		to, err := do(r, a)
		if err != nil {
			return s.renderAdmin(w, r, a, section, title, err)
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return nil
	}
}

func (s *server) adminRoutes() {
	m, a := s.mux, s.auth
	const (
		users, depts, projects, roles = "users", "departments", "projects", "roles"
	)
	m.Handle("GET /admin", s.admin(handleAdminHome()))
	m.Handle("GET /admin/users", s.admin(handleAdminSection(s, users, "Users")))
	m.Handle("POST /admin/users", s.admin(adminAct(s, users, "Users", func(r *http.Request, actor quire.Actor) (string, error) {
		f := r.PostForm
		_, err := a.InviteUser(r.Context(), actor, auth.Invitation{Email: f.Get("email"), Name: f.Get("name"),
			Role: f.Get("role"), DepartmentID: f.Get("departmentId")})
		return "/admin/users?m=user-invited", err
	})))
	m.Handle("GET /admin/users/{id}", s.admin(handleAdminSection(s, "user", "User")))
	m.Handle("POST /admin/users/{id}", s.admin(adminAct(s, "user", "User", func(r *http.Request, actor quire.Actor) (string, error) {
		f := r.PostForm
		name, role, dept := f.Get("name"), f.Get("role"), f.Get("departmentId")
		_, err := a.UpdateUser(r.Context(), actor, r.PathValue("id"), auth.UserChange{Name: &name, Role: &role, DepartmentID: &dept})
		return "/admin/users/" + r.PathValue("id") + "?m=user-saved", err
	})))
	for _, act := range []struct {
		verb, flash string
		do          func(r *http.Request, actor quire.Actor, id string) error
	}{
		{"disable", "user-disabled", func(r *http.Request, actor quire.Actor, id string) error {
			t := true
			_, err := a.UpdateUser(r.Context(), actor, id, auth.UserChange{Disabled: &t})
			return err
		}},
		{"enable", "user-enabled", func(r *http.Request, actor quire.Actor, id string) error {
			f := false
			_, err := a.UpdateUser(r.Context(), actor, id, auth.UserChange{Disabled: &f})
			return err
		}},
		{"unlock", "user-unlocked", func(r *http.Request, actor quire.Actor, id string) error {
			return a.UnlockUser(r.Context(), actor, id)
		}},
		{"resend-invite", "invite-resent", func(r *http.Request, actor quire.Actor, id string) error {
			return a.ResendInvite(r.Context(), actor, id)
		}},
	} {
		m.Handle("POST /admin/users/{id}/"+act.verb, s.admin(adminAct(s, "user", "User", func(r *http.Request, actor quire.Actor) (string, error) {
			id := r.PathValue("id")
			return "/admin/users/" + id + "?m=" + act.flash, act.do(r, actor, id)
		})))
	}

	m.Handle("GET /admin/departments", s.admin(handleAdminSection(s, depts, "Departments")))
	m.Handle("POST /admin/departments", s.admin(adminAct(s, depts, "Departments", func(r *http.Request, actor quire.Actor) (string, error) {
		_, err := a.CreateDepartment(r.Context(), actor, r.PostForm.Get("name"))
		return "/admin/departments?m=department-created", err
	})))
	m.Handle("POST /admin/departments/{id}", s.admin(adminAct(s, depts, "Departments", func(r *http.Request, actor quire.Actor) (string, error) {
		_, err := a.RenameDepartment(r.Context(), actor, r.PathValue("id"), r.PostForm.Get("name"))
		return "/admin/departments?m=department-saved", err
	})))
	m.Handle("POST /admin/departments/{id}/delete", s.admin(adminAct(s, depts, "Departments", func(r *http.Request, actor quire.Actor) (string, error) {
		return "/admin/departments?m=department-deleted", a.DeleteDepartment(r.Context(), actor, r.PathValue("id"))
	})))

	m.Handle("GET /admin/projects", s.admin(handleAdminSection(s, projects, "Projects")))
	m.Handle("POST /admin/projects", s.admin(adminAct(s, projects, "Projects", func(r *http.Request, actor quire.Actor) (string, error) {
		_, err := a.CreateProject(r.Context(), actor, r.PostForm.Get("name"))
		return "/admin/projects?m=project-created", err
	})))
	m.Handle("POST /admin/projects/{id}", s.admin(adminAct(s, projects, "Projects", func(r *http.Request, actor quire.Actor) (string, error) {
		_, err := a.RenameProject(r.Context(), actor, r.PathValue("id"), r.PostForm.Get("name"))
		return "/admin/projects?m=project-saved", err
	})))
	m.Handle("POST /admin/projects/{id}/delete", s.admin(adminAct(s, projects, "Projects", func(r *http.Request, actor quire.Actor) (string, error) {
		return "/admin/projects?m=project-deleted", a.DeleteProject(r.Context(), actor, r.PathValue("id"))
	})))
	m.Handle("POST /admin/projects/{id}/members", s.admin(adminAct(s, projects, "Projects", func(r *http.Request, actor quire.Actor) (string, error) {
		uid := r.PostForm.Get("userId")
		if uid == "" {
			return "", quire.Invalid(map[string]string{"userId": "is required"})
		}
		return "/admin/projects?m=member-added", a.AddProjectMember(r.Context(), actor, r.PathValue("id"), uid)
	})))
	m.Handle("POST /admin/projects/{id}/members/{userId}/delete", s.admin(adminAct(s, projects, "Projects", func(r *http.Request, actor quire.Actor) (string, error) {
		return "/admin/projects?m=member-removed", a.RemoveProjectMember(r.Context(), actor, r.PathValue("id"), r.PathValue("userId"))
	})))

	m.Handle("GET /admin/roles", s.admin(handleAdminSection(s, roles, "Roles")))
	m.Handle("POST /admin/roles", s.admin(adminAct(s, roles, "Roles", func(r *http.Request, actor quire.Actor) (string, error) {
		f := r.PostForm
		level, ok := quire.ParseLevel(f.Get("docs"))
		if !ok {
			return "", quire.Invalid(map[string]string{"docs": "must be none, view or write"})
		}
		_, err := a.PutRole(r.Context(), actor, strings.TrimSpace(f.Get("key")), f.Get("label"), level,
			f.Get("admin") == "on", f.Get("requireMfa") == "on")
		return "/admin/roles?m=role-saved", err
	})))

	if s.cfg.Webhooks != nil {
		s.webhookRoutes() // admin_webhooks.go
	}
}
