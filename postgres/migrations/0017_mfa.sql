-- The second factor (product.md section 11). The secret key that seals the
-- TOTP secrets, when generated rather than given, is the setting secret_key.

-- A user's TOTP: the secret sealed with the secret key (AES-GCM), waiting
-- for confirmation while confirmed_at is NULL; last_step is the time step
-- of the last code accepted, so no code is accepted twice.
CREATE TABLE mfa_totp (
	user_id      text PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
	secret       bytea NOT NULL,
	created_at   timestamptz NOT NULL,
	confirmed_at timestamptz,
	last_step    bigint NOT NULL DEFAULT 0
);

-- Single-use recovery codes, stored only as SHA-256 hashes.
CREATE TABLE mfa_recovery_codes (
	id        text PRIMARY KEY,
	user_id   text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	code_hash bytea NOT NULL,
	used_at   timestamptz
);
CREATE INDEX mfa_recovery_codes_user ON mfa_recovery_codes (user_id);

-- A correct password waiting for its second step: single use, 5 minutes,
-- at most 5 tries; stored only as the SHA-256 of the token.
CREATE TABLE mfa_tokens (
	id         text PRIMARY KEY,
	user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	token_hash bytea NOT NULL CONSTRAINT mfa_tokens_token_hash_key UNIQUE,
	timezone   text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	used_at    timestamptz,
	tries      integer NOT NULL DEFAULT 0
);
CREATE INDEX mfa_tokens_user ON mfa_tokens (user_id);
