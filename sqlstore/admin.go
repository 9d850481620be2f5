package sqlstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"quire"
)

// The administration's reads and writes (product.md section 9):
// departments, projects and their members, and the admin's view of users.

func (s *Store) AdminUsers(ctx context.Context, now time.Time) ([]quire.AdminUser, error) {
	return s.adminUsers(ctx, now, "")
}

func (s *Store) AdminUser(ctx context.Context, now time.Time, id string) (*quire.AdminUser, error) {
	if id == "" || HasNUL(id) {
		return nil, NotFound("user")
	}
	users, err := s.adminUsers(ctx, now, id)
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, NotFound("user")
	}
	return &users[0], nil
}

// adminUsers reads every user, or only the user id when id is not "".
func (s *Store) adminUsers(ctx context.Context, now time.Time, id string) ([]quire.AdminUser, error) {
	where, args := "", []any{s.d.Time(now)}
	if id != "" {
		where, args = "WHERE u.id = ?", append(args, id)
	}
	users, err := Collect(ctx, s.e.Read(), func(scan func(dest ...any) error) (quire.AdminUser, error) {
		var au quire.AdminUser
		u, err := scanUser(func(dest ...any) error { return scan(append(dest, &au.Locked, T(&au.LastLoginAt), &au.MFA)...) })
		if err != nil {
			return au, err
		}
		au.User = *u
		return au, nil
	}, `SELECT `+userColumns+`,
		EXISTS (SELECT 1 FROM login_locks l WHERE l.email = u.email AND l.locked_until > ?),
		(SELECT max(s.created_at) FROM sessions s WHERE s.user_id = u.id),
		(EXISTS (SELECT 1 FROM mfa_totp f WHERE f.user_id = u.id AND `+s.d.Some("f.confirmed_at")+`)
			OR EXISTS (SELECT 1 FROM passkeys pk WHERE pk.user_id = u.id))
		FROM users u `+userJoins+` `+where+` ORDER BY `+s.d.byCodePoint("u.email"), args...)
	return users, s.e.Fail(ctx, "list users", err)
}

func (s *Store) SetUserName(ctx context.Context, userID, name string) error {
	if err := NoNUL(map[string]string{"name": name}); err != nil {
		return err
	}
	return s.updateUser(ctx, "set user name", userID, `UPDATE users SET name = ?, updated_at = ? WHERE id = ?`,
		name, s.d.Time(WallClock()), userID)
}

func (s *Store) ResendInvite(ctx context.Context, t *quire.OneTimeToken, m *quire.Mail) error {
	if len(t.TokenHash) == 0 || m == nil || m.To == "" {
		return errors.New("resend invite: no token hash or no mail")
	}
	if HasNUL(t.UserID) {
		return NotFound("user")
	}
	tokenID, mailID := NewID(), ""
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		// The user's row lock orders this with a redemption of the old link
		// (RedeemToken locks it too); SQLite's one writer needs none.
		var status string
		err := q.QueryRow(ctx, `SELECT status FROM users WHERE id = ?`+s.d.Locked(" FOR NO KEY UPDATE"), t.UserID).Scan(&status)
		if err != nil {
			return Found(err, "user")
		}
		if quire.UserStatus(status) != quire.UserInvited {
			return quire.Errorf(quire.ENOTINVITED, "The user is not invited")
		}
		if _, err := q.Exec(ctx, `UPDATE one_time_tokens SET used_at = ?
			WHERE user_id = ? AND purpose = ? AND `+s.d.None("used_at"),
			s.d.Time(t.CreatedAt), t.UserID, string(quire.PurposeSetup)); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `INSERT INTO one_time_tokens
			(id, user_id, purpose, token_hash, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, `+s.d.NoTime+`)`,
			tokenID, t.UserID, string(t.Purpose), t.TokenHash, s.d.Time(t.CreatedAt), s.d.Time(t.ExpiresAt)); err != nil {
			return err
		}
		mailID, err = s.insertMail(ctx, q, m, "")
		return err
	})
	if err != nil {
		return s.e.Fail(ctx, "resend invite", err)
	}
	t.ID, m.ID = tokenID, mailID
	return nil
}

