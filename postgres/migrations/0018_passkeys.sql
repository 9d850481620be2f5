-- Passkeys (WebAuthn, product.md section 11): the public half of each
-- credential a user registered, and the state of the ceremonies between
-- their begin and their finish, in the database so that a finish may reach
-- another node than its begin.
CREATE TABLE passkeys (
	id            text PRIMARY KEY,
	user_id       text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	credential_id bytea NOT NULL CONSTRAINT passkeys_credential_id_key UNIQUE,
	name          text NOT NULL,
	public_key    bytea NOT NULL,
	sign_count    bigint NOT NULL DEFAULT 0,
	transports    text NOT NULL DEFAULT '',
	aaguid        bytea NOT NULL DEFAULT '\x',
	flags         smallint NOT NULL DEFAULT 0,
	created_at    timestamptz NOT NULL,
	last_used_at  timestamptz
);
CREATE INDEX passkeys_user ON passkeys (user_id, created_at);

-- A ceremony is single-use and lives a few minutes; it is named by the
-- SHA-256 of its challenge.
CREATE TABLE passkey_ceremonies (
	challenge_hash bytea PRIMARY KEY,
	kind           text NOT NULL CHECK (kind IN ('register', 'login')),
	user_id        text NOT NULL DEFAULT '',
	addr           text NOT NULL,
	data           bytea NOT NULL,
	expires_at     timestamptz NOT NULL
);
CREATE INDEX passkey_ceremonies_addr ON passkey_ceremonies (addr, expires_at);
CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies (expires_at);
