-- Passkeys (WebAuthn, product.md section 11): the public half of each
-- credential a user registered, and the state of the ceremonies between
-- their begin and their finish, in the database so that a finish may reach
-- another node than its begin. last_used_at is none for "never".
CREATE TABLE passkeys (
	id            TEXT PRIMARY KEY,
	user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	credential_id {{.Bytes}} NOT NULL UNIQUE,
	name          TEXT NOT NULL,
	public_key    {{.Bytes}} NOT NULL,
	sign_count    {{.Int64}} NOT NULL DEFAULT 0,
	transports    TEXT NOT NULL DEFAULT '',
	aaguid        {{.Bytes}} NOT NULL DEFAULT {{.NoBytes}},
	flags         {{.Int16}} NOT NULL DEFAULT 0,
	created_at    {{.Time}},
	last_used_at  {{.MaybeTime}}
);
CREATE INDEX passkeys_user ON passkeys (user_id, created_at);

-- A ceremony is single-use and lives a few minutes; it is named by the
-- SHA-256 of its challenge.
CREATE TABLE passkey_ceremonies (
	challenge_hash {{.Bytes}} PRIMARY KEY,
	kind           TEXT NOT NULL CHECK (kind IN ('register', 'login')),
	user_id        TEXT NOT NULL DEFAULT '',
	addr           TEXT NOT NULL,
	data           {{.Bytes}} NOT NULL,
	expires_at     {{.Time}}
);
CREATE INDEX passkey_ceremonies_addr ON passkey_ceremonies (addr, expires_at);
CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies (expires_at);
