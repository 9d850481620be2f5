package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

// The administration's reads and writes (product.md section 9).

func (db *DB) AdminUsers(ctx context.Context, now time.Time) ([]quire.AdminUser, error) {
	return db.adminUsers(ctx, now, "")
}

func (db *DB) AdminUser(ctx context.Context, now time.Time, id string) (*quire.AdminUser, error) {
	if id == "" || hasNUL(id) {
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
	where, args := "", []any{micro(now)}
	if id != "" {
		where, args = "WHERE u.id = $2", append(args, id)
	}
	rows, err := db.pool.Query(ctx, `SELECT `+userColumns+`,
		EXISTS (SELECT 1 FROM login_locks l WHERE l.email = u.email AND l.locked_until > $1),
		(SELECT max(s.created_at) FROM sessions s WHERE s.user_id = u.id),
		`+hasSecondFactor+`
		FROM users u `+userJoins+` `+where+` ORDER BY u.email COLLATE "C"`, args...)
	if err != nil {
		return nil, db.fail(ctx, "list users", err)
	}
	users, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.AdminUser, error) {
		var (
			locked, mfa bool
			last        *time.Time
		)
		u, err := scanUser(func(dest ...any) error { return row.Scan(append(dest, &locked, &last, &mfa)...) })
		if err != nil {
			return quire.AdminUser{}, err
		}
		au := quire.AdminUser{User: *u, Locked: locked, MFA: mfa}
		if last != nil {
			au.LastLoginAt = last.UTC()
		}
		return au, nil
	})
	return users, db.fail(ctx, "list users", err)
}

func (db *DB) SetUserName(ctx context.Context, userID, name string) error {
	if err := noNUL(map[string]string{"name": name}); err != nil {
		return err
	}
	return db.updateUser(ctx, db.pool, userID, `UPDATE users SET name = $1, updated_at = $2 WHERE id = $3`,
		name, wallClock(), userID)
}

func (db *DB) ResendInvite(ctx context.Context, t *quire.OneTimeToken, m *quire.Mail) error {
	if len(t.TokenHash) == 0 || m == nil || m.To == "" {
		return errors.New("resend invite: no token hash or no mail")
	}
	if hasNUL(t.UserID) {
		return notFound("user")
	}
	tokenID, mailID := newID(), newID()
	err := db.tx(ctx, func(tx pgx.Tx) error {
		// The user's row lock orders this with a redemption of the old link
		// (RedeemToken locks it too).
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM users WHERE id = $1 FOR NO KEY UPDATE`, t.UserID).Scan(&status)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("user")
		}
		if err != nil {
			return err
		}
		if quire.UserStatus(status) != quire.UserInvited {
			return quire.Errorf(quire.ENOTINVITED, "The user is not invited")
		}
		if _, err := tx.Exec(ctx, `UPDATE one_time_tokens SET used_at = $1
			WHERE user_id = $2 AND purpose = $3 AND used_at IS NULL`,
			micro(t.CreatedAt), t.UserID, string(quire.PurposeSetup)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO one_time_tokens
			(id, user_id, purpose, token_hash, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, NULL)`,
			tokenID, t.UserID, string(t.Purpose), t.TokenHash, micro(t.CreatedAt), micro(t.ExpiresAt)); err != nil {
			return err
		}
		return insertMail(ctx, tx, mailID, m)
	})
	if err != nil {
		return db.fail(ctx, "resend invite", err)
	}
	t.ID, m.ID = tokenID, mailID
	return nil
}

var (
	departmentTaken = &quire.Error{Code: quire.ECONFLICT, Message: "A department with that name already exists",
		Fields: map[string]string{"name": "is already taken"}}
	projectTaken = &quire.Error{Code: quire.ECONFLICT, Message: "A project with that name already exists",
		Fields: map[string]string{"name": "is already taken"}}
)

func (db *DB) CreateDepartment(ctx context.Context, name string) (*quire.Department, error) {
	if err := noNUL(map[string]string{"name": name}); err != nil {
		return nil, err
	}
	d := quire.Department{ID: newID(), Name: name}
	quire.NameCreated(db.events, d.ID)
	_, err := db.exec(ctx, "", `INSERT INTO departments (id, name) VALUES ($1, $2)`, d.ID, d.Name)
	if code, _ := pgCode(err); code == codeUnique {
		return nil, departmentTaken
	}
	if err != nil {
		return nil, db.fail(ctx, "create department", err)
	}
	return &d, nil
}

