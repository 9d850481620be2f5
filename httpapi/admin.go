package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"quire"
	"quire/auth"
)

// The administrator API (product.md section 9). s.admin refuses anyone who
// is not an administrator with 403 FORBIDDEN before a body is read; the
// services check again.

func (s *Server) admin(fn authedFunc) http.Handler {
	return s.authed(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := auth.RequireAdmin(a); err != nil {
			return err
		}
		return fn(w, r, a)
	})
}

// adminUserJSON is a USER with what the administration sees of it; mfa is
// whether the user has a second factor.
type adminUserJSON struct {
	userJSON
	Status      string  `json:"status"`
	Locked      bool    `json:"locked"`
	MFA         bool    `json:"mfa"`
	CreatedAt   string  `json:"createdAt"`
	LastLoginAt *string `json:"lastLoginAt"`
}

func newAdminUserJSON(u *quire.AdminUser) adminUserJSON {
	out := adminUserJSON{
		userJSON:  newUserJSON(&u.User),
		Status:    string(u.Status),
		Locked:    u.Locked,
		MFA:       u.MFA,
		CreatedAt: formatTime(u.CreatedAt),
	}
	if !u.LastLoginAt.IsZero() {
		t := formatTime(u.LastLoginAt)
		out.LastLoginAt = &t
	}
	return out
}

type departmentJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type projectJSON struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Members []string `json:"members"` // user IDs, ascending
}

func newProjectJSON(p *quire.Project) projectJSON {
	members := p.MemberIDs
	if members == nil {
		members = []string{}
	}
	return projectJSON{ID: p.ID, Name: p.Name, Members: members}
}

type roleJSON struct {
	Key        string `json:"key"`
	Label      string `json:"label"`
	Docs       string `json:"docs"`
	Admin      bool   `json:"admin"`
	RequireMFA bool   `json:"requireMfa"`
}

func newRoleJSON(r *quire.Role) roleJSON {
	return roleJSON{Key: r.Key, Label: r.Label, Docs: r.Docs.String(), Admin: r.Admin, RequireMFA: r.RequireMFA}
}

func writeMessage(w http.ResponseWriter, msg string) error {
	return writeJSON(w, http.StatusOK, map[string]string{"message": msg})
}

// handleByID runs act on the {id} of the path and, once it succeeds,
// answers 200 {"message": msg}.
func handleByID(act func(context.Context, quire.Actor, string) error, msg string) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := act(r.Context(), actor, r.PathValue("id")); err != nil {
			return err
		}
		return writeMessage(w, msg)
	}
}

// writeAdminUser answers the user id as the list shows it.
func writeAdminUser(w http.ResponseWriter, r *http.Request, a *auth.Service, actor quire.Actor, status int, id string) error {
	u, err := a.AdminUser(r.Context(), actor, id)
	if err != nil {
		return err
	}
	return writeJSON(w, status, map[string]any{"user": newAdminUserJSON(u)})
}

func handleAdminUserList(a *auth.Service) authedFunc {
	return handleList(a.AdminUsers, "users", newAdminUserJSON)
}

func handleAdminUserInvite(a *auth.Service) authedFunc {
	type body struct {
		Email        *string `json:"email"`
		Name         *string `json:"name"`
		Role         *string `json:"role"`
		DepartmentID *string `json:"departmentId"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		b, err := decode[body](w, r)
		if err != nil {
			return err
		}
		if err := present(map[string]*string{"email": b.Email, "name": b.Name, "role": b.Role}); err != nil {
			return err
		}
		in := auth.Invitation{Email: *b.Email, Name: *b.Name, Role: *b.Role}
		if b.DepartmentID != nil {
			in.DepartmentID = *b.DepartmentID
		}
		u, err := a.InviteUser(r.Context(), actor, in)
		if err != nil {
			return err
		}
		return writeAdminUser(w, r, a, actor, http.StatusCreated, u.ID)
	}
}

func handleAdminUserUpdate(a *auth.Service) authedFunc {
	type body struct {
		Name         json.RawMessage `json:"name"`
		Role         json.RawMessage `json:"role"`
		DepartmentID json.RawMessage `json:"departmentId"`
		Disabled     json.RawMessage `json:"disabled"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		b, err := decode[body](w, r)
		if err != nil {
			return err
		}
		errs := map[string]string{}
		var c auth.UserChange
		c.Name = notNull[string](b.Name, "name", "a string", errs)
		c.Role = notNull[string](b.Role, "role", "a string", errs)
		c.Disabled = notNull[bool](b.Disabled, "disabled", "a boolean", errs)
		if dept := field[string](b.DepartmentID, "departmentId", "a string or null", errs); dept.Set {
			c.DepartmentID = &dept.Value // null clears: Value is ""
		}
		if len(errs) > 0 {
			return quire.Invalid(errs)
		}
		id := r.PathValue("id")
		if _, err := a.UpdateUser(r.Context(), actor, id, c); err != nil {
			return err
		}
		return writeAdminUser(w, r, a, actor, http.StatusOK, id)
	}
}

