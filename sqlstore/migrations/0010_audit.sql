-- The audit log (product.md section 8). One row per event, written in the
-- transaction of the change it records; id is a UUID v7. Actor and target
-- are copied (id and name as they were then) and carry no foreign key: the
-- log outlives what it names (a purged document). Pages walk (at, id)
-- descending; each filter has an index that ends in the same order, so
-- that a filtered page stops after limit rows too. action orders by bytes
-- (Bytewise): a prefix is a range.
CREATE TABLE audit_events (
	id          {{.UUID}} PRIMARY KEY,
	at          {{.Time}},
	action      TEXT{{.Bytewise}} NOT NULL,
	actor_id    TEXT,
	actor_name  TEXT NOT NULL DEFAULT '',
	target_type TEXT,
	target_id   TEXT,
	target_name TEXT NOT NULL DEFAULT '',
	ip          TEXT NOT NULL DEFAULT '',
	request_id  TEXT NOT NULL DEFAULT '',
	details     {{.JSON}} NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_at ON audit_events (at DESC, id DESC);
CREATE INDEX audit_events_action ON audit_events (action, at DESC, id DESC);
CREATE INDEX audit_events_actor ON audit_events (actor_id, at DESC, id DESC) WHERE actor_id IS NOT NULL;
CREATE INDEX audit_events_target ON audit_events (target_id, at DESC, id DESC) WHERE target_id IS NOT NULL;
