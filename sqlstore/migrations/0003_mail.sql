-- One-time reset and setup tokens, the forgot-password request log that
-- limits them, and the mail outbox.

-- Tokens are stored only as SHA-256 hashes; the purpose is part of the
-- lookup, so a setup token is never accepted as a reset token or back.
CREATE TABLE one_time_tokens (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	purpose    TEXT NOT NULL CHECK (purpose IN ('reset', 'setup')),
	token_hash {{.Bytes}} NOT NULL UNIQUE,
	created_at {{.Time}},
	expires_at {{.Time}},
	used_at    {{.MaybeTime}}
);
{{- if .SQLite}}
CREATE INDEX one_time_tokens_user ON one_time_tokens (user_id, used_at);
{{- else}}
CREATE INDEX one_time_tokens_user ON one_time_tokens (user_id) WHERE used_at IS NULL;
{{- end}}

-- One row per accepted forgot-password request, whether or not the email
-- has an account, for the per-address and per-email windows.
CREATE TABLE reset_requests (
	id    TEXT PRIMARY KEY,
	addr  TEXT NOT NULL,
	email TEXT NOT NULL,
	at    {{.Time}}
);
CREATE INDEX reset_requests_addr ON reset_requests (addr, at);
CREATE INDEX reset_requests_email ON reset_requests (email, at);
CREATE INDEX reset_requests_at ON reset_requests (at);

-- The transactional outbox. A mail is due when it is neither sent nor given
-- up and next_try_at is none (at once, whatever the worker's clock) or not
-- after now. A claim pushes next_try_at to the end of its lease and counts
-- an attempt. text and html are blanked once the mail is sent or given up:
-- they carry live links.
CREATE TABLE outbox (
	id          TEXT PRIMARY KEY,
	recipient   TEXT NOT NULL,
	subject     TEXT NOT NULL,
	text        TEXT NOT NULL,
	html        TEXT NOT NULL,
	created_at  {{.Time}},
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_try_at {{.MaybeTime}},
	sent_at     {{.MaybeTime}},
	given_up_at {{.MaybeTime}},
	last_error  TEXT NOT NULL DEFAULT ''
);
{{- if .SQLite}}
CREATE INDEX outbox_due ON outbox (next_try_at, created_at) WHERE sent_at = 0 AND given_up_at = 0;
{{- else}}
CREATE INDEX outbox_due ON outbox (next_try_at NULLS FIRST, created_at, id)
	WHERE sent_at IS NULL AND given_up_at IS NULL;
{{- end}}
