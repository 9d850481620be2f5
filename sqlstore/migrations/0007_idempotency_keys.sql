-- The kept answers of requests sent with an Idempotency-Key (product
-- section 17), one per user and key, in the database so that every node
-- knows them. A running record is a request's claim until expires_at (its
-- lease); a done one keeps the answer until expires_at (24 hours). The
-- prune deletes by expires_at.
CREATE TABLE idempotency_keys (
	user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	key         TEXT NOT NULL,
	fingerprint {{.Bytes}} NOT NULL,
	claim       TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('running', 'done')),
	status      INTEGER NOT NULL DEFAULT 0,
	header      TEXT NOT NULL DEFAULT '{}',
	body        {{.Bytes}} NOT NULL DEFAULT {{.NoBytes}},
	expires_at  {{.Time}},
	PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
