-- The kept answers of requests sent with an Idempotency-Key (product
-- section 17), one per user and key. A running record is a request's claim
-- until expires_at (its lease); a done one keeps the answer until
-- expires_at (24 hours). The prune deletes by expires_at.
CREATE TABLE idempotency_keys (
	user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	key         TEXT NOT NULL,
	fingerprint BLOB NOT NULL,
	claim       TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('running', 'done')),
	status      INTEGER NOT NULL DEFAULT 0,
	header      TEXT NOT NULL DEFAULT '{}',
	body        BLOB NOT NULL DEFAULT x'',
	expires_at  INTEGER NOT NULL,
	PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