func (db *DB) RenameDepartment(ctx context.Context, id, name string) (*quire.Department, error) {
	if hasNUL(id) {
		return nil, notFound("department")
	}
	if err := noNUL(map[string]string{"name": name}); err != nil {
		return nil, err
	}
	_, err := db.exec(ctx, "department", `UPDATE departments SET name = $1 WHERE id = $2`, name, id)
	if code, _ := pgCode(err); code == codeUnique {
		return nil, departmentTaken
	}
	if err != nil {
		return nil, db.fail(ctx, "rename department", err)
	}
	return &quire.Department{ID: id, Name: name}, nil
}

// DeleteDepartment locks the department's row first: an insert that names
// it (a user, a document) takes a key-share lock on it for its foreign key,
// so it waits for this delete, or this delete waits for it and then sees it.
func (db *DB) DeleteDepartment(ctx context.Context, id string) error {
	if hasNUL(id) {
		return notFound("department")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM departments WHERE id = $1 FOR UPDATE) d`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return notFound("department")
		}
		var used bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE department_id = $1)
			OR EXISTS (SELECT 1 FROM documents WHERE department_id = $1)`, id).Scan(&used)
		if err != nil {
			return err
		}
		if used {
			return quire.InUse("department")
		}
		_, err = tx.Exec(ctx, `DELETE FROM departments WHERE id = $1`, id)
		if code, _ := pgCode(err); code == codeForeignKey {
			return quire.InUse("department")
		}
		return err
	})
	return db.fail(ctx, "delete department", err)
}

func (db *DB) ProjectsWithMembers(ctx context.Context) ([]quire.Project, error) {
	var ps []quire.Project
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, name FROM projects ORDER BY name COLLATE "C", id`)
		if err != nil {
			return err
		}
		ps, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Project, error) {
			var p quire.Project
			err := row.Scan(&p.ID, &p.Name)
			return p, err
		})
		if err != nil {
			return err
		}
		index := make(map[string]int, len(ps))
		for i := range ps {
			index[ps[i].ID] = i
		}
		rows, err = tx.Query(ctx, `SELECT project_id, user_id FROM project_members ORDER BY project_id, user_id COLLATE "C"`)
		if err != nil {
			return err
		}
		var pid, uid string
		_, err = pgx.ForEachRow(rows, []any{&pid, &uid}, func() error {
			if i, ok := index[pid]; ok {
				ps[i].MemberIDs = append(ps[i].MemberIDs, uid)
			}
			return nil
		})
		return err
	})
	return ps, db.fail(ctx, "list projects", err)
}

func (db *DB) ProjectByID(ctx context.Context, id string) (*quire.Project, error) {
	if hasNUL(id) {
		return nil, notFound("project")
	}
	p := quire.Project{ID: id}
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT name FROM projects WHERE id = $1`, id).Scan(&p.Name)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("project")
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT user_id FROM project_members WHERE project_id = $1 ORDER BY user_id COLLATE "C"`, id)
		if err != nil {
			return err
		}
		p.MemberIDs, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if len(p.MemberIDs) == 0 {
			p.MemberIDs = nil
		}
		return err
	})
	if err != nil {
		return nil, db.fail(ctx, "read project", err)
	}
	return &p, nil
}

func (db *DB) RenameProject(ctx context.Context, id, name string) (*quire.Project, error) {
	if hasNUL(id) {
		return nil, notFound("project")
	}
	if err := noNUL(map[string]string{"name": name}); err != nil {
		return nil, err
	}
	_, err := db.exec(ctx, "project", `UPDATE projects SET name = $1 WHERE id = $2`, name, id)
	if code, _ := pgCode(err); code == codeUnique {
		return nil, projectTaken
	}
	if err != nil {
		return nil, db.fail(ctx, "rename project", err)
	}
	return db.ProjectByID(ctx, id)
}

// DeleteProject locks the project's row as DeleteDepartment does.
func (db *DB) DeleteProject(ctx context.Context, id string) error {
	if hasNUL(id) {
		return notFound("project")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM projects WHERE id = $1 FOR UPDATE) p`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return notFound("project")
		}
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM documents WHERE project_id = $1)`, id).Scan(&used); err != nil {
			return err
		}
		if used {
			return quire.InUse("project")
		}
		_, err := tx.Exec(ctx, `DELETE FROM projects WHERE id = $1`, id)
		if code, _ := pgCode(err); code == codeForeignKey {
			return quire.InUse("project")
		}
		return err
	})
	return db.fail(ctx, "delete project", err)
}

func (db *DB) RemoveProjectMember(ctx context.Context, projectID, userID string) error {
	if hasNUL(projectID) {
		return notFound("project")
	}
	if hasNUL(userID) {
		userID = ""
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $1)`, projectID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return notFound("project")
		}
		_, err := tx.Exec(ctx, `DELETE FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID)
		return err
	})
	return db.fail(ctx, "remove project member", err)
}
