-- Users, roles, departments, projects, sessions and sign-in limits.
-- Times are timestamptz (microsecond precision); NULL means none.
-- Constraints are named: the store maps their violations to the field a
-- client sent (see constraintFields in db.go).

CREATE TABLE roles (
	key        text PRIMARY KEY,
	label      text NOT NULL,
	docs_level text NOT NULL CONSTRAINT roles_docs_level_check CHECK (docs_level IN ('none', 'view', 'write')),
	admin      boolean NOT NULL DEFAULT false
);

INSERT INTO roles (key, label, docs_level, admin) VALUES
	('admin', 'Administrator', 'write', true),
	('editor', 'Editor', 'write', false),
	('viewer', 'Viewer', 'view', false),
	('guest', 'Guest', 'none', false);

CREATE TABLE departments (
	id   text PRIMARY KEY,
	name text NOT NULL CONSTRAINT departments_name_key UNIQUE
);

CREATE TABLE users (
	id            text PRIMARY KEY,
	email         text NOT NULL CONSTRAINT users_email_key UNIQUE,
	name          text NOT NULL,
	role_key      text NOT NULL CONSTRAINT users_role_fkey REFERENCES roles(key),
	department_id text CONSTRAINT users_department_fkey REFERENCES departments(id),
	timezone      text NOT NULL DEFAULT '',
	status        text NOT NULL CONSTRAINT users_status_check CHECK (status IN ('active', 'invited', 'disabled')),
	password_hash text NOT NULL DEFAULT '',
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL
);
CREATE INDEX users_role ON users (role_key);
CREATE INDEX users_department ON users (department_id);

CREATE TABLE projects (
	id   text PRIMARY KEY,
	name text NOT NULL CONSTRAINT projects_name_key UNIQUE
);

CREATE TABLE project_members (
	project_id text NOT NULL CONSTRAINT project_members_project_fkey REFERENCES projects(id) ON DELETE CASCADE,
	user_id    text NOT NULL CONSTRAINT project_members_user_fkey REFERENCES users(id) ON DELETE CASCADE,
	PRIMARY KEY (project_id, user_id)
);
-- The visibility rule asks "the projects of this user" on every document query.
CREATE INDEX project_members_user ON project_members (user_id, project_id);

CREATE TABLE sessions (
	id           text PRIMARY KEY,
	user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	token_hash   bytea NOT NULL CONSTRAINT sessions_token_hash_key UNIQUE,
	created_at   timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL,
	last_used_at timestamptz NOT NULL,
	revoked_at   timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id);

-- One row per failed sign-in (or attempt in flight) of a client address and
-- normalised email, for the sliding window.
CREATE TABLE login_failures (
	id    text PRIMARY KEY,
	addr  text NOT NULL,
	email text NOT NULL,
	at    timestamptz NOT NULL
);
CREATE INDEX login_failures_pair ON login_failures (email, addr, at);
-- For pruning rows that have left every window.
CREATE INDEX login_failures_at ON login_failures (at);

-- Consecutive failures and the lock of a normalised email, whether or not
-- an account exists.
CREATE TABLE login_locks (
	email        text PRIMARY KEY,
	consecutive  integer NOT NULL DEFAULT 0,
	locked_until timestamptz
);
