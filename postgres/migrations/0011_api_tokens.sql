-- Sessions carry where they were signed in from, and personal API tokens
-- (product.md section 10).
ALTER TABLE sessions ADD COLUMN ip text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN user_agent text NOT NULL DEFAULT '';

-- A personal API token, stored only as the SHA-256 of its secret.
CREATE TABLE api_tokens (
	id           text PRIMARY KEY,
	user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name         text NOT NULL,
	scope        text NOT NULL CHECK (scope IN ('read', 'write')),
	token_hash   bytea NOT NULL CONSTRAINT api_tokens_token_hash_key UNIQUE,
	created_at   timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL,
	last_used_at timestamptz,
	revoked_at   timestamptz,
	ip           text NOT NULL DEFAULT '',
	user_agent   text NOT NULL DEFAULT ''
);
-- The list and the revocations of one user's tokens.
CREATE INDEX api_tokens_user ON api_tokens (user_id);
