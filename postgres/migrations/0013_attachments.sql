-- Files attached to documents (product.md section 13), kept in the
-- database so that a backup and every node have them. An attachment never
-- changes; its bytes are in chunks of 256 KiB (quire.AttachmentChunkSize),
-- so that an upload writes and a download reads one chunk per statement.
-- Both go with their document when it is purged (ON DELETE CASCADE); while
-- it is in the trash every query hides them through the document's
-- deleted_at.
CREATE TABLE attachments (
	id           text PRIMARY KEY,
	document_id  text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	name         text NOT NULL,
	content_type text NOT NULL,
	size         bigint NOT NULL,
	sha256       text NOT NULL,
	created_at   timestamptz NOT NULL,
	created_by   text NOT NULL REFERENCES users(id)
);
-- A document's list, oldest first.
CREATE INDEX attachments_document ON attachments (document_id, created_at, id);

CREATE TABLE attachment_chunks (
	attachment_id text NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
	n             integer NOT NULL,
	data          bytea NOT NULL,
	PRIMARY KEY (attachment_id, n)
);
-- Files are mostly compressed already (images, archives): stored out of
-- line without trying to compress them again.
ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
