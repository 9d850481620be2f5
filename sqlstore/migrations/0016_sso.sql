-- Single sign-on with OpenID Connect (product.md section 12).

-- An account at an OpenID provider (issuer, subject) linked to a user. A
-- user may have several (several providers, or a new subject at the same
-- one linked by its verified email).
CREATE TABLE sso_identities (
	issuer     TEXT NOT NULL,
	subject    TEXT NOT NULL,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	email      TEXT NOT NULL DEFAULT '',
	created_at {{.Time}},
	PRIMARY KEY (issuer, subject)
);
CREATE INDEX sso_identities_user ON sso_identities (user_id);

-- A sign-in sent to the provider and not yet back, found by the SHA-256 of
-- its state parameter and taken once (any node may receive the callback).
CREATE TABLE sso_flows (
	state_hash {{.Bytes}} PRIMARY KEY,
	nonce      TEXT NOT NULL,
	verifier   TEXT NOT NULL,
	next       TEXT NOT NULL DEFAULT '',
	created_at {{.Time}},
	expires_at {{.Time}}
);
-- The pruning of abandoned sign-ins.
CREATE INDEX sso_flows_expires ON sso_flows (expires_at);
