-- The kept answers of requests sent with an Idempotency-Key (product
-- section 17), one per user and key, in the database so that every node
-- knows them. A running record is a request's claim until expires_at (its
-- lease); a done one keeps the answer until expires_at (24 hours). The
-- prune deletes by expires_at.
CREATE TABLE idempotency_keys (
	user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	key         text NOT NULL,
	fingerprint bytea NOT NULL,
	claim       text NOT NULL,
	state       text NOT NULL CHECK (state IN ('running', 'done')),
	status      integer NOT NULL DEFAULT 0,
	header      text NOT NULL DEFAULT '{}',
	body        bytea NOT NULL DEFAULT '',
	expires_at  timestamptz NOT NULL,
	PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
