package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.UserStore = (*DB)(nil)

// rowQuerier is what both *sql.DB and *sql.Tx offer, so that a user can be
// read from the read pool or inside a write transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// userColumns and userJoins read a user (alias u) with its role and
// department name; userSelect is the plain query. Queries append a constant
// WHERE or ORDER BY clause; values are always bound parameters.
const (
	userColumns = `u.id, u.email, u.name, u.role_key, r.label, r.docs_level, r.admin,
	COALESCE(u.department_id, ''), COALESCE(d.name, ''), u.timezone, u.status, u.password_hash,
	u.must_change_password, u.created_at, u.updated_at, r.require_mfa`
	userJoins = `JOIN roles r ON r.key = u.role_key
	LEFT JOIN departments d ON d.id = u.department_id`
	userSelect = `SELECT ` + userColumns + ` FROM users u ` + userJoins
)

func scanUser(scan func(dest ...any) error) (*quire.User, error) {
	var (
		u                    quire.User
		level, status        string
		admin                bool
		createdAt, updatedAt int64
	)
	err := scan(&u.ID, &u.Email, &u.Name, &u.Role.Key, &u.Role.Label, &level, &admin,
		&u.DepartmentID, &u.DepartmentName, &u.Timezone, &status, &u.PasswordHash, &u.MustChangePassword, &createdAt, &updatedAt, &u.Role.RequireMFA)
	if err != nil {
		return nil, err
	}
	lv, ok := quire.ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("role %s has unknown docs level %q", u.Role.Key, level)
	}
	u.Role.Docs, u.Role.Admin = lv, admin
	u.Status = quire.UserStatus(status)
	u.CreatedAt, u.UpdatedAt = fromMicros(createdAt), fromMicros(updatedAt)
	return &u, nil
}

// getUser reads the one user matched by where (a constant clause of this
// package, such as "u.id = ?") and arg. ENOTFOUND when there is none.
func getUser(ctx context.Context, q rowQuerier, where string, arg any) (*quire.User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, userSelect+" WHERE "+where, arg).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("user")
	}
	if err != nil {
		return nil, fmt.Errorf("read user: %w", err)
	}
	return u, nil
}

// wallClock is the time of writes whose interface passes no clock (creation and
// profile changes), at the stored precision.
func wallClock() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// checkRole returns EVALIDATION naming field when no role has key.
func checkRole(ctx context.Context, tx *sql.Tx, key, field string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM roles WHERE key = ?`, key).Scan(&n); err != nil {
		return fmt.Errorf("check role: %w", err)
	}
	if n == 0 {
		return quire.Invalid(map[string]string{field: "is not a known role"})
	}
	return nil
}

// checkDepartment returns EVALIDATION naming field when id is set and no
// department has it.
func checkDepartment(ctx context.Context, tx *sql.Tx, id, field string) error {
	if id == "" {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM departments WHERE id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("check department: %w", err)
	}
	if n == 0 {
		return quire.Invalid(map[string]string{field: "is not a known department"})
	}
	return nil
}

// CreateUser inserts u. An empty u.Status is taken as active when u has a
// password hash and invited otherwise.
func (db *DB) CreateUser(ctx context.Context, u *quire.User) error {
	return db.createUser(ctx, u, nil)
}

// createUser is CreateUser, running also (when not nil) with the new id in
// the same transaction after the insert (sso.go links an identity).
func (db *DB) createUser(ctx context.Context, u *quire.User, also func(ctx context.Context, tx *sql.Tx, id string) error) error {
	status := u.Status
	if status == "" {
		status = quire.UserInvited
		if u.PasswordHash != "" {
			status = quire.UserActive
		}
	}
	switch status {
	case quire.UserActive, quire.UserInvited, quire.UserDisabled:
	default:
		return quire.Invalid(map[string]string{"status": "is not an allowed value"})
	}
	if u.Email == "" {
		return quire.Invalid(map[string]string{"email": "is required"})
	}
	id, at := u.ID, wallClock()
	if id == "" {
		id = newID()
	}
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := checkRole(ctx, tx, u.Role.Key, "role"); err != nil {
			return err
		}
		if err := checkDepartment(ctx, tx, u.DepartmentID, "department"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO users
			(id, email, name, role_key, department_id, timezone, status, password_hash, must_change_password,
			created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, u.Email, u.Name, u.Role.Key, nullString(u.DepartmentID), u.Timezone, string(status), u.PasswordHash,
			u.MustChangePassword, toMicros(at), toMicros(at))
		if isUnique(err) {
			return &quire.Error{Code: quire.ECONFLICT, Message: "A user with that email already exists",
				Fields: map[string]string{"email": "is already taken"}}
		}
		if err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		if also != nil {
			return also(ctx, tx, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	u.ID, u.Status, u.CreatedAt, u.UpdatedAt = id, status, at, at
	return nil
}

func (db *DB) UserByID(ctx context.Context, id string) (*quire.User, error) {
	return getUser(ctx, db.read, "u.id = ?", id)
}

// UserByEmail compares exactly: the caller passes the normalised email.
func (db *DB) UserByEmail(ctx context.Context, email string) (*quire.User, error) {
	return getUser(ctx, db.read, "u.email = ?", email)
}

func (db *DB) ListUsers(ctx context.Context) ([]quire.User, error) {
	rows, err := db.read.QueryContext(ctx, userSelect+" ORDER BY u.email")
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var users []quire.User
	for rows.Next() {
		u, err := scanUser(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		users = append(users, *u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return users, nil
}

func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// updateUser runs one UPDATE of the user id (query's last parameter) and
// returns ENOTFOUND when it matched no row.
func updateUser(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	return updateOne(ctx, tx, "user", query, args...)
}

// leavesNoAdmin reports whether taking away the user userID, or every user
// of the role roleKey ("" names none), would leave no active user of an
// admin role where there is one now. The caller runs it in the write
// transaction of the change, before changing anything: the one writer
// serialises it with every other change.
func leavesNoAdmin(ctx context.Context, tx *sql.Tx, userID, roleKey string) (bool, error) {
	var affected, others bool
	err := tx.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM users u JOIN roles r ON r.key = u.role_key
			WHERE u.status = 'active' AND r.admin AND (u.id = ? OR u.role_key = ?)),
		EXISTS (SELECT 1 FROM users u JOIN roles r ON r.key = u.role_key
			WHERE u.status = 'active' AND r.admin AND u.id <> ? AND u.role_key <> ?)`,
		userID, roleKey, userID, roleKey).Scan(&affected, &others)
	if err != nil {
		return false, fmt.Errorf("count administrators: %w", err)
	}
	return affected && !others, nil
}

