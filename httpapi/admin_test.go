package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/auth"
)

// adminUser is what the tests compare of a user of the admin API.
type adminUser struct {
	ID           string  `json:"id"`
	Email        string  `json:"email"`
	Name         string  `json:"name"`
	Role         string  `json:"role"`
	DepartmentID *string `json:"departmentId"`
	Status       string  `json:"status"`
	Locked       bool    `json:"locked"`
	MFA          bool    `json:"mfa"`
	LastLoginAt  *string `json:"lastLoginAt"`
}

func adminUsers(t *testing.T, e *env, token string) map[string]adminUser {
	t.Helper()
	r := e.do("GET", "/api/admin/users", bearer(token))
	if r.Status != http.StatusOK {
		t.Fatalf("list users: %d %s", r.Status, r.Body)
	}
	var body struct{ Users []adminUser }
	r.decode(t, &body)
	out := map[string]adminUser{}
	for _, u := range body.Users {
		out[u.Email] = u
	}
	return out
}

func TestAdminRefusesEveryoneElse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user("root@example.com", "admin", "")
	editor := e.login(e.user("ed@example.com", "editor", "").Email)
	wantAdminsOnly(t, e, editor, []route{
		{"GET", "/api/admin/users"},
		{"POST", "/api/admin/users"},
		{"PATCH", "/api/admin/users/x"},
		{"POST", "/api/admin/users/x/unlock"},
		{"POST", "/api/admin/users/x/resend-invite"},
		{"GET", "/api/admin/departments"},
		{"POST", "/api/admin/departments"},
		{"PATCH", "/api/admin/departments/x"},
		{"DELETE", "/api/admin/departments/x"},
		{"GET", "/api/admin/projects"},
		{"POST", "/api/admin/projects"},
		{"PATCH", "/api/admin/projects/x"},
		{"DELETE", "/api/admin/projects/x"},
		{"PUT", "/api/admin/projects/x/members/y"},
		{"DELETE", "/api/admin/projects/x/members/y"},
		{"GET", "/api/admin/roles"},
		{"PUT", "/api/admin/roles/x"},
	})
}

type route struct{ method, path string }

// wantAdminsOnly checks that each of routes refuses the editor's token
// with FORBIDDEN, before it reads a body (one that would be invalid is
// sent), and a request without a token with UNAUTHORIZED.
func wantAdminsOnly(t *testing.T, e *env, editor string, routes []route) {
	for _, c := range routes {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			e := e.withT(t)
			e.wantError(e.do(c.method, c.path, bearer(editor), rawBody("{"), header("Content-Type", "application/json")),
				http.StatusForbidden, quire.EFORBIDDEN)
			e.wantError(e.do(c.method, c.path), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		})
	}
}

