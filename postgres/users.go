package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"quire"
)

var _ quire.UserStore = (*DB)(nil)

// userColumns and userJoins read a user (alias u) with its role and
// department name. Queries append a constant WHERE or ORDER BY clause;
// values are always bound parameters.
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
		u             quire.User
		level, status string
	)
	err := scan(&u.ID, &u.Email, &u.Name, &u.Role.Key, &u.Role.Label, &level, &u.Role.Admin,
		&u.DepartmentID, &u.DepartmentName, &u.Timezone, &status, &u.PasswordHash, &u.MustChangePassword, &u.CreatedAt, &u.UpdatedAt, &u.Role.RequireMFA)
	if err != nil {
		return nil, err
	}
	lv, ok := quire.ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("role %s has unknown docs level %q", u.Role.Key, level)
	}
	u.Role.Docs = lv
	u.Status = quire.UserStatus(status)
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return &u, nil
}

// getUser reads the one user matched by where (a constant clause such as
// "u.id = $1") and arg. ENOTFOUND when there is none.
func getUser(ctx context.Context, q querier, where string, arg string) (*quire.User, error) {
	if hasNUL(arg) {
		return nil, notFound("user")
	}
	u, err := scanUser(q.QueryRow(ctx, userSelect+" WHERE "+where, arg).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("user")
	}
	return u, err
}

// userRefFields names, for each foreign key of users, the field a caller
// sent it in.
var userRefFields = map[string]map[string]string{
	"users_role_fkey":       {"role": "is not a known role"},
	"users_department_fkey": {"department": "is not a known department"},
}

// CreateUser inserts u. An empty u.Status is taken as active when u has a
// password hash and invited otherwise.
func (db *DB) CreateUser(ctx context.Context, u *quire.User) error {
	return db.createUser(ctx, u, nil)
}

// createUser is CreateUser, running also (when not nil) with the new id in
// the same transaction after the insert (sso.go links an identity).
func (db *DB) createUser(ctx context.Context, u *quire.User, also func(tx pgx.Tx, id string) error) error {
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
	if err := noNUL(map[string]string{"email": u.Email, "name": u.Name, "timezone": u.Timezone}); err != nil {
		return err
	}
	if hasNUL(u.Role.Key) {
		return quire.Invalid(userRefFields["users_role_fkey"])
	}
	if hasNUL(u.DepartmentID) {
		return quire.Invalid(userRefFields["users_department_fkey"])
	}
	id, at := u.ID, wallClock()
	if id == "" {
		id = newID()
	}
	const insert = `INSERT INTO users
		(id, email, name, role_key, department_id, timezone, status, password_hash, must_change_password,
		created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`
	args := []any{id, u.Email, u.Name, u.Role.Key, nullString(u.DepartmentID), u.Timezone, string(status), u.PasswordHash,
		u.MustChangePassword, at}
	var err error
	if also == nil {
		_, err = db.exec(ctx, "", insert, args...)
	} else {
		err = db.tx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, insert, args...); err != nil {
				return err
			}
			return also(tx, id)
		})
	}
	switch code, constraint := pgCode(err); {
	case code == codeUnique:
		return &quire.Error{Code: quire.ECONFLICT, Message: "A user with that email already exists",
			Fields: map[string]string{"email": "is already taken"}}
	case code == codeForeignKey && userRefFields[constraint] != nil:
		return quire.Invalid(userRefFields[constraint])
	case err != nil:
		return db.fail(ctx, "create user", err)
	}
	u.ID, u.Status, u.CreatedAt, u.UpdatedAt = id, status, at, at
	return nil
}

func (db *DB) UserByID(ctx context.Context, id string) (*quire.User, error) {
	u, err := getUser(ctx, db.pool, "u.id = $1", id)
	return u, db.fail(ctx, "read user", err)
}

// UserByEmail compares exactly: the caller passes the normalised email.
func (db *DB) UserByEmail(ctx context.Context, email string) (*quire.User, error) {
	u, err := getUser(ctx, db.pool, "u.email = $1", email)
	return u, db.fail(ctx, "read user", err)
}

func (db *DB) ListUsers(ctx context.Context) ([]quire.User, error) {
	rows, err := db.pool.Query(ctx, userSelect+` ORDER BY u.email COLLATE "C"`)
	if err != nil {
		return nil, db.fail(ctx, "list users", err)
	}
	users, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.User, error) {
		u, err := scanUser(row.Scan)
		if err != nil {
			return quire.User{}, err
		}
		return *u, nil
	})
	return users, db.fail(ctx, "list users", err)
}

func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, db.fail(ctx, "count users", err)
}

