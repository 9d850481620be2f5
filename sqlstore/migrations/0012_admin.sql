-- Administration (product.md section 9): the first administrator's duty to
-- choose a password of its own, and a role's demand for a second factor
-- (stored and shown now, enforced with the second factor, issue 17).
ALTER TABLE users ADD COLUMN must_change_password {{.Bool}} NOT NULL DEFAULT {{.False}};
ALTER TABLE roles ADD COLUMN require_mfa {{.Bool}} NOT NULL DEFAULT {{.False}};
{{- if .SQLite}}
-- DeleteDepartment asks whether a user still names the department
-- (PostgreSQL has had the index since 0001).
CREATE INDEX users_department ON users (department_id);
{{- end}}
