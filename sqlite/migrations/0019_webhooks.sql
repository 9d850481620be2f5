-- Webhooks (product.md section 16). A webhook's patterns are rows of their
-- own so that the transaction recording an event can queue its deliveries
-- with one INSERT ... SELECT: a pattern is an exact action (exact = 1) or
-- a prefix of actions (exact = 0; "document." for "document.*", "" for "*").
CREATE TABLE webhooks (
	id         TEXT PRIMARY KEY,
	url        TEXT NOT NULL,
	secret     TEXT NOT NULL,
	events     TEXT NOT NULL, -- the patterns as given, a JSON array
	active     INTEGER NOT NULL DEFAULT 1,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE TABLE webhook_patterns (
	webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	prefix     TEXT NOT NULL,
	exact      INTEGER NOT NULL,
	PRIMARY KEY (webhook_id, exact, prefix)
);
-- The webhook outbox: one row per event and webhook, queued in the
-- transaction of the event. order_key is the event's target (or the event
-- itself): a delivery waits for the earlier pending ones of its key. Times
-- are microseconds, 0 for "not yet".
CREATE TABLE webhook_deliveries (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	webhook_id   TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	event_id     TEXT NOT NULL,
	action       TEXT NOT NULL,
	order_key    TEXT NOT NULL,
	state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_try_at  INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	delivered_at INTEGER NOT NULL DEFAULT 0,
	last_status  INTEGER NOT NULL DEFAULT 0,
	last_error   TEXT NOT NULL DEFAULT ''
);
-- The worker's claim: due deliveries of one webhook, and the earlier
-- pending ones of a key.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_try_at, seq) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_key ON webhook_deliveries (webhook_id, order_key, seq) WHERE state = 'pending';
-- The delivery log, newest first.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, seq);
-- Pruning of finished deliveries.
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (created_at) WHERE state <> 'pending';
