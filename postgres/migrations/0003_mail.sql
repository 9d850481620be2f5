-- One-time reset and setup tokens, the forgot-password request log that
-- limits them, and the mail outbox.

-- Tokens are stored only as SHA-256 hashes; the purpose is part of the
-- lookup, so a setup token is never accepted as a reset token or back.
CREATE TABLE one_time_tokens (
	id         text PRIMARY KEY,
	user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	purpose    text NOT NULL CONSTRAINT one_time_tokens_purpose_check CHECK (purpose IN ('reset', 'setup')),
	token_hash bytea NOT NULL CONSTRAINT one_time_tokens_token_hash_key UNIQUE,
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	used_at    timestamptz
);
CREATE INDEX one_time_tokens_user ON one_time_tokens (user_id) WHERE used_at IS NULL;

-- One row per accepted forgot-password request, whether or not the email
-- has an account, for the per-address and per-email windows.
CREATE TABLE reset_requests (
	id    text PRIMARY KEY,
	addr  text NOT NULL,
	email text NOT NULL,
	at    timestamptz NOT NULL
);
CREATE INDEX reset_requests_addr ON reset_requests (addr, at);
CREATE INDEX reset_requests_email ON reset_requests (email, at);
CREATE INDEX reset_requests_at ON reset_requests (at);

-- The transactional outbox. A mail is due when it is neither sent nor given
-- up and next_try_at is NULL (at once, whatever the worker's clock) or not
-- after now. A claim pushes next_try_at to the end of its lease and counts
-- an attempt. text and html are blanked once the mail is sent or given up:
-- they carry live links.
CREATE TABLE outbox (
	id          text PRIMARY KEY,
	recipient   text NOT NULL,
	subject     text NOT NULL,
	text        text NOT NULL,
	html        text NOT NULL,
	created_at  timestamptz NOT NULL,
	attempts    integer NOT NULL DEFAULT 0,
	next_try_at timestamptz,
	sent_at     timestamptz,
	given_up_at timestamptz,
	last_error  text NOT NULL DEFAULT ''
);
CREATE INDEX outbox_due ON outbox (next_try_at NULLS FIRST, created_at, id)
	WHERE sent_at IS NULL AND given_up_at IS NULL;
