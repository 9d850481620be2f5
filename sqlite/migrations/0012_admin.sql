-- Administration (product.md section 9): the first administrator's duty to
-- choose a password of its own, and a role's demand for a second factor
-- (stored and shown now, enforced with the second factor, issue 17).
ALTER TABLE users ADD COLUMN must_change_password INTEGER NOT NULL DEFAULT 0;
ALTER TABLE roles ADD COLUMN require_mfa INTEGER NOT NULL DEFAULT 0;
-- DeleteDepartment asks whether a user still names the department.
CREATE INDEX users_department ON users (department_id);