// notNull reads an optional member that may not be null.
func notNull[T any](raw json.RawMessage, name, want string, errs map[string]string) *T {
	f := field[T](raw, name, want, errs)
	if f.Null {
		errs[name] = "must be " + want
		return nil
	}
	if !f.Set {
		return nil
	}
	return &f.Value
}

func handleAdminUserUnlock(a *auth.Service) authedFunc {
	return handleByID(a.UnlockUser, "User unlocked")
}

func handleAdminUserResendInvite(a *auth.Service) authedFunc {
	return handleByID(a.ResendInvite, "Invitation sent again")
}

// nameBody is the body of a department or project create or rename.
type nameBody struct {
	Name *string `json:"name"`
}

func (b nameBody) name() (string, error) {
	if b.Name == nil {
		return "", quire.Invalid(map[string]string{"name": "is required"})
	}
	return *b.Name, nil
}

func handleAdminDepartmentList(a *auth.Service) authedFunc {
	return handleList(a.Departments, "departments", func(d *quire.Department) departmentJSON { return departmentJSON(*d) })
}

func handleAdminDepartmentSave(a *auth.Service, create bool) authedFunc {
	return handleAdminNamedSave("department", create, a.CreateDepartment, a.RenameDepartment,
		func(d *quire.Department) any { return departmentJSON(*d) })
}

// handleAdminNamedSave creates (201) or renames (200, the {id} of the path)
// a record that is only a name, departments and projects, and answers it
// under its singular name.
func handleAdminNamedSave[T any](singular string, create bool,
	add func(ctx context.Context, actor quire.Actor, name string) (*T, error),
	rename func(ctx context.Context, actor quire.Actor, id, name string) (*T, error),
	render func(*T) any) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		b, err := decode[nameBody](w, r)
		if err != nil {
			return err
		}
		name, err := b.name()
		if err != nil {
			return err
		}
		var rec *T
		status := http.StatusOK
		if create {
			rec, err = add(r.Context(), actor, name)
			status = http.StatusCreated
		} else {
			rec, err = rename(r.Context(), actor, r.PathValue("id"), name)
		}
		if err != nil {
			return err
		}
		return writeJSON(w, status, map[string]any{singular: render(rec)})
	}
}

func handleAdminDepartmentDelete(a *auth.Service) authedFunc {
	return handleByID(a.DeleteDepartment, "Department deleted")
}

func handleAdminProjectList(a *auth.Service) authedFunc {
	return handleList(a.Projects, "projects", newProjectJSON)
}

func handleAdminProjectSave(a *auth.Service, create bool) authedFunc {
	return handleAdminNamedSave("project", create, a.CreateProject, a.RenameProject,
		func(p *quire.Project) any { return newProjectJSON(p) })
}

func handleAdminProjectDelete(a *auth.Service) authedFunc {
	return handleByID(a.DeleteProject, "Project deleted")
}

func handleAdminProjectMember(a *auth.Service, add bool) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		pid, uid := r.PathValue("id"), r.PathValue("userId")
		if add {
			if err := a.AddProjectMember(r.Context(), actor, pid, uid); err != nil {
				return err
			}
			return writeMessage(w, "Member added")
		}
		if err := a.RemoveProjectMember(r.Context(), actor, pid, uid); err != nil {
			return err
		}
		return writeMessage(w, "Member removed")
	}
}

func handleAdminRoleList(a *auth.Service) authedFunc {
	return handleList(a.Roles, "roles", newRoleJSON)
}

// handleAdminRolePut replaces (or creates) a role: label and docs are
// required, admin and requireMfa are false when absent.
func handleAdminRolePut(a *auth.Service) authedFunc {
	type body struct {
		Label      *string `json:"label"`
		Docs       *string `json:"docs"`
		Admin      bool    `json:"admin"`
		RequireMFA bool    `json:"requireMfa"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		b, err := decode[body](w, r)
		if err != nil {
			return err
		}
		fields := map[string]string{}
		if b.Label == nil {
			fields["label"] = "is required"
		}
		var level quire.Level
		if b.Docs == nil {
			fields["docs"] = "is required"
		} else if lv, ok := quire.ParseLevel(*b.Docs); !ok {
			fields["docs"] = "must be none, view or write"
		} else {
			level = lv
		}
		if len(fields) > 0 {
			return quire.Invalid(fields)
		}
		role, err := a.PutRole(r.Context(), actor, r.PathValue("key"), *b.Label, level, b.Admin, b.RequireMFA)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"role": newRoleJSON(role)})
	}
}