// EnsureDepartment returns EVALIDATION (field department) for an empty name.
// Names are compared exactly; the caller trims them. Of several writers
// ensuring the same new name at once, one inserts and all return its row:
// the INSERT waits for a concurrent one, and the SELECT after it (in
// PostgreSQL's READ COMMITTED a statement of its own snapshot) sees it.
func (s *Store) EnsureDepartment(ctx context.Context, name string) (*quire.Department, error) {
	if name == "" {
		return nil, quire.Invalid(map[string]string{"department": "is required"})
	}
	if err := NoNUL(map[string]string{"department": name}); err != nil {
		return nil, err
	}
	d := quire.Department{Name: name}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		n, err := q.Exec(ctx, `INSERT INTO departments (id, name) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, NewID(), name)
		if err != nil {
			return err
		}
		if n == 0 {
			quire.Unchanged(s.e.Events())
		}
		if err := q.QueryRow(ctx, `SELECT id FROM departments WHERE name = ?`, name).Scan(&d.ID); err != nil {
			return err
		}
		quire.NameCreated(s.e.Events(), d.ID)
		return nil
	})
	if err != nil {
		return nil, s.e.Fail(ctx, "ensure department", err)
	}
	return &d, nil
}

func scanDepartment(scan func(dest ...any) error) (quire.Department, error) {
	var d quire.Department
	err := scan(&d.ID, &d.Name)
	return d, err
}

func scanProject(scan func(dest ...any) error) (quire.Project, error) {
	var p quire.Project
	err := scan(&p.ID, &p.Name)
	return p, err
}

func (s *Store) Departments(ctx context.Context) ([]quire.Department, error) {
	ds, err := Collect(ctx, s.e.Read(), scanDepartment,
		`SELECT id, name FROM departments ORDER BY `+s.d.byCodePoint("name")+`, id`)
	return ds, s.e.Fail(ctx, "list departments", err)
}

// nameTaken is the conflict of a name that another department or project
// holds.
func nameTaken(what string) error {
	return &quire.Error{Code: quire.ECONFLICT, Message: "A " + what + " with that name already exists",
		Fields: map[string]string{"name": "is already taken"}}
}

// createNamed inserts a department or a project (what, in table) named
// name and returns its new id, ECONFLICT when the name is taken.
func (s *Store) createNamed(ctx context.Context, table, what, name string) (string, error) {
	if err := NoNUL(map[string]string{"name": name}); err != nil {
		return "", err
	}
	id := NewID()
	quire.NameCreated(s.e.Events(), id)
	_, err := s.e.ExecOne(ctx, "", `INSERT INTO `+table+` (id, name) VALUES (?, ?)`, id, name)
	if s.d.IsUnique(err) {
		return "", nameTaken(what)
	}
	return id, s.e.Fail(ctx, "create "+what, err)
}

// rename renames the department or project id (what, in table): ENOTFOUND,
// ECONFLICT when the name is taken.
func (s *Store) rename(ctx context.Context, table, what, id, name string) error {
	if HasNUL(id) {
		return NotFound(what)
	}
	if err := NoNUL(map[string]string{"name": name}); err != nil {
		return err
	}
	_, err := s.e.ExecOne(ctx, what, `UPDATE `+table+` SET name = ? WHERE id = ?`, name, id)
	if s.d.IsUnique(err) {
		return nameTaken(what)
	}
	return s.e.Fail(ctx, "rename "+what, err)
}

// deleteUnused deletes the department or project id (what, in table):
// ENOTFOUND, IN_USE when used (a query of one boolean, with id bound to
// each of its placeholders) says something names it. It locks the row
// first where other writers run at the same time: an insert that names it
// (a user, a document) takes a key-share lock on it for its foreign key, so
// it waits for this delete, or this delete waits for it and then sees it.
// SQLite's one writer serialises the check and the delete with every such
// insert.
func (s *Store) deleteUnused(ctx context.Context, table, what, id, used string) error {
	if HasNUL(id) {
		return NotFound(what)
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+table+` WHERE id = ?`+s.d.ForUpdate+`) x`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return NotFound(what)
		}
		args := make([]any, strings.Count(used, "?"))
		for i := range args {
			args[i] = id
		}
		var inUse bool
		if err := q.QueryRow(ctx, used, args...).Scan(&inUse); err != nil {
			return err
		}
		if inUse {
			return quire.InUse(what)
		}
		_, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE id = ?`, id)
		if s.d.IsForeignKey(err) {
			return quire.InUse(what)
		}
		return err
	})
	return s.e.Fail(ctx, "delete "+what, err)
}

