-- Sessions carry where they were signed in from, and personal API tokens
-- (product.md section 10).
ALTER TABLE sessions ADD COLUMN ip TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';

-- A personal API token, stored only as the SHA-256 of its secret.
-- last_used_at is none for "never", revoked_at for "not revoked".
CREATE TABLE api_tokens (
	id           TEXT PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	scope        TEXT NOT NULL CHECK (scope IN ('read', 'write')),
	token_hash   {{.Bytes}} NOT NULL UNIQUE,
	created_at   {{.Time}},
	expires_at   {{.Time}},
	last_used_at {{.MaybeTime}},
	revoked_at   {{.MaybeTime}},
	ip           TEXT NOT NULL DEFAULT '',
	user_agent   TEXT NOT NULL DEFAULT ''
);
-- The list and the revocations of one user's tokens.
CREATE INDEX api_tokens_user ON api_tokens (user_id{{if .SQLite}}, revoked_at{{end}});
