-- Users, roles, departments, projects, sessions and sign-in limits.
-- Times are INTEGER microseconds since the Unix epoch (UTC); 0 means none.

CREATE TABLE roles (
	key        TEXT PRIMARY KEY,
	label      TEXT NOT NULL,
	docs_level TEXT NOT NULL CHECK (docs_level IN ('none', 'view', 'write')),
	admin      INTEGER NOT NULL DEFAULT 0
);

INSERT INTO roles (key, label, docs_level, admin) VALUES
	('admin', 'Administrator', 'write', 1),
	('editor', 'Editor', 'write', 0),
	('viewer', 'Viewer', 'view', 0),
	('guest', 'Guest', 'none', 0);

CREATE TABLE departments (
	id   TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);

CREATE TABLE users (
	id            TEXT PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	name          TEXT NOT NULL,
	role_key      TEXT NOT NULL REFERENCES roles(key),
	department_id TEXT REFERENCES departments(id),
	timezone      TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('active', 'invited', 'disabled')),
	password_hash TEXT NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);

CREATE TABLE projects (
	id   TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);

CREATE TABLE project_members (
	project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	PRIMARY KEY (project_id, user_id)
) WITHOUT ROWID;
CREATE INDEX project_members_user ON project_members (user_id, project_id);

CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	token_hash   BLOB NOT NULL UNIQUE,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	last_used_at INTEGER NOT NULL,
	revoked_at   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_user ON sessions (user_id);

-- One row per failed sign-in (or attempt in flight) of a client address and
-- normalised email, for the sliding window.
CREATE TABLE login_failures (
	id     TEXT PRIMARY KEY,
	addr   TEXT NOT NULL,
	email  TEXT NOT NULL,
	at     INTEGER NOT NULL
);
CREATE INDEX login_failures_pair ON login_failures (email, addr, at);
-- For pruning rows that have left every window.
CREATE INDEX login_failures_at ON login_failures (at);

-- Consecutive failures and the lock of a normalised email, whether or not
-- an account exists.
CREATE TABLE login_locks (
	email        TEXT PRIMARY KEY,
	consecutive  INTEGER NOT NULL DEFAULT 0,
	locked_until INTEGER NOT NULL DEFAULT 0
);
