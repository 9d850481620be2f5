-- Files attached to documents (product.md section 13), kept in the
-- database so that a backup holds them. An attachment never changes; its
-- bytes are in chunks of 256 KiB (quire.AttachmentChunkSize), so that an
-- upload writes and a download reads one chunk at a time. Both go with
-- their document when it is purged (ON DELETE CASCADE); while it is in the
-- trash every query hides them through the document's deleted_at.
CREATE TABLE attachments (
	id           TEXT PRIMARY KEY,
	document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	content_type TEXT NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	created_by   TEXT NOT NULL REFERENCES users(id)
);
-- A document's list, oldest first.
CREATE INDEX attachments_document ON attachments (document_id, created_at, id);

CREATE TABLE attachment_chunks (
	attachment_id TEXT NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
	n             INTEGER NOT NULL,
	data          BLOB NOT NULL,
	PRIMARY KEY (attachment_id, n)
);