// updateUser runs one UPDATE of a user and returns ENOTFOUND when it
// matched no row, EVALIDATION when it names an unknown role or department.
func (db *DB) updateUser(ctx context.Context, q querier, userID, query string, args ...any) error {
	if hasNUL(userID) {
		return notFound("user")
	}
	if pool, ok := q.(*pgxpool.Pool); ok && pool == db.pool && len(db.events) > 0 {
		// Events to record: the same statement in a transaction with them.
		return db.fail(ctx, "update user", db.tx(ctx, func(tx pgx.Tx) error {
			return db.updateUser(ctx, tx, userID, query, args...)
		}))
	}
	tag, err := q.Exec(ctx, query, args...)
	if code, constraint := pgCode(err); code == codeForeignKey && userRefFields[constraint] != nil {
		return quire.Invalid(userRefFields[constraint])
	}
	if err != nil {
		return db.fail(ctx, "update user", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("user")
	}
	return nil
}

// guardLastAdmin returns LAST_ADMIN when taking away the user userID, or
// every user of the role roleKey ("" names none), would leave no active user
// of an admin role where there is one now. It first takes the transaction
// lock lockAdmins, held until tx ends, which every such change takes: under
// READ COMMITTED two demotions of the last two administrators would each
// see the other still there; behind the lock the second sees the first's
// committed change.
func guardLastAdmin(ctx context.Context, tx pgx.Tx, userID, roleKey string) error {
	if err := xactLock(ctx, tx, lockAdmins, ""); err != nil {
		return err
	}
	var affected, others bool
	err := tx.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM users u JOIN roles r ON r.key = u.role_key
			WHERE u.status = 'active' AND r.admin AND (u.id = $1 OR u.role_key = $2)),
		EXISTS (SELECT 1 FROM users u JOIN roles r ON r.key = u.role_key
			WHERE u.status = 'active' AND r.admin AND u.id <> $1 AND u.role_key <> $2)`,
		userID, roleKey).Scan(&affected, &others)
	if err != nil {
		return err
	}
	if affected && !others {
		return quire.LastAdmin()
	}
	return nil
}

// SetUserRole returns ENOTFOUND for an unknown user, EVALIDATION (field
// role) for an unknown role, LAST_ADMIN when it would demote the last
// active administrator.
func (db *DB) SetUserRole(ctx context.Context, userID, roleKey string) error {
	if hasNUL(roleKey) {
		return quire.Invalid(userRefFields["users_role_fkey"])
	}
	if hasNUL(userID) {
		return notFound("user")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		// The lock first, so that the role's admin mark read next cannot
		// be changed by a PutRole before this change commits.
		if err := xactLock(ctx, tx, lockAdmins, ""); err != nil {
			return err
		}
		var admin bool
		err := tx.QueryRow(ctx, `SELECT admin FROM roles WHERE key = $1`, roleKey).Scan(&admin)
		if errors.Is(err, pgx.ErrNoRows) {
			return quire.Invalid(userRefFields["users_role_fkey"])
		}
		if err != nil {
			return err
		}
		if !admin {
			if err := guardLastAdmin(ctx, tx, userID, ""); err != nil {
				return err
			}
		}
		return db.updateUser(ctx, tx, userID, `UPDATE users SET role_key = $1, updated_at = $2 WHERE id = $3`,
			roleKey, wallClock(), userID)
	})
	return db.fail(ctx, "set user role", err)
}

// SetUserDepartment returns ENOTFOUND for an unknown user, EVALIDATION
// (field department) for an unknown department.
func (db *DB) SetUserDepartment(ctx context.Context, userID, departmentID string) error {
	if hasNUL(departmentID) {
		return quire.Invalid(userRefFields["users_department_fkey"])
	}
	return db.updateUser(ctx, db.pool, userID, `UPDATE users SET department_id = $1, updated_at = $2 WHERE id = $3`,
		nullString(departmentID), wallClock(), userID)
}

// SetUserTimezone returns ENOTFOUND for an unknown user. The caller checks
// that tz is an IANA zone name.
func (db *DB) SetUserTimezone(ctx context.Context, userID, tz string) error {
	if err := noNUL(map[string]string{"timezone": tz}); err != nil {
		return err
	}
	return db.updateUser(ctx, db.pool, userID, `UPDATE users SET timezone = $1, updated_at = $2 WHERE id = $3`,
		tz, wallClock(), userID)
}

// DisableUser returns ENOTFOUND for an unknown user, LAST_ADMIN for the
// last active administrator.
func (db *DB) DisableUser(ctx context.Context, userID string, at time.Time) error {
	if hasNUL(userID) {
		return notFound("user")
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := guardLastAdmin(ctx, tx, userID, ""); err != nil {
			return err
		}
		err := db.updateUser(ctx, tx, userID, `UPDATE users SET status = 'disabled', updated_at = $1 WHERE id = $2`,
			micro(at), userID)
		if err != nil {
			return err
		}
		if err := revokeSessions(ctx, tx, userID, "", at); err != nil {
			return err
		}
		return revokeAPITokens(ctx, tx, userID, at)
	})
	return db.fail(ctx, "disable user", err)
}

// EnableUser makes a disabled user active, or invited when it has no
// password; any other user is left as it is. ENOTFOUND for an unknown user.
func (db *DB) EnableUser(ctx context.Context, userID string, at time.Time) error {
	return db.updateUser(ctx, db.pool, userID, `UPDATE users SET
		status = CASE WHEN status <> 'disabled' THEN status WHEN password_hash = '' THEN 'invited' ELSE 'active' END,
		updated_at = CASE WHEN status = 'disabled' THEN $1 ELSE updated_at END
		WHERE id = $2`, micro(at), userID)
}

// SetPassword stores hash and makes an invited user active. A disabled user
// stays disabled: a password change racing with DisableUser (the session
// was checked just before) must not undo the administrator's decision.
// Every unused one-time token of the user is marked used in the same
// transaction: a reset link asked for before the change must not undo it.
// ENOTFOUND for an unknown user.
func (db *DB) SetPassword(ctx context.Context, userID, hash string, at time.Time) error {
	err := db.tx(ctx, func(tx pgx.Tx) error {
		err := db.updateUser(ctx, tx, userID, `UPDATE users SET password_hash = $1, must_change_password = false,
			status = CASE WHEN status = 'disabled' THEN 'disabled' ELSE 'active' END,
			updated_at = $2 WHERE id = $3`, hash, micro(at), userID)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE one_time_tokens SET used_at = $1 WHERE user_id = $2 AND used_at IS NULL`,
			micro(at), userID)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM mfa_tokens WHERE user_id = $1`, userID)
		return err
	})
	return db.fail(ctx, "set password", err)
}

func (db *DB) ReplacePasswordHash(ctx context.Context, userID, oldHash, newHash string) error {
	if hasNUL(userID, oldHash, newHash) {
		return nil // no stored value holds U+0000
	}
	_, err := db.pool.Exec(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2 AND password_hash = $3`,
		newHash, userID, oldHash)
	return db.fail(ctx, "replace password hash", err)
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
	rows, err := db.pool.Query(ctx, `SELECT key, label, docs_level, admin, require_mfa FROM roles ORDER BY key COLLATE "C"`)
	if err != nil {
		return nil, db.fail(ctx, "list roles", err)
	}
	roles, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Role, error) {
		r, err := scanRole(row.Scan)
		if err != nil {
			return quire.Role{}, err
		}
		return *r, nil
	})
	return roles, db.fail(ctx, "list roles", err)
}

