-- The second factor (product.md section 11). The secret key that seals the
-- TOTP secrets, when generated rather than given, is the setting secret_key.

-- A user's TOTP: the secret sealed with the secret key (AES-GCM), waiting
-- for confirmation while confirmed_at is none; last_step is the time step
-- of the last code accepted, so no code is accepted twice.
CREATE TABLE mfa_totp (
	user_id      TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
	secret       {{.Bytes}} NOT NULL,
	created_at   {{.Time}},
	confirmed_at {{.MaybeTime}},
	last_step    {{.Int64}} NOT NULL DEFAULT 0
);

-- Single-use recovery codes, stored only as SHA-256 hashes.
CREATE TABLE mfa_recovery_codes (
	id        TEXT PRIMARY KEY,
	user_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	code_hash {{.Bytes}} NOT NULL,
	used_at   {{.MaybeTime}}
);
CREATE INDEX mfa_recovery_codes_user ON mfa_recovery_codes (user_id);

-- A correct password waiting for its second step: single use, 5 minutes,
-- at most 5 tries; stored only as the SHA-256 of the token.
CREATE TABLE mfa_tokens (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	token_hash {{.Bytes}} NOT NULL UNIQUE,
	timezone   TEXT NOT NULL DEFAULT '',
	created_at {{.Time}},
	expires_at {{.Time}},
	used_at    {{.MaybeTime}},
	tries      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX mfa_tokens_user ON mfa_tokens (user_id);