// guardLastAdmin returns LAST_ADMIN when leavesNoAdmin says so.
func guardLastAdmin(ctx context.Context, tx *sql.Tx, userID, roleKey string) error {
	last, err := leavesNoAdmin(ctx, tx, userID, roleKey)
	if err != nil {
		return err
	}
	if last {
		return quire.LastAdmin()
	}
	return nil
}

// SetUserRole returns ENOTFOUND for an unknown user, EVALIDATION (field
// role) for an unknown role, LAST_ADMIN when it would demote the last
// active administrator.
func (db *DB) SetUserRole(ctx context.Context, userID, roleKey string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := checkRole(ctx, tx, roleKey, "role"); err != nil {
			return err
		}
		var admin bool
		if err := tx.QueryRowContext(ctx, `SELECT admin FROM roles WHERE key = ?`, roleKey).Scan(&admin); err != nil {
			return fmt.Errorf("read role: %w", err)
		}
		if !admin {
			if err := guardLastAdmin(ctx, tx, userID, ""); err != nil {
				return err
			}
		}
		return updateUser(ctx, tx, `UPDATE users SET role_key = ?, updated_at = ? WHERE id = ?`,
			roleKey, toMicros(wallClock()), userID)
	})
}

// SetUserDepartment returns ENOTFOUND for an unknown user, EVALIDATION
// (field department) for an unknown department.
func (db *DB) SetUserDepartment(ctx context.Context, userID, departmentID string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := checkDepartment(ctx, tx, departmentID, "department"); err != nil {
			return err
		}
		return updateUser(ctx, tx, `UPDATE users SET department_id = ?, updated_at = ? WHERE id = ?`,
			nullString(departmentID), toMicros(wallClock()), userID)
	})
}

// SetUserTimezone returns ENOTFOUND for an unknown user. The caller checks
// that tz is an IANA zone name.
func (db *DB) SetUserTimezone(ctx context.Context, userID, tz string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateUser(ctx, tx, `UPDATE users SET timezone = ?, updated_at = ? WHERE id = ?`,
			tz, toMicros(wallClock()), userID)
	})
}