func (db *DB) Role(ctx context.Context, key string) (*quire.Role, error) {
	if hasNUL(key) {
		return nil, notFound("role")
	}
	r, err := scanRole(db.pool.QueryRow(ctx, `SELECT key, label, docs_level, admin, require_mfa FROM roles WHERE key = $1`, key).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("role")
	}
	return r, db.fail(ctx, "read role", err)
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
	if err := noNUL(map[string]string{"key": r.Key, "label": r.Label}); err != nil {
		return err
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if !r.Admin {
			if err := guardLastAdmin(ctx, tx, "", r.Key); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO roles (key, label, docs_level, admin, require_mfa) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (key) DO UPDATE SET label = excluded.label, docs_level = excluded.docs_level, admin = excluded.admin,
				require_mfa = excluded.require_mfa`,
			r.Key, r.Label, r.Docs.String(), r.Admin, r.RequireMFA)
		return err
	})
	return db.fail(ctx, "put role "+r.Key, err)
}

// EnsureDepartment returns EVALIDATION (field department) for an empty name.
// Names are compared exactly; the caller trims them. Of several nodes
// ensuring the same new name at once, one inserts and all return its row.
func (db *DB) EnsureDepartment(ctx context.Context, name string) (*quire.Department, error) {
	if name == "" {
		return nil, quire.Invalid(map[string]string{"department": "is required"})
	}
	if err := noNUL(map[string]string{"department": name}); err != nil {
		return nil, err
	}
	d := quire.Department{Name: name}
	if len(db.events) > 0 {
		// In READ COMMITTED each statement of the transaction has a
		// snapshot of its own too.
		err := db.tx(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO departments (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
				newID(), name)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				quire.Unchanged(db.events)
			}
			if err := tx.QueryRow(ctx, `SELECT id FROM departments WHERE name = $1`, name).Scan(&d.ID); err != nil {
				return err
			}
			quire.NameCreated(db.events, d.ID)
			return nil
		})
		if err != nil {
			return nil, db.fail(ctx, "ensure department", err)
		}
		return &d, nil
	}
	// Two statements outside a transaction: the SELECT takes a snapshot of
	// its own, after the INSERT that waited for a concurrent one.
	if _, err := db.pool.Exec(ctx, `INSERT INTO departments (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		newID(), name); err != nil {
		return nil, db.fail(ctx, "ensure department", err)
	}
	err := db.pool.QueryRow(ctx, `SELECT id FROM departments WHERE name = $1`, name).Scan(&d.ID)
	if err != nil {
		return nil, db.fail(ctx, "ensure department", err)
	}
	return &d, nil
}

// Departments are ordered by name in code point order, as SQLite's BINARY
// collation does, whatever the database's collation.
func (db *DB) Departments(ctx context.Context) ([]quire.Department, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, name FROM departments ORDER BY name COLLATE "C", id`)
	if err != nil {
		return nil, db.fail(ctx, "list departments", err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Department, error) {
		var d quire.Department
		err := row.Scan(&d.ID, &d.Name)
		return d, err
	})
	return ds, db.fail(ctx, "list departments", err)
}

// Projects lists every project, or those memberID belongs to.
func (db *DB) Projects(ctx context.Context, memberID string) ([]quire.Project, error) {
	if hasNUL(memberID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT p.id, p.name FROM projects p
		WHERE $1 = '' OR p.id IN (SELECT project_id FROM project_members WHERE user_id = $1)
		ORDER BY p.name COLLATE "C", p.id`, memberID)
	if err != nil {
		return nil, db.fail(ctx, "list projects", err)
	}
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Project, error) {
		var p quire.Project
		err := row.Scan(&p.ID, &p.Name)
		return p, err
	})
	return ps, db.fail(ctx, "list projects", err)
}