func TestAdminUsers(t *testing.T) {
	t.Parallel()
	e, root, admin := newEnvWithRoot(t, withAuthConfig(func(c *auth.Config) { c.Limits.LockThreshold = 2 }))
	sales, err := e.store.CreateDepartment(context.Background(), "Sales")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the list shows status, lock, second factor and last sign-in", func(t *testing.T) {
		e := e.withT(t)
		e.user("locked@example.com", "viewer", "")
		for range 2 {
			e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": "locked@example.com", "password": "wrong password"}))
		}
		users := adminUsers(t, e, admin)
		if u := users["root@example.com"]; u.Status != "active" || u.Locked || u.MFA || u.LastLoginAt == nil {
			t.Errorf("root = %+v", u)
		}
		if u := users["locked@example.com"]; !u.Locked || u.LastLoginAt != nil {
			t.Errorf("locked = %+v", u)
		}
		r := e.do("POST", "/api/admin/users/"+users["locked@example.com"].ID+"/unlock", bearer(admin))
		if got := message(t, r); got != "User unlocked" {
			t.Errorf("message %q", got)
		}
		if adminUsers(t, e, admin)["locked@example.com"].Locked {
			t.Error("still locked after unlock")
		}
		e.wantError(e.do("POST", "/api/admin/users/"+unknownUserID+"/unlock", bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
	})

	var invited adminUser
	t.Run("an invitation creates an invited user and mails the setup link", func(t *testing.T) {
		e := e.withT(t)
		r := e.do("POST", "/api/admin/users", bearer(admin), jsonBody(map[string]any{
			"email": " New@Example.com ", "name": "New Person", "role": "viewer", "departmentId": sales.ID}))
		if r.Status != http.StatusCreated {
			t.Fatalf("invite: %d %s", r.Status, r.Body)
		}
		var body struct{ User adminUser }
		r.decode(t, &body)
		invited = body.User
		want := adminUser{ID: invited.ID, Email: "new@example.com", Name: "New Person", Role: "viewer",
			DepartmentID: &sales.ID, Status: "invited"}
		if diff := cmp.Diff(want, invited); diff != "" {
			t.Errorf("user (-want +got):\n%s", diff)
		}
		if links := queuedLinks(t, e, "new@example.com", "setup-password"); len(links) != 1 {
			t.Fatalf("%d setup links mailed, want 1", len(links))
		}
	})

	t.Run("an invitation is refused for an email taken, or fields missing or unknown", func(t *testing.T) {
		e := e.withT(t)
		for _, tc := range []struct {
			body   map[string]any
			fields map[string]any
		}{
			{map[string]any{"email": "new@example.com", "name": "Again", "role": "viewer"}, map[string]any{"email": "is already taken"}},
			{map[string]any{}, map[string]any{"email": "is required", "name": "is required", "role": "is required"}},
			{map[string]any{"email": "nope", "name": "", "role": "boss"},
				map[string]any{"email": "must be an email address", "name": "must be 1 to 200 characters", "role": "is not a known role"}},
			{map[string]any{"email": "x@example.com", "name": "X", "role": "viewer", "departmentId": "nowhere"},
				map[string]any{"departmentId": "is not a known department"}},
		} {
			body := e.wantError(e.do("POST", "/api/admin/users", bearer(admin), jsonBody(tc.body)), http.StatusBadRequest, quire.EVALIDATION)
			if diff := cmp.Diff(tc.fields, body["fields"]); diff != "" {
				t.Errorf("%v: fields (-want +got):\n%s", tc.body, diff)
			}
		}
	})

	t.Run("resending an invitation voids the earlier link; only an invited user gets one", func(t *testing.T) {
		e := e.withT(t)
		first, _ := invite(t, e, "twice@example.com")
		old := queuedLinks(t, e, "twice@example.com", "setup-password")
		if len(old) != 1 {
			t.Fatalf("%d links", len(old))
		}
		r := e.do("POST", "/api/admin/users/"+first.ID+"/resend-invite", bearer(admin))
		if got := message(t, r); got != "Invitation sent again" {
			t.Errorf("message %q", got)
		}
		fresh := queuedLinks(t, e, "twice@example.com", "setup-password")
		if len(fresh) != 1 {
			t.Fatalf("%d new links", len(fresh))
		}
		e.wantError(e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tokenOf(t, old[0]), "password": newPassword})),
			http.StatusBadRequest, quire.EINVALIDTOKEN)
		if got := message(t, e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tokenOf(t, fresh[0]), "password": newPassword}))); got != "Password set" {
			t.Errorf("setup: %q", got)
		}
		e.wantError(e.do("POST", "/api/admin/users/"+first.ID+"/resend-invite", bearer(admin)), http.StatusConflict, quire.ENOTINVITED)
		e.wantError(e.do("POST", "/api/admin/users/"+unknownUserID+"/resend-invite", bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
	})

	t.Run("a change sets name, role and department, and null clears the department", func(t *testing.T) {
		e := e.withT(t)
		patch := func(body map[string]any) adminUser {
			t.Helper()
			r := e.do("PATCH", "/api/admin/users/"+invited.ID, bearer(admin), jsonBody(body))
			if r.Status != http.StatusOK {
				t.Fatalf("patch %v: %d %s", body, r.Status, r.Body)
			}
			var out struct{ User adminUser }
			r.decode(t, &out)
			return out.User
		}
		u := patch(map[string]any{"name": " Renamed ", "role": "editor"})
		if u.Name != "Renamed" || u.Role != "editor" || u.DepartmentID == nil {
			t.Errorf("after change: %+v", u)
		}
		if u := patch(map[string]any{"departmentId": nil}); u.DepartmentID != nil {
			t.Errorf("department not cleared: %+v", u)
		}
		body := e.wantError(e.do("PATCH", "/api/admin/users/"+invited.ID, bearer(admin),
			jsonBody(map[string]any{"name": "", "role": "boss", "departmentId": 5, "disabled": nil})), http.StatusBadRequest, quire.EVALIDATION)
		want := map[string]any{"departmentId": "must be a string or null", "disabled": "must be a boolean"}
		if diff := cmp.Diff(want, body["fields"]); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
		body = e.wantError(e.do("PATCH", "/api/admin/users/"+invited.ID, bearer(admin),
			jsonBody(map[string]any{"name": "", "role": "boss", "departmentId": "nowhere"})), http.StatusBadRequest, quire.EVALIDATION)
		want = map[string]any{"name": "must be 1 to 200 characters", "role": "is not a known role", "departmentId": "is not a known department"}
		if diff := cmp.Diff(want, body["fields"]); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
		e.wantError(e.do("PATCH", "/api/admin/users/"+unknownUserID, bearer(admin), jsonBody(map[string]any{"name": "X"})),
			http.StatusNotFound, quire.ENOTFOUND)
	})

	t.Run("disabling revokes the user's sessions at once, enabling lets it sign in again", func(t *testing.T) {
		e := e.withT(t)
		u := e.user("gone@example.com", "editor", "")
		token := e.login(u.Email)
		r := e.do("PATCH", "/api/admin/users/"+u.ID, bearer(admin), jsonBody(map[string]any{"disabled": true}))
		if r.Status != http.StatusOK {
			t.Fatalf("disable: %d %s", r.Status, r.Body)
		}
		if got := adminUsers(t, e, admin)["gone@example.com"].Status; got != "disabled" {
			t.Errorf("status %q", got)
		}
		e.wantError(e.do("GET", "/api/auth/me", bearer(token)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		r = e.do("PATCH", "/api/admin/users/"+u.ID, bearer(admin), jsonBody(map[string]any{"disabled": false}))
		if r.Status != http.StatusOK {
			t.Fatalf("enable: %d %s", r.Status, r.Body)
		}
		e.login(u.Email)
	})

	t.Run("the last active administrator can be neither demoted nor disabled", func(t *testing.T) {
		e := e.withT(t)
		for _, body := range []map[string]any{{"role": "editor"}, {"disabled": true}, {"role": "editor", "name": "Not applied"}} {
			e.wantError(e.do("PATCH", "/api/admin/users/"+root.ID, bearer(admin), jsonBody(body)), http.StatusConflict, quire.ELASTADMIN)
		}
		if u := adminUsers(t, e, admin)["root@example.com"]; u.Role != "admin" || u.Name != root.Name || u.Status != "active" {
			t.Errorf("root changed: %+v", u)
		}
		e.wantError(e.do("PUT", "/api/admin/roles/admin", bearer(admin), jsonBody(map[string]any{"label": "Administrator", "docs": "write"})),
			http.StatusConflict, quire.ELASTADMIN)
	})
}

const unknownUserID = "0190b2a4-0000-7000-8000-000000000000"

func TestAdminDepartmentsAndProjects(t *testing.T) {
	t.Parallel()
	e, admin := newSignedIn(t, "admin", "root@example.com")
	ed := e.user("ed@example.com", "editor", "")

	t.Run("departments are created, renamed, listed, and deleted only when unused", func(t *testing.T) {
		e := e.withT(t)
		r := e.do("POST", "/api/admin/departments", bearer(admin), jsonBody(map[string]any{"name": " Sales "}))
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var body struct{ Department struct{ ID, Name string } }
		r.decode(t, &body)
		d := body.Department
		if d.Name != "Sales" {
			t.Errorf("name %q", d.Name)
		}
		b := e.wantError(e.do("POST", "/api/admin/departments", bearer(admin), jsonBody(map[string]any{"name": "Sales"})), http.StatusBadRequest, quire.EVALIDATION)
		if diff := cmp.Diff(map[string]any{"name": "is already taken"}, b["fields"]); diff != "" {
			t.Error(diff)
		}
		b = e.wantError(e.do("POST", "/api/admin/departments", bearer(admin), jsonBody(map[string]any{})), http.StatusBadRequest, quire.EVALIDATION)
		if diff := cmp.Diff(map[string]any{"name": "is required"}, b["fields"]); diff != "" {
			t.Error(diff)
		}
		r = e.do("PATCH", "/api/admin/departments/"+d.ID, bearer(admin), jsonBody(map[string]any{"name": "Field sales"}))
		if r.Status != http.StatusOK {
			t.Fatalf("rename: %d %s", r.Status, r.Body)
		}
		e.wantError(e.do("PATCH", "/api/admin/departments/"+unknownUserID, bearer(admin), jsonBody(map[string]any{"name": "X"})), http.StatusNotFound, quire.ENOTFOUND)
		r = e.do("GET", "/api/admin/departments", bearer(admin))
		var list struct{ Departments []struct{ ID, Name string } }
		r.decode(t, &list)
		if len(list.Departments) != 1 || list.Departments[0].Name != "Field sales" {
			t.Errorf("departments %+v", list.Departments)
		}
		if r := e.do("PATCH", "/api/admin/users/"+ed.ID, bearer(admin), jsonBody(map[string]any{"departmentId": d.ID})); r.Status != http.StatusOK {
			t.Fatalf("set department: %d %s", r.Status, r.Body)
		}
		e.wantError(e.do("DELETE", "/api/admin/departments/"+d.ID, bearer(admin)), http.StatusConflict, quire.EINUSE)
		e.do("PATCH", "/api/admin/users/"+ed.ID, bearer(admin), jsonBody(map[string]any{"departmentId": nil}))
		if got := message(t, e.do("DELETE", "/api/admin/departments/"+d.ID, bearer(admin))); got != "Department deleted" {
			t.Errorf("message %q", got)
		}
		e.wantError(e.do("DELETE", "/api/admin/departments/"+d.ID, bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
	})

	t.Run("projects and their members take effect on the next request", func(t *testing.T) {
		e := e.withT(t)
		r := e.do("POST", "/api/admin/projects", bearer(admin), jsonBody(map[string]any{"name": "Apollo"}))
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var body struct {
			Project struct {
				ID, Name string
				Members  []string
			}
		}
		r.decode(t, &body)
		p := body.Project
		if got := message(t, e.do("PUT", "/api/admin/projects/"+p.ID+"/members/"+ed.ID, bearer(admin))); got != "Member added" {
			t.Errorf("message %q", got)
		}
		e.wantError(e.do("PUT", "/api/admin/projects/"+p.ID+"/members/"+unknownUserID, bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("PUT", "/api/admin/projects/"+unknownUserID+"/members/"+ed.ID, bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
		r = e.do("GET", "/api/admin/projects", bearer(admin))
		var list struct {
			Projects []struct {
				ID, Name string
				Members  []string
			}
		}
		r.decode(t, &list)
		if len(list.Projects) != 1 || !cmp.Equal(list.Projects[0].Members, []string{ed.ID}) {
			t.Errorf("projects %+v", list.Projects)
		}
		// The editor may file a document in the project at once.
		edToken := e.login(ed.Email)
		doc := map[string]any{"title": "Plan", "content": "x", "visibility": "project", "project_id": p.ID}
		r = e.do("POST", "/api/documentation/documents", bearer(edToken), jsonBody(doc))
		if r.Status != http.StatusCreated {
			t.Fatalf("create document: %d %s", r.Status, r.Body)
		}
		e.wantError(e.do("DELETE", "/api/admin/projects/"+p.ID, bearer(admin)), http.StatusConflict, quire.EINUSE)
		if got := message(t, e.do("DELETE", "/api/admin/projects/"+p.ID+"/members/"+ed.ID, bearer(admin))); got != "Member removed" {
			t.Errorf("message %q", got)
		}
		e.wantError(e.do("POST", "/api/documentation/documents", bearer(edToken), jsonBody(doc)), http.StatusBadRequest, quire.EVALIDATION)
		e.wantError(e.do("DELETE", "/api/admin/projects/"+p.ID+"/members/"+unknownUserID, bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)

		r = e.do("PATCH", "/api/admin/projects/"+p.ID, bearer(admin), jsonBody(map[string]any{"name": "Zenith"}))
		if r.Status != http.StatusOK {
			t.Fatalf("rename: %d %s", r.Status, r.Body)
		}
		other := e.do("POST", "/api/admin/projects", bearer(admin), jsonBody(map[string]any{"name": "Borealis"}))
		r.decode(t, &body)
		other.decode(t, &body)
		e.wantError(e.do("PATCH", "/api/admin/projects/"+body.Project.ID, bearer(admin), jsonBody(map[string]any{"name": "Zenith"})), http.StatusBadRequest, quire.EVALIDATION)
		if got := message(t, e.do("DELETE", "/api/admin/projects/"+body.Project.ID, bearer(admin))); got != "Project deleted" {
			t.Errorf("message %q", got)
		}
		e.wantError(e.do("DELETE", "/api/admin/projects/"+body.Project.ID, bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("PATCH", "/api/admin/projects/"+body.Project.ID, bearer(admin), jsonBody(map[string]any{"name": "X"})), http.StatusNotFound, quire.ENOTFOUND)
	})
}

func TestAdminRoles(t *testing.T) {
	t.Parallel()
	e, admin := newSignedIn(t, "admin", "root@example.com")
	r := e.do("PUT", "/api/admin/roles/auditor", bearer(admin), jsonBody(map[string]any{"label": "Auditor", "docs": "view", "requireMfa": true}))
	if r.Status != http.StatusOK {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	r = e.do("GET", "/api/admin/roles", bearer(admin))
	var body struct {
		Roles []struct {
			Key, Label, Docs  string
			Admin, RequireMfa bool
		}
	}
	r.decode(t, &body)
	var keys []string
	for _, role := range body.Roles {
		keys = append(keys, role.Key)
		if role.Key == "auditor" && (role.Docs != "view" || role.Admin || !role.RequireMfa || role.Label != "Auditor") {
			t.Errorf("auditor = %+v", role)
		}
	}
	if diff := cmp.Diff([]string{"admin", "auditor", "editor", "guest", "viewer"}, keys); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	b := e.wantError(e.do("PUT", "/api/admin/roles/auditor", bearer(admin), jsonBody(map[string]any{"docs": "all"})), http.StatusBadRequest, quire.EVALIDATION)
	if diff := cmp.Diff(map[string]any{"label": "is required", "docs": "must be none, view or write"}, b["fields"]); diff != "" {
		t.Error(diff)
	}
}

func TestAdminActsAreAuditEvents(t *testing.T) {
	t.Parallel()
	e, root, admin := newEnvWithRoot(t)
	ed := e.user("ed@example.com", "editor", "")
	n := 0
	act := func(method, path string, body any) []byte {
		t.Helper()
		n++
		opts := []reqOpt{bearer(admin), header("X-Request-Id", fmt.Sprintf("req-admin-%02d", n)), fromAddr("127.0.0.7")}
		if body != nil {
			opts = append(opts, jsonBody(body))
		}
		r := e.do(method, path, opts...)
		if r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r.Body
	}
	var created struct {
		User       struct{ ID string }
		Department struct{ ID string }
		Project    struct{ ID string }
	}
	json.Unmarshal(act("POST", "/api/admin/users", map[string]any{"email": "new@example.com", "name": "New", "role": "viewer"}), &created)
	act("POST", "/api/admin/users/"+created.User.ID+"/resend-invite", nil)
	act("PATCH", "/api/admin/users/"+ed.ID, map[string]any{"name": "Eddie", "role": "viewer", "disabled": true})
	act("PATCH", "/api/admin/users/"+ed.ID, map[string]any{"disabled": false})
	act("POST", "/api/admin/users/"+ed.ID+"/unlock", nil)
	json.Unmarshal(act("POST", "/api/admin/departments", map[string]any{"name": "Sales"}), &created)
	act("PATCH", "/api/admin/departments/"+created.Department.ID, map[string]any{"name": "Field sales"})
	act("DELETE", "/api/admin/departments/"+created.Department.ID, nil)
	json.Unmarshal(act("POST", "/api/admin/projects", map[string]any{"name": "Apollo"}), &created)
	act("PATCH", "/api/admin/projects/"+created.Project.ID, map[string]any{"name": "Zenith"})
	act("PUT", "/api/admin/projects/"+created.Project.ID+"/members/"+ed.ID, nil)
	act("DELETE", "/api/admin/projects/"+created.Project.ID+"/members/"+ed.ID, nil)
	act("DELETE", "/api/admin/projects/"+created.Project.ID, nil)
	act("PUT", "/api/admin/roles/auditor", map[string]any{"label": "Auditor", "docs": "view"})
	// A refused act records nothing.
	e.wantError(e.do("PATCH", "/api/admin/users/"+root.ID, bearer(admin), jsonBody(map[string]any{"role": "editor"})), http.StatusConflict, quire.ELASTADMIN)

	evs, err := e.store.AuditEvents(context.Background(), quire.AuditFilter{ActorID: root.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Action, Target, RequestID, IP string }
	var got []row
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Action == quire.ActionLogin {
			continue
		}
		target := ""
		if ev.Target != nil {
			target = ev.Target.Type + ":" + ev.Target.Name
		}
		got = append(got, row{ev.Action, target, ev.RequestID, ev.IP})
	}
	r := func(action, target string, n int) row {
		return row{action, target, fmt.Sprintf("req-admin-%02d", n), "127.0.0.7"}
	}
	want := []row{
		r("user.invited", "user:New", 1),
		r("user.invited", "user:New", 2),
		r("user.updated", "user:Ed", 3), // role
		r("user.disabled", "user:Ed", 3),
		r("user.updated", "user:Ed", 3), // name
		r("user.enabled", "user:Eddie", 4),
		r("user.unlocked", "user:Eddie", 5),
		r("department.created", "department:Sales", 6),
		r("department.updated", "department:Field sales", 7),
		r("department.deleted", "department:Field sales", 8),
		r("project.created", "project:Apollo", 9),
		r("project.updated", "project:Zenith", 10),
		r("project.member_added", "project:Zenith", 11),
		r("project.member_removed", "project:Zenith", 12),
		r("project.deleted", "project:Zenith", 13),
		r("role.updated", "role:Auditor", 14),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
