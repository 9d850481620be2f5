package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.UserStore = (*Store)(nil)

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

// scanUser reads the columns of userColumns, after extra (the columns a
// query puts before them).
func scanUser(scan func(dest ...any) error, extra ...any) (*quire.User, error) {
	var (
		u             quire.User
		level, status string
	)
	dest := append(extra, &u.ID, &u.Email, &u.Name, &u.Role.Key, &u.Role.Label, &level, &u.Role.Admin,
		&u.DepartmentID, &u.DepartmentName, &u.Timezone, &status, &u.PasswordHash, &u.MustChangePassword,
		T(&u.CreatedAt), T(&u.UpdatedAt), &u.Role.RequireMFA)
	if err := scan(dest...); err != nil {
		return nil, err
	}
	lv, ok := quire.ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("role %s has unknown docs level %q", u.Role.Key, level)
	}
	u.Role.Docs = lv
	u.Status = quire.UserStatus(status)
	return &u, nil
}

// getUser reads the one user matched by where (a constant clause such as
// "u.id = ?") and arg. ENOTFOUND when there is none.
func getUser(ctx context.Context, q Q, where string, arg string) (*quire.User, error) {
	if HasNUL(arg) {
		return nil, NotFound("user")
	}
	u, err := scanUser(q.QueryRow(ctx, userSelect+" WHERE "+where, arg).Scan)
	return u, Found(err, "user")
}

func unknownRole() error { return quire.Invalid(map[string]string{"role": "is not a known role"}) }

func unknownDepartment() error {
	return quire.Invalid(map[string]string{"department": "is not a known department"})
}

// roleAdmin reads the admin mark of the role key: EVALIDATION (field role)
// when there is no such role.
func roleAdmin(ctx context.Context, q Q, key string) (bool, error) {
	if HasNUL(key) {
		return false, unknownRole()
	}
	var admin bool
	err := q.QueryRow(ctx, `SELECT admin FROM roles WHERE key = ?`, key).Scan(&admin)
	if errors.Is(err, ErrNoRows) {
		return false, unknownRole()
	}
	return admin, err
}

// CreateUser inserts u. An empty u.Status is taken as active when u has a
// password hash and invited otherwise.
func (s *Store) CreateUser(ctx context.Context, u *quire.User) error {
	return s.createUser(ctx, u, nil)
}

// createUser is CreateUser, running also (when not nil) with the new id in
// the same transaction after the insert (an SSO sign-up links its
// identity).
func (s *Store) createUser(ctx context.Context, u *quire.User, also func(ctx context.Context, q Q, id string) error) error {
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
	if err := NoNUL(map[string]string{"email": u.Email, "name": u.Name, "timezone": u.Timezone}); err != nil {
		return err
	}
	if HasNUL(u.DepartmentID) {
		return unknownDepartment()
	}
	id, at := u.ID, WallClock()
	if id == "" {
		id = NewID()
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		// Roles are never deleted: checked here, a foreign key the insert
		// breaks is the department's (on PostgreSQL, one deleted since the
		// caller read it, by another node too).
		if _, err := roleAdmin(ctx, q, u.Role.Key); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `INSERT INTO users
			(id, email, name, role_key, department_id, timezone, status, password_hash, must_change_password,
			created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, u.Email, u.Name, u.Role.Key, NullString(u.DepartmentID), u.Timezone, string(status), u.PasswordHash,
			u.MustChangePassword, s.d.Time(at), s.d.Time(at))
		switch {
		case s.d.IsUnique(err):
			return &quire.Error{Code: quire.ECONFLICT, Message: "A user with that email already exists",
				Fields: map[string]string{"email": "is already taken"}}
		case s.d.IsForeignKey(err):
			return unknownDepartment()
		case err != nil:
			return err
		case also != nil:
			return also(ctx, q, id)
		}
		return nil
	})
	if err != nil {
		return s.e.Fail(ctx, "create user", err)
	}
	u.ID, u.Status, u.CreatedAt, u.UpdatedAt = id, status, at, at
	return nil
}

func (s *Store) UserByID(ctx context.Context, id string) (*quire.User, error) {
	u, err := getUser(ctx, s.e.Read(), "u.id = ?", id)
	return u, s.e.Fail(ctx, "read user", err)
}

// UserByEmail compares exactly: the caller passes the normalised email.
func (s *Store) UserByEmail(ctx context.Context, email string) (*quire.User, error) {
	u, err := getUser(ctx, s.e.Read(), "u.email = ?", email)
	return u, s.e.Fail(ctx, "read user", err)
}

func (s *Store) ListUsers(ctx context.Context) ([]quire.User, error) {
	users, err := Collect(ctx, s.e.Read(), func(scan func(dest ...any) error) (quire.User, error) {
		u, err := scanUser(scan)
		if err != nil {
			return quire.User{}, err
		}
		return *u, nil
	}, userSelect+` ORDER BY `+s.d.byCodePoint("u.email"))
	return users, s.e.Fail(ctx, "list users", err)
}

func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.e.Read().QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, s.e.Fail(ctx, "count users", err)
}

// updateUser runs one UPDATE of the user userID (ENOTFOUND when there is
// none), for a recording store in a transaction with its events.
func (s *Store) updateUser(ctx context.Context, op, userID, query string, args ...any) error {
	if HasNUL(userID) {
		return NotFound("user")
	}
	_, err := s.e.ExecOne(ctx, "user", query, args...)
	if s.d.IsForeignKey(err) {
		return unknownDepartment() // the only reference an update of a user sets
	}
	return s.e.Fail(ctx, op, err)
}

// guardLastAdmin returns LAST_ADMIN when taking away the user userID, or
// every user of the role roleKey ("" names none), would leave no active user
// of an admin role where there is one now. The caller runs it in the write
// transaction of the change, before changing anything. It first takes the
// lock LockAdmins, held until the transaction ends, which every such change
// takes: under PostgreSQL's READ COMMITTED two demotions of the last two
// administrators would each see the other still there; behind the lock the
// second sees the first's committed change. SQLite's one writer serialises
// them without it.
func (s *Store) guardLastAdmin(ctx context.Context, q Q, userID, roleKey string) error {
	if err := s.d.Lock(ctx, q, LockAdmins, ""); err != nil {
		return err
	}
	var affected, others bool
	err := q.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM users u JOIN roles r ON r.key = u.role_key
			WHERE u.status = 'active' AND r.admin AND (u.id = ? OR u.role_key = ?)),
		EXISTS (SELECT 1 FROM users u JOIN roles r ON r.key = u.role_key
			WHERE u.status = 'active' AND r.admin AND u.id <> ? AND u.role_key <> ?)`,
		userID, roleKey, userID, roleKey).Scan(&affected, &others)
	if err != nil {
		return fmt.Errorf("count administrators: %w", err)
	}
	if affected && !others {
		return quire.LastAdmin()
	}
	return nil
}

