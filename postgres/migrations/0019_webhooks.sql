-- Webhooks (product.md section 16). A webhook's patterns are rows of their
-- own so that the transaction recording an event can queue its deliveries
-- with one INSERT ... SELECT: a pattern is an exact action (exact) or a
-- prefix of actions (not exact; "document." for "document.*", "" for "*").
CREATE TABLE webhooks (
	id         text PRIMARY KEY,
	url        text NOT NULL,
	secret     text NOT NULL,
	events     jsonb NOT NULL, -- the patterns as given
	active     boolean NOT NULL DEFAULT true,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
CREATE TABLE webhook_patterns (
	webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	prefix     text COLLATE "C" NOT NULL,
	exact      boolean NOT NULL,
	PRIMARY KEY (webhook_id, exact, prefix)
);
-- The webhook outbox: one row per event and webhook, queued in the
-- transaction of the event. order_key is the event's target (or the event
-- itself): a delivery waits for the earlier pending ones of its key. The
-- events of one document are recorded under that document's row lock, so
-- their seq follows their commit order.
CREATE TABLE webhook_deliveries (
	seq          bigserial PRIMARY KEY,
	webhook_id   text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	event_id     text NOT NULL,
	action       text NOT NULL,
	order_key    text NOT NULL,
	state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts     integer NOT NULL DEFAULT 0,
	next_try_at  timestamptz,
	created_at   timestamptz NOT NULL,
	delivered_at timestamptz,
	last_status  integer NOT NULL DEFAULT 0,
	last_error   text NOT NULL DEFAULT ''
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_try_at, seq) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_key ON webhook_deliveries (webhook_id, order_key, seq) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, seq);
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (created_at) WHERE state <> 'pending';
