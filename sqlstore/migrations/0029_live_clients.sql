-- Nothing applied twice after a resync (product.md section 20): for each
-- editor (client id, one browser tab) of a document, its own number of the
-- last change it had accepted (seq: the push's sequence number) and that
-- change's number in the document (at). AppendLive writes it in the
-- transaction that stores the changes, and refuses a push whose numbers
-- are not above it. A table of its own rather than a column of
-- live_changes: the changes are trimmed once they are in a version, and a
-- client that comes back after that is sent the whole text with the number
-- of its last accepted change, so that it drops those and rebases only the
-- rest. A row lasts a day after its last change (SaveLive deletes older
-- ones) or until the document is purged.
CREATE TABLE live_clients (
	document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	client_id   TEXT NOT NULL,
	seq         {{.Int64}} NOT NULL,
	at          {{.Int64}} NOT NULL,
	updated_at  {{.Time}},
	PRIMARY KEY (document_id, client_id)
){{.WithoutRowid}};
