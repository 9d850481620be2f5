package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

// The administration's reads and writes (product.md section 9).

func (db *DB) AdminUsers(ctx context.Context, now time.Time) ([]quire.AdminUser, error) {
	return db.adminUsers(ctx, now, "")
}

func (db *DB) AdminUser(ctx context.Context, now time.Time, id string) (*quire.AdminUser, error) {
	if id == "" {
		return nil, notFound("user")
	}
	users, err := db.adminUsers(ctx, now, id)
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, notFound("user")
	}
	return &users[0], nil
}

// adminUsers reads every user, or only the user id when id is not "".
func (db *DB) adminUsers(ctx context.Context, now time.Time, id string) ([]quire.AdminUser, error) {
	where, args := "", []any{toMicros(now)}
	if id != "" {
		where, args = "WHERE u.id = ?", append(args, id)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+userColumns+`,
		EXISTS (SELECT 1 FROM login_locks l WHERE l.email = u.email AND l.locked_until > ?),
		COALESCE((SELECT max(s.created_at) FROM sessions s WHERE s.user_id = u.id), 0),
		`+hasSecondFactor+`
		FROM users u `+userJoins+` `+where+` ORDER BY u.email`, args...)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var users []quire.AdminUser
	for rows.Next() {
		var (
			locked, mfa bool
			last        int64
		)
		u, err := scanUser(func(dest ...any) error { return rows.Scan(append(dest, &locked, &last, &mfa)...) })
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		users = append(users, quire.AdminUser{User: *u, Locked: locked, LastLoginAt: fromMicros(last), MFA: mfa})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return users, nil
}

func (db *DB) SetUserName(ctx context.Context, userID, name string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateUser(ctx, tx, `UPDATE users SET name = ?, updated_at = ? WHERE id = ?`,
			name, toMicros(wallClock()), userID)
	})
}

func (db *DB) ResendInvite(ctx context.Context, t *quire.OneTimeToken, m *quire.Mail) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var status string
		err := tx.QueryRowContext(ctx, `SELECT status FROM users WHERE id = ?`, t.UserID).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("user")
		}
		if err != nil {
			return fmt.Errorf("resend invite: %w", err)
		}
		if quire.UserStatus(status) != quire.UserInvited {
			return quire.Errorf(quire.ENOTINVITED, "The user is not invited")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE one_time_tokens SET used_at = ?
			WHERE user_id = ? AND purpose = ? AND used_at = 0`,
			toMicros(t.CreatedAt), t.UserID, string(quire.PurposeSetup)); err != nil {
			return fmt.Errorf("void invitations: %w", err)
		}
		if err := insertToken(ctx, tx, t); err != nil {
			return err
		}
		return insertMail(ctx, tx, m)
	})
}

var (
	departmentTaken = &quire.Error{Code: quire.ECONFLICT, Message: "A department with that name already exists",
		Fields: map[string]string{"name": "is already taken"}}
	projectTaken = &quire.Error{Code: quire.ECONFLICT, Message: "A project with that name already exists",
		Fields: map[string]string{"name": "is already taken"}}
)

func (db *DB) CreateDepartment(ctx context.Context, name string) (*quire.Department, error) {
	d := quire.Department{ID: newID(), Name: name}
	quire.NameCreated(db.events, d.ID)
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO departments (id, name) VALUES (?, ?)`, d.ID, d.Name)
		if isUnique(err) {
			return departmentTaken
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create department: %w", err)
	}
	return &d, nil
}

func (db *DB) RenameDepartment(ctx context.Context, id, name string) (*quire.Department, error) {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := updateOne(ctx, tx, "department", `UPDATE departments SET name = ? WHERE id = ?`, name, id)
		if isUnique(errors.Unwrap(err)) {
			return departmentTaken
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &quire.Department{ID: id, Name: name}, nil
}

// DeleteDepartment checks and deletes in one write transaction: the one
// writer serialises it with every insert that could name the department.
func (db *DB) DeleteDepartment(ctx context.Context, id string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var exists, used bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM departments WHERE id = ?),
			EXISTS (SELECT 1 FROM users WHERE department_id = ?) OR EXISTS (SELECT 1 FROM documents WHERE department_id = ?)`,
			id, id, id).Scan(&exists, &used)
		if err != nil {
			return fmt.Errorf("delete department: %w", err)
		}
		if !exists {
			return notFound("department")
		}
		if used {
			return quire.InUse("department")
		}
		return updateOne(ctx, tx, "department", `DELETE FROM departments WHERE id = ?`, id)
	})
}

func (db *DB) ProjectsWithMembers(ctx context.Context) ([]quire.Project, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer tx.Rollback()
	ps, err := scanProjects(tx.QueryContext(ctx, `SELECT id, name FROM projects ORDER BY name, id`))
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	index := make(map[string]int, len(ps))
	for i := range ps {
		index[ps[i].ID] = i
	}
	rows, err := tx.QueryContext(ctx, `SELECT project_id, user_id FROM project_members ORDER BY project_id, user_id`)
	if err != nil {
		return nil, fmt.Errorf("list project members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid, uid string
		if err := rows.Scan(&pid, &uid); err != nil {
			return nil, fmt.Errorf("list project members: %w", err)
		}
		if i, ok := index[pid]; ok {
			ps[i].MemberIDs = append(ps[i].MemberIDs, uid)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list project members: %w", err)
	}
	return ps, nil
}

func scanProjects(rows *sql.Rows, err error) ([]quire.Project, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []quire.Project
	for rows.Next() {
		var p quire.Project
		if err := rows.Scan(&p.ID, &p.Name); err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

func (db *DB) ProjectByID(ctx context.Context, id string) (*quire.Project, error) {
	var name string
	err := db.read.QueryRowContext(ctx, `SELECT name FROM projects WHERE id = ?`, id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("project")
	}
	if err != nil {
		return nil, fmt.Errorf("read project: %w", err)
	}
	// ProjectByName reads the project and its members in one snapshot; a
	// rename in between is seen as the project gone.
	p, err := db.ProjectByName(ctx, name)
	if err == nil && p.ID != id {
		return nil, notFound("project")
	}
	return p, err
}

func (db *DB) RenameProject(ctx context.Context, id, name string) (*quire.Project, error) {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := updateOne(ctx, tx, "project", `UPDATE projects SET name = ? WHERE id = ?`, name, id)
		if isUnique(errors.Unwrap(err)) {
			return projectTaken
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.ProjectByID(ctx, id)
}

func (db *DB) DeleteProject(ctx context.Context, id string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var exists, used bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?),
			EXISTS (SELECT 1 FROM documents WHERE project_id = ?)`, id, id).Scan(&exists, &used)
		if err != nil {
			return fmt.Errorf("delete project: %w", err)
		}
		if !exists {
			return notFound("project")
		}
		if used {
			return quire.InUse("project")
		}
		return updateOne(ctx, tx, "project", `DELETE FROM projects WHERE id = ?`, id)
	})
}

func (db *DB) RemoveProjectMember(ctx context.Context, projectID, userID string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?)`, projectID).Scan(&exists); err != nil {
			return fmt.Errorf("remove project member: %w", err)
		}
		if !exists {
			return notFound("project")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM project_members WHERE project_id = ? AND user_id = ?`,
			projectID, userID); err != nil {
			return fmt.Errorf("remove project member: %w", err)
		}
		return nil
	})
}
