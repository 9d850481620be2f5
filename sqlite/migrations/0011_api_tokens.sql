-- Sessions carry where they were signed in from, and personal API tokens
-- (product.md section 10).
ALTER TABLE sessions ADD COLUMN ip TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';

-- A personal API token, stored only as the SHA-256 of its secret. Times are
-- microseconds; 0 for "never" (last_used_at) and "not revoked" (revoked_at).
CREATE TABLE api_tokens (
	id           TEXT PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	scope        TEXT NOT NULL CHECK (scope IN ('read', 'write')),
	token_hash   BLOB NOT NULL UNIQUE,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	last_used_at INTEGER NOT NULL DEFAULT 0,
	revoked_at   INTEGER NOT NULL DEFAULT 0,
	ip           TEXT NOT NULL DEFAULT '',
	user_agent   TEXT NOT NULL DEFAULT ''
);
-- The list and the revocations of one user's tokens.
CREATE INDEX api_tokens_user ON api_tokens (user_id, revoked_at);
