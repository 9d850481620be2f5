-- Single sign-on with OpenID Connect (product.md section 12).

-- An account at an OpenID provider (issuer, subject) linked to a user. A
-- user may have several (several providers, or a new subject at the same
-- one linked by its verified email).
CREATE TABLE sso_identities (
	issuer     text NOT NULL,
	subject    text NOT NULL,
	user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	email      text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	CONSTRAINT sso_identities_pkey PRIMARY KEY (issuer, subject)
);
CREATE INDEX sso_identities_user ON sso_identities (user_id);

-- A sign-in sent to the provider and not yet back, found by the SHA-256 of
-- its state parameter and taken once (any node may receive the callback).
CREATE TABLE sso_flows (
	state_hash bytea PRIMARY KEY,
	nonce      text NOT NULL,
	verifier   text NOT NULL,
	next       text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);
-- The pruning of abandoned sign-ins.
CREATE INDEX sso_flows_expires ON sso_flows (expires_at);