func (s *Store) CreateDepartment(ctx context.Context, name string) (*quire.Department, error) {
	id, err := s.createNamed(ctx, "departments", "department", name)
	if err != nil {
		return nil, err
	}
	return &quire.Department{ID: id, Name: name}, nil
}

func (s *Store) RenameDepartment(ctx context.Context, id, name string) (*quire.Department, error) {
	if err := s.rename(ctx, "departments", "department", id, name); err != nil {
		return nil, err
	}
	return &quire.Department{ID: id, Name: name}, nil
}

// DeleteDepartment refuses a department that a user or a document (the
// trash's included) names.
func (s *Store) DeleteDepartment(ctx context.Context, id string) error {
	return s.deleteUnused(ctx, "departments", "department", id, `SELECT
		EXISTS (SELECT 1 FROM users WHERE department_id = ?) OR EXISTS (SELECT 1 FROM documents WHERE department_id = ?)`)
}

// CreateProject returns EVALIDATION (field name) for an empty name and
// ECONFLICT when the name is taken.
func (s *Store) CreateProject(ctx context.Context, name string) (*quire.Project, error) {
	if name == "" {
		return nil, quire.Invalid(map[string]string{"name": "is required"})
	}
	id, err := s.createNamed(ctx, "projects", "project", name)
	if err != nil {
		return nil, err
	}
	return &quire.Project{ID: id, Name: name}, nil
}

// project reads the project matched by where (a constant clause, "id = ?"
// or "name = ?") and arg, with its member IDs in ascending order, both from
// one snapshot. ENOTFOUND when there is none.
func (s *Store) project(ctx context.Context, where, arg string) (*quire.Project, error) {
	if HasNUL(arg) {
		return nil, NotFound("project")
	}
	var p quire.Project
	err := s.e.Snapshot(ctx, func(q Q) error {
		err := q.QueryRow(ctx, `SELECT id, name FROM projects WHERE `+where, arg).Scan(&p.ID, &p.Name)
		if err != nil {
			return Found(err, "project")
		}
		p.MemberIDs, err = Collect(ctx, q, func(scan func(dest ...any) error) (string, error) {
			var id string
			err := scan(&id)
			return id, err
		}, `SELECT user_id FROM project_members WHERE project_id = ? ORDER BY `+s.d.byCodePoint("user_id"), p.ID)
		return err
	})
	if err != nil {
		return nil, s.e.Fail(ctx, "read project", err)
	}
	return &p, nil
}

// ProjectByName returns the project with its member IDs in ascending order.
func (s *Store) ProjectByName(ctx context.Context, name string) (*quire.Project, error) {
	return s.project(ctx, "name = ?", name)
}

func (s *Store) ProjectByID(ctx context.Context, id string) (*quire.Project, error) {
	return s.project(ctx, "id = ?", id)
}

