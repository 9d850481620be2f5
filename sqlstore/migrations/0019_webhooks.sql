-- Webhooks (product.md section 16). A webhook's patterns are rows of their
-- own so that the transaction recording an event can queue its deliveries
-- with one INSERT ... SELECT: a pattern is an exact action (exact) or a
-- prefix of actions (not exact; "document." for "document.*", "" for "*"),
-- ordered by bytes (Bytewise).
CREATE TABLE webhooks (
	id         TEXT PRIMARY KEY,
	url        TEXT NOT NULL,
	secret     TEXT NOT NULL,
	events     {{.JSON}} NOT NULL, -- the patterns as given, a JSON array
	active     {{.Bool}} NOT NULL DEFAULT {{.True}},
	created_at {{.Time}},
	updated_at {{.Time}}
);
CREATE TABLE webhook_patterns (
	webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	prefix     TEXT{{.Bytewise}} NOT NULL,
	exact      {{.Bool}} NOT NULL,
	PRIMARY KEY (webhook_id, exact, prefix)
);
-- The webhook outbox: one row per event and webhook, queued in the
-- transaction of the event. order_key is the event's target (or the event
-- itself): a delivery waits for the earlier pending ones of its key. On
-- PostgreSQL the events of one document are recorded under that document's
-- row lock, so their seq follows their commit order. next_try_at is always
-- set on SQLite; delivered_at is none for "not yet".
CREATE TABLE webhook_deliveries (
	seq          {{.Serial}},
	webhook_id   TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	event_id     TEXT NOT NULL,
	action       TEXT NOT NULL,
	order_key    TEXT NOT NULL,
	state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_try_at  {{if .SQLite}}{{.Time}}{{else}}{{.MaybeTime}}{{end}},
	created_at   {{.Time}},
	delivered_at {{.MaybeTime}},
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
