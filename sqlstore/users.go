package sqlstore

import (
	"context"
	"fmt"

	"quire"
)

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
