-- Users, roles, departments, projects, sessions and sign-in limits.
-- Times are INTEGER microseconds since the Unix epoch (UTC) on SQLite, 0 for
-- none; timestamptz (microsecond precision) on PostgreSQL, NULL for none.
-- Constraints are named on PostgreSQL (con) where its own name would differ:
-- the store maps their violations to the field a client sent.

CREATE TABLE roles (
	key        TEXT PRIMARY KEY,
	label      TEXT NOT NULL,
	docs_level TEXT NOT NULL CHECK (docs_level IN ('none', 'view', 'write')),
	admin      {{.Bool}} NOT NULL DEFAULT {{.False}}
);

INSERT INTO roles (key, label, docs_level, admin) VALUES
	('admin', 'Administrator', 'write', true),
	('editor', 'Editor', 'write', false),
	('viewer', 'Viewer', 'view', false),
	('guest', 'Guest', 'none', false);

CREATE TABLE departments (
	id   TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);

CREATE TABLE users (
	id            TEXT PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	name          TEXT NOT NULL,
	role_key      TEXT NOT NULL {{con "users_role_fkey"}}REFERENCES roles(key),
	department_id TEXT {{con "users_department_fkey"}}REFERENCES departments(id),
	timezone      TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('active', 'invited', 'disabled')),
	password_hash TEXT NOT NULL DEFAULT '',
	created_at    {{.Time}},
	updated_at    {{.Time}}
);
{{- if .Postgres}}
CREATE INDEX users_role ON users (role_key);
CREATE INDEX users_department ON users (department_id);
{{- end}}

CREATE TABLE projects (
	id   TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);

-- The visibility rule asks "the projects of this user" on every document query.
CREATE TABLE project_members (
	project_id TEXT NOT NULL {{con "project_members_project_fkey"}}REFERENCES projects(id) ON DELETE CASCADE,
	user_id    TEXT NOT NULL {{con "project_members_user_fkey"}}REFERENCES users(id) ON DELETE CASCADE,
	PRIMARY KEY (project_id, user_id)
){{.WithoutRowid}};
CREATE INDEX project_members_user ON project_members (user_id, project_id);

CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	token_hash   {{.Bytes}} NOT NULL UNIQUE,
	created_at   {{.Time}},
	expires_at   {{.Time}},
	last_used_at {{.Time}},
	revoked_at   {{.MaybeTime}}
);
CREATE INDEX sessions_user ON sessions (user_id);

-- One row per failed sign-in (or attempt in flight) of a client address and
-- normalised email, for the sliding window.
CREATE TABLE login_failures (
	id     TEXT PRIMARY KEY,
	addr   TEXT NOT NULL,
	email  TEXT NOT NULL,
	at     {{.Time}}
);
CREATE INDEX login_failures_pair ON login_failures (email, addr, at);
-- For pruning rows that have left every window.
CREATE INDEX login_failures_at ON login_failures (at);

-- Consecutive failures and the lock of a normalised email, whether or not
-- an account exists.
CREATE TABLE login_locks (
	email        TEXT PRIMARY KEY,
	consecutive  INTEGER NOT NULL DEFAULT 0,
	locked_until {{.MaybeTime}}
);