// DisableUser returns ENOTFOUND for an unknown user, LAST_ADMIN for the
// last active administrator.
func (db *DB) DisableUser(ctx context.Context, userID string, at time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := guardLastAdmin(ctx, tx, userID, ""); err != nil {
			return err
		}
		err := updateUser(ctx, tx, `UPDATE users SET status = 'disabled', updated_at = ? WHERE id = ?`,
			toMicros(at), userID)
		if err != nil {
			return err
		}
		if err := revokeSessions(ctx, tx, userID, "", at); err != nil {
			return err
		}
		return revokeAPITokens(ctx, tx, userID, at)
	})
}

// EnableUser makes a disabled user active, or invited when it has no
// password; any other user is left as it is. ENOTFOUND for an unknown user.
func (db *DB) EnableUser(ctx context.Context, userID string, at time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateUser(ctx, tx, `UPDATE users SET
			status = CASE WHEN status <> 'disabled' THEN status WHEN password_hash = '' THEN 'invited' ELSE 'active' END,
			updated_at = CASE WHEN status = 'disabled' THEN ? ELSE updated_at END
			WHERE id = ?`, toMicros(at), userID)
	})
}

// SetPassword stores hash and makes an invited user active. A disabled user
// stays disabled: a password change racing with DisableUser (the session
// was checked just before) must not undo the administrator's decision.
// Every unused one-time token of the user is marked used in the same
// transaction: a reset link asked for before the change must not undo it.
// ENOTFOUND for an unknown user.
func (db *DB) SetPassword(ctx context.Context, userID, hash string, at time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := updateUser(ctx, tx, `UPDATE users SET password_hash = ?, must_change_password = 0,
			status = CASE WHEN status = 'disabled' THEN 'disabled' ELSE 'active' END,
			updated_at = ? WHERE id = ?`, hash, toMicros(at), userID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE one_time_tokens SET used_at = ? WHERE user_id = ? AND used_at = 0`,
			toMicros(at), userID); err != nil {
			return fmt.Errorf("void tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mfa_tokens WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("void mfa tokens: %w", err)
		}
		return nil
	})
}

func (db *DB) ReplacePasswordHash(ctx context.Context, userID, oldHash, newHash string) error {
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?`,
			newHash, userID, oldHash)
		return err
	})
	if err != nil {
		return fmt.Errorf("replace password hash: %w", err)
	}
	return nil
}

func scanRole(scan func(dest ...any) error) (*quire.Role, error) {
	var (
		r     quire.Role
		level string
	)
	if err := scan(&r.Key, &r.Label, &level, &r.Admin, &r.RequireMFA); err != nil {
		return nil, err
	}
	lv, ok := quire.ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("role %s has unknown docs level %q", r.Key, level)
	}
	r.Docs = lv
	return &r, nil
}