// SetUserRole returns ENOTFOUND for an unknown user, EVALIDATION (field
// role) for an unknown role, LAST_ADMIN when it would demote the last
// active administrator.
func (s *Store) SetUserRole(ctx context.Context, userID, roleKey string) error {
	if HasNUL(roleKey) {
		return unknownRole()
	}
	if HasNUL(userID) {
		return NotFound("user")
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		// The lock first, so that the role's admin mark read next cannot
		// be changed by a PutRole before this change commits.
		if err := s.d.Lock(ctx, q, LockAdmins, ""); err != nil {
			return err
		}
		admin, err := roleAdmin(ctx, q, roleKey)
		if err != nil {
			return err
		}
		if !admin {
			if err := s.guardLastAdmin(ctx, q, userID, ""); err != nil {
				return err
			}
		}
		return One(ctx, q, "user", `UPDATE users SET role_key = ?, updated_at = ? WHERE id = ?`,
			roleKey, s.d.Time(WallClock()), userID)
	})
	return s.e.Fail(ctx, "set user role", err)
}

// SetUserDepartment returns ENOTFOUND for an unknown user, EVALIDATION
// (field department) for an unknown department: the foreign key checks it
// in the statement that sets it.
func (s *Store) SetUserDepartment(ctx context.Context, userID, departmentID string) error {
	if HasNUL(departmentID) {
		return unknownDepartment()
	}
	return s.updateUser(ctx, "set user department", userID, `UPDATE users SET department_id = ?, updated_at = ? WHERE id = ?`,
		NullString(departmentID), s.d.Time(WallClock()), userID)
}

// SetUserTimezone returns ENOTFOUND for an unknown user. The caller checks
// that tz is an IANA zone name.
func (s *Store) SetUserTimezone(ctx context.Context, userID, tz string) error {
	if err := NoNUL(map[string]string{"timezone": tz}); err != nil {
		return err
	}
	return s.updateUser(ctx, "set user timezone", userID, `UPDATE users SET timezone = ?, updated_at = ? WHERE id = ?`,
		tz, s.d.Time(WallClock()), userID)
}

