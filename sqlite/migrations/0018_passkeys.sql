-- Passkeys (WebAuthn, product.md section 11): the public half of each
-- credential a user registered, and the state of the ceremonies between
-- their begin and their finish. Times are microseconds; 0 for "never"
-- (last_used_at).
CREATE TABLE passkeys (
	id            TEXT PRIMARY KEY,
	user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	credential_id BLOB NOT NULL UNIQUE,
	name          TEXT NOT NULL,
	public_key    BLOB NOT NULL,
	sign_count    INTEGER NOT NULL DEFAULT 0,
	transports    TEXT NOT NULL DEFAULT '',
	aaguid        BLOB NOT NULL DEFAULT x'',
	flags         INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL,
	last_used_at  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX passkeys_user ON passkeys (user_id, created_at);

-- A ceremony is single-use and lives a few minutes; it is named by the
-- SHA-256 of its challenge.
CREATE TABLE passkey_ceremonies (
	challenge_hash BLOB PRIMARY KEY,
	kind           TEXT NOT NULL CHECK (kind IN ('register', 'login')),
	user_id        TEXT NOT NULL DEFAULT '',
	addr           TEXT NOT NULL,
	data           BLOB NOT NULL,
	expires_at     INTEGER NOT NULL
);
CREATE INDEX passkey_ceremonies_addr ON passkey_ceremonies (addr, expires_at);
CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies (expires_at);
