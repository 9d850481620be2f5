-- Share links (product.md section 21): a read-only link to one document
-- for people without an account. The token is never stored: token_hash
-- (SHA-256) finds the share, and token_sealed (the token sealed with the
-- server's secret key, bound to the share's id) lets whoever may manage it
-- copy the link again. A revoked share is deleted; a purged document takes
-- its shares with it. views and last_viewed_at are written in batches by
-- each node (package share), never once per view.
CREATE TABLE shares (
	id             TEXT PRIMARY KEY,
	document_id    TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	created_by     TEXT NOT NULL REFERENCES users(id),
	token_hash     {{.Bytes}} NOT NULL UNIQUE,
	token_sealed   {{.Bytes}} NOT NULL,
	created_at     {{.Time}},
	expires_at     {{.MaybeTime}},
	views          {{.Int64}} NOT NULL DEFAULT 0,
	last_viewed_at {{.MaybeTime}}
);
-- A document's shares, oldest first; and links to documents that are shared.
CREATE INDEX shares_document ON shares (document_id, created_at, id);
-- The administrators' list, newest first.
CREATE INDEX shares_created ON shares (created_at, id);