// DisableUser returns ENOTFOUND for an unknown user, LAST_ADMIN for the
// last active administrator. The user's sessions and API tokens are
// revoked in the same transaction.
func (s *Store) DisableUser(ctx context.Context, userID string, at time.Time) error {
	if HasNUL(userID) {
		return NotFound("user")
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		if err := s.guardLastAdmin(ctx, q, userID, ""); err != nil {
			return err
		}
		err := One(ctx, q, "user", `UPDATE users SET status = 'disabled', updated_at = ? WHERE id = ?`,
			s.d.Time(at), userID)
		if err != nil {
			return err
		}
		if err := s.revokeSessions(ctx, q, userID, "", at); err != nil {
			return err
		}
		_, err = q.Exec(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND `+s.d.None("revoked_at"),
			s.d.Time(at), userID)
		return err
	})
	return s.e.Fail(ctx, "disable user", err)
}

// EnableUser makes a disabled user active, or invited when it has no
// password; any other user is left as it is. ENOTFOUND for an unknown user.
func (s *Store) EnableUser(ctx context.Context, userID string, at time.Time) error {
	return s.updateUser(ctx, "enable user", userID, `UPDATE users SET
		status = CASE WHEN status <> 'disabled' THEN status WHEN password_hash = '' THEN 'invited' ELSE 'active' END,
		updated_at = CASE WHEN status = 'disabled' THEN ? ELSE updated_at END
		WHERE id = ?`, s.d.Time(at), userID)
}

// SetPassword stores hash and makes an invited user active. A disabled user
// stays disabled: a password change racing with DisableUser (the session
// was checked just before) must not undo the administrator's decision.
// Every unused one-time token of the user is marked used in the same
// transaction: a reset link asked for before the change must not undo it.
// ENOTFOUND for an unknown user.
func (s *Store) SetPassword(ctx context.Context, userID, hash string, at time.Time) error {
	if HasNUL(userID) {
		return NotFound("user")
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		err := One(ctx, q, "user", `UPDATE users SET password_hash = ?, must_change_password = false,
			status = CASE WHEN status = 'disabled' THEN 'disabled' ELSE 'active' END,
			updated_at = ? WHERE id = ?`, hash, s.d.Time(at), userID)
		if err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `UPDATE one_time_tokens SET used_at = ? WHERE user_id = ? AND `+s.d.None("used_at"),
			s.d.Time(at), userID); err != nil {
			return err
		}
		_, err = q.Exec(ctx, `DELETE FROM mfa_tokens WHERE user_id = ?`, userID)
		return err
	})
	return s.e.Fail(ctx, "set password", err)
}

func (s *Store) ReplacePasswordHash(ctx context.Context, userID, oldHash, newHash string) error {
	if HasNUL(userID, oldHash, newHash) {
		return nil // no stored value holds U+0000
	}
	_, err := s.e.ExecOne(ctx, "", `UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?`,
		newHash, userID, oldHash)
	return s.e.Fail(ctx, "replace password hash", err)
}

const roleSelect = `SELECT key, label, docs_level, admin, require_mfa FROM roles`

func scanRole(scan func(dest ...any) error) (quire.Role, error) {
	var (
		r     quire.Role
		level string
	)
	if err := scan(&r.Key, &r.Label, &level, &r.Admin, &r.RequireMFA); err != nil {
		return r, err
	}
	lv, ok := quire.ParseLevel(level)
	if !ok {
		return r, fmt.Errorf("role %s has unknown docs level %q", r.Key, level)
	}
	r.Docs = lv
	return r, nil
}

func (s *Store) Roles(ctx context.Context) ([]quire.Role, error) {
	roles, err := Collect(ctx, s.e.Read(), scanRole, roleSelect+` ORDER BY `+s.d.byCodePoint("key"))
	return roles, s.e.Fail(ctx, "list roles", err)
}

func (s *Store) Role(ctx context.Context, key string) (*quire.Role, error) {
	if HasNUL(key) {
		return nil, NotFound("role")
	}
	r, err := scanRole(s.e.Read().QueryRow(ctx, roleSelect+` WHERE key = ?`, key).Scan)
	if err != nil {
		return nil, s.e.Fail(ctx, "read role", Found(err, "role"))
	}
	return &r, nil
}

// PutRole returns EVALIDATION for an empty key or label or a level outside
// none/view/write, LAST_ADMIN when it takes the admin mark off the role of
// the last active administrators.
func (s *Store) PutRole(ctx context.Context, r quire.Role) error {
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
	if err := NoNUL(map[string]string{"key": r.Key, "label": r.Label}); err != nil {
		return err
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		if !r.Admin {
			if err := s.guardLastAdmin(ctx, q, "", r.Key); err != nil {
				return err
			}
		}
		_, err := q.Exec(ctx, `INSERT INTO roles (key, label, docs_level, admin, require_mfa) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET label = excluded.label, docs_level = excluded.docs_level, admin = excluded.admin,
				require_mfa = excluded.require_mfa`,
			r.Key, r.Label, r.Docs.String(), r.Admin, r.RequireMFA)
		return err
	})
	return s.e.Fail(ctx, "put role "+r.Key, err)
}