// CreateProject returns EVALIDATION (field name) for an empty name and
// ECONFLICT when the name is taken.
func (db *DB) CreateProject(ctx context.Context, name string) (*quire.Project, error) {
	if name == "" {
		return nil, quire.Invalid(map[string]string{"name": "is required"})
	}
	if err := noNUL(map[string]string{"name": name}); err != nil {
		return nil, err
	}
	p := quire.Project{ID: newID(), Name: name}
	quire.NameCreated(db.events, p.ID)
	_, err := db.exec(ctx, "", `INSERT INTO projects (id, name) VALUES ($1, $2)`, p.ID, p.Name)
	if code, _ := pgCode(err); code == codeUnique {
		return nil, &quire.Error{Code: quire.ECONFLICT, Message: "A project with that name already exists",
			Fields: map[string]string{"name": "is already taken"}}
	}
	if err != nil {
		return nil, db.fail(ctx, "create project", err)
	}
	return &p, nil
}

// ProjectByName returns the project with its member IDs in ascending order,
// both from one snapshot.
func (db *DB) ProjectByName(ctx context.Context, name string) (*quire.Project, error) {
	if hasNUL(name) {
		return nil, notFound("project")
	}
	p := quire.Project{Name: name}
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT id FROM projects WHERE name = $1`, name).Scan(&p.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("project")
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT user_id FROM project_members WHERE project_id = $1 ORDER BY user_id COLLATE "C"`, p.ID)
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

// AddProjectMember returns ENOTFOUND when the project or the user does not
// exist.
func (db *DB) AddProjectMember(ctx context.Context, projectID, userID string) error {
	if hasNUL(projectID) {
		return notFound("project")
	}
	if hasNUL(userID) {
		return notFound("user")
	}
	_, err := db.exec(ctx, "", `INSERT INTO project_members (project_id, user_id) VALUES ($1, $2)
		ON CONFLICT DO NOTHING`, projectID, userID)
	switch code, constraint := pgCode(err); {
	case code == codeForeignKey && constraint == "project_members_project_fkey":
		return notFound("project")
	case code == codeForeignKey && constraint == "project_members_user_fkey":
		return notFound("user")
	}
	return db.fail(ctx, "add project member", err)
}

func (db *DB) IsProjectMember(ctx context.Context, projectID, userID string) (bool, error) {
	if hasNUL(projectID) {
		return false, notFound("project")
	}
	if hasNUL(userID) {
		userID = ""
	}
	var exists, member bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $1),
		EXISTS (SELECT 1 FROM project_members WHERE project_id = $1 AND user_id = $2)`,
		projectID, userID).Scan(&exists, &member)
	if err != nil {
		return false, db.fail(ctx, "check project member", err)
	}
	if !exists {
		return false, notFound("project")
	}
	return member, nil
}

const msgNUL = "must not contain the NUL character"

// noNUL refuses, as EVALIDATION naming each field, values that hold U+0000:
// a PostgreSQL text column cannot store it.
func noNUL(fields map[string]string) error {
	bad := map[string]string{}
	for field, v := range fields {
		if hasNUL(v) {
			bad[field] = msgNUL
		}
	}
	if len(bad) > 0 {
		return quire.Invalid(bad)
	}
	return nil
}