func (db *DB) Roles(ctx context.Context) ([]quire.Role, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT key, label, docs_level, admin, require_mfa FROM roles ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	defer rows.Close()
	var roles []quire.Role
	for rows.Next() {
		r, err := scanRole(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list roles: %w", err)
		}
		roles = append(roles, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	return roles, nil
}

func (db *DB) Role(ctx context.Context, key string) (*quire.Role, error) {
	r, err := scanRole(db.read.QueryRowContext(ctx,
		`SELECT key, label, docs_level, admin, require_mfa FROM roles WHERE key = ?`, key).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("role")
	}
	if err != nil {
		return nil, fmt.Errorf("read role: %w", err)
	}
	return r, nil
}

// PutRole returns EVALIDATION for an empty key or label or a level outside
// none/view/write, LAST_ADMIN when it takes the admin mark off the role of
// the last active administrators.
func (db *DB) PutRole(ctx context.Context, r quire.Role) error {
	fields := map[string]string{}
	if r.Key == "" {
		fields["key"] = "is required"
	}
	if r.Label == "" {
		fields["label"] = "is required"
	}
	if r.Docs < quire.LevelNone || r.Docs > quire.LevelWrite {
		fields["docs"] = "must be none, view or write"
	}
	if len(fields) > 0 {
		return quire.Invalid(fields)
	}
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if !r.Admin {
			if err := guardLastAdmin(ctx, tx, "", r.Key); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO roles (key, label, docs_level, admin, require_mfa) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET label = excluded.label, docs_level = excluded.docs_level, admin = excluded.admin,
				require_mfa = excluded.require_mfa`,
			r.Key, r.Label, r.Docs.String(), r.Admin, r.RequireMFA)
		if err != nil {
			return fmt.Errorf("put role %s: %w", r.Key, err)
		}
		return nil
	})
}

// EnsureDepartment returns EVALIDATION (field department) for an empty name.
// Names are compared exactly; the caller trims them.
func (db *DB) EnsureDepartment(ctx context.Context, name string) (*quire.Department, error) {
	if name == "" {
		return nil, quire.Invalid(map[string]string{"department": "is required"})
	}
	d := quire.Department{Name: name}
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO departments (id, name) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
			newID(), name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			quire.Unchanged(db.events)
		}
		if err := tx.QueryRowContext(ctx, `SELECT id FROM departments WHERE name = ?`, name).Scan(&d.ID); err != nil {
			return err
		}
		quire.NameCreated(db.events, d.ID)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ensure department: %w", err)
	}
	return &d, nil
}

func (db *DB) Departments(ctx context.Context) ([]quire.Department, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name FROM departments ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list departments: %w", err)
	}
	defer rows.Close()
	var ds []quire.Department
	for rows.Next() {
		var d quire.Department
		if err := rows.Scan(&d.ID, &d.Name); err != nil {
			return nil, fmt.Errorf("list departments: %w", err)
		}
		ds = append(ds, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list departments: %w", err)
	}
	return ds, nil
}

// CreateProject returns EVALIDATION (field name) for an empty name and
// ECONFLICT when the name is taken.
func (db *DB) CreateProject(ctx context.Context, name string) (*quire.Project, error) {
	if name == "" {
		return nil, quire.Invalid(map[string]string{"name": "is required"})
	}
	p := quire.Project{ID: newID(), Name: name}
	quire.NameCreated(db.events, p.ID)
	_, err := db.exec(ctx, `INSERT INTO projects (id, name) VALUES (?, ?)`, p.ID, p.Name)
	if isUnique(err) {
		return nil, &quire.Error{Code: quire.ECONFLICT, Message: "A project with that name already exists",
			Fields: map[string]string{"name": "is already taken"}}
	}
	if err != nil {
		return nil, fmt.Errorf("create project: %w", db.noteWrite(err))
	}
	db.noteChange()
	return &p, nil
}

// ProjectByName returns the project with its member IDs in ascending order.
func (db *DB) ProjectByName(ctx context.Context, name string) (*quire.Project, error) {
	// One read transaction, so that the project and its members are one
	// snapshot.
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read project: %w", err)
	}
	defer tx.Rollback()
	p := quire.Project{Name: name}
	err = tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE name = ?`, name).Scan(&p.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("project")
	}
	if err != nil {
		return nil, fmt.Errorf("read project: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT user_id FROM project_members WHERE project_id = ? ORDER BY user_id`, p.ID)
	if err != nil {
		return nil, fmt.Errorf("read project members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read project members: %w", err)
		}
		p.MemberIDs = append(p.MemberIDs, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read project members: %w", err)
	}
	return &p, nil
}

// Projects lists every project, or those memberID belongs to.
func (db *DB) Projects(ctx context.Context, memberID string) ([]quire.Project, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT p.id, p.name FROM projects p
		WHERE ? = '' OR p.id IN (SELECT project_id FROM project_members WHERE user_id = ?)
		ORDER BY p.name, p.id`, memberID, memberID)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	var ps []quire.Project
	for rows.Next() {
		var p quire.Project
		if err := rows.Scan(&p.ID, &p.Name); err != nil {
			return nil, fmt.Errorf("list projects: %w", err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return ps, nil
}

// AddProjectMember returns ENOTFOUND when the project or the user does not
// exist.
func (db *DB) AddProjectMember(ctx context.Context, projectID, userID string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var projects, users int
		err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM projects WHERE id = ?), (SELECT count(*) FROM users WHERE id = ?)`,
			projectID, userID).Scan(&projects, &users)
		if err != nil {
			return fmt.Errorf("add project member: %w", err)
		}
		if projects == 0 {
			return notFound("project")
		}
		if users == 0 {
			return notFound("user")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO project_members (project_id, user_id) VALUES (?, ?)
			ON CONFLICT DO NOTHING`, projectID, userID); err != nil {
			return fmt.Errorf("add project member: %w", err)
		}
		return nil
	})
}

func (db *DB) IsProjectMember(ctx context.Context, projectID, userID string) (bool, error) {
	var projects int
	var member bool
	err := db.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM projects WHERE id = ?),
		EXISTS (SELECT 1 FROM project_members WHERE project_id = ? AND user_id = ?)`,
		projectID, projectID, userID).Scan(&projects, &member)
	if err != nil {
		return false, fmt.Errorf("check project member: %w", err)
	}
	if projects == 0 {
		return false, notFound("project")
	}
	return member, nil
}