// Projects lists every project, or those memberID belongs to.
func (s *Store) Projects(ctx context.Context, memberID string) ([]quire.Project, error) {
	if HasNUL(memberID) {
		return nil, nil
	}
	ps, err := Collect(ctx, s.e.Read(), scanProject, `SELECT p.id, p.name FROM projects p
		WHERE ? = '' OR p.id IN (SELECT project_id FROM project_members WHERE user_id = ?)
		ORDER BY `+s.d.byCodePoint("p.name")+`, p.id`, memberID, memberID)
	return ps, s.e.Fail(ctx, "list projects", err)
}

func (s *Store) ProjectsWithMembers(ctx context.Context) ([]quire.Project, error) {
	var ps []quire.Project
	err := s.e.Snapshot(ctx, func(q Q) (err error) {
		ps, err = Collect(ctx, q, scanProject, `SELECT id, name FROM projects ORDER BY `+s.d.byCodePoint("name")+`, id`)
		if err != nil {
			return err
		}
		index := make(map[string]int, len(ps))
		for i := range ps {
			index[ps[i].ID] = i
		}
		return Each(ctx, q, func(scan func(dest ...any) error) error {
			var pid, uid string
			if err := scan(&pid, &uid); err != nil {
				return err
			}
			if i, ok := index[pid]; ok {
				ps[i].MemberIDs = append(ps[i].MemberIDs, uid)
			}
			return nil
		}, `SELECT project_id, user_id FROM project_members ORDER BY project_id, `+s.d.byCodePoint("user_id"))
	})
	return ps, s.e.Fail(ctx, "list projects", err)
}

func (s *Store) RenameProject(ctx context.Context, id, name string) (*quire.Project, error) {
	if err := s.rename(ctx, "projects", "project", id, name); err != nil {
		return nil, err
	}
	return s.ProjectByID(ctx, id)
}

// DeleteProject refuses a project that a document (the trash's included)
// is filed in.
func (s *Store) DeleteProject(ctx context.Context, id string) error {
	return s.deleteUnused(ctx, "projects", "project", id, `SELECT EXISTS (SELECT 1 FROM documents WHERE project_id = ?)`)
}

// AddProjectMember returns ENOTFOUND when the project or the user does not
// exist.
func (s *Store) AddProjectMember(ctx context.Context, projectID, userID string) error {
	if HasNUL(projectID) {
		return NotFound("project")
	}
	if HasNUL(userID) {
		return NotFound("user")
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		var project, user bool
		err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?), EXISTS (SELECT 1 FROM users WHERE id = ?)`,
			projectID, userID).Scan(&project, &user)
		switch {
		case err != nil:
			return err
		case !project:
			return NotFound("project")
		case !user:
			return NotFound("user")
		}
		_, err = q.Exec(ctx, `INSERT INTO project_members (project_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING`,
			projectID, userID)
		if s.d.IsForeignKey(err) {
			// Users are never deleted; a project can be, on another
			// PostgreSQL node, between the check and the insert.
			return NotFound("project")
		}
		return err
	})
	return s.e.Fail(ctx, "add project member", err)
}

func (s *Store) RemoveProjectMember(ctx context.Context, projectID, userID string) error {
	if HasNUL(projectID) {
		return NotFound("project")
	}
	if HasNUL(userID) {
		userID = "" // no such member
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		var exists bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?)`, projectID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return NotFound("project")
		}
		_, err := q.Exec(ctx, `DELETE FROM project_members WHERE project_id = ? AND user_id = ?`, projectID, userID)
		return err
	})
	return s.e.Fail(ctx, "remove project member", err)
}

func (s *Store) IsProjectMember(ctx context.Context, projectID, userID string) (bool, error) {
	if HasNUL(projectID) {
		return false, NotFound("project")
	}
	if HasNUL(userID) {
		userID = "" // no such member
	}
	var exists, member bool
	err := s.e.Read().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?),
		EXISTS (SELECT 1 FROM project_members WHERE project_id = ? AND user_id = ?)`,
		projectID, projectID, userID).Scan(&exists, &member)
	if err != nil {
		return false, s.e.Fail(ctx, "check project member", err)
	}
	if !exists {
		return false, NotFound("project")
	}
	return member, nil
}
