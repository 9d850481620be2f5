-- Files attached to documents (product.md section 13), kept in the
-- database so that a backup and every node have them. An attachment never
-- changes; its bytes are in chunks of 256 KiB (quire.AttachmentChunkSize),
-- so that an upload writes and a download reads one chunk per statement.
-- Both go with their document when it is purged (ON DELETE CASCADE); while
-- it is in the trash every query hides them through the document's
-- deleted_at.
CREATE TABLE attachments (
	id           TEXT PRIMARY KEY,
	document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	content_type TEXT NOT NULL,
	size         {{.Int64}} NOT NULL,
	sha256       TEXT NOT NULL,
	created_at   {{.Time}},
	created_by   TEXT NOT NULL REFERENCES users(id)
);
-- A document's list, oldest first.
CREATE INDEX attachments_document ON attachments (document_id, created_at, id);

CREATE TABLE attachment_chunks (
	attachment_id TEXT NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
	n             INTEGER NOT NULL,
	data          {{.Bytes}} NOT NULL,
	PRIMARY KEY (attachment_id, n)
);
{{- if .Postgres}}
-- Files are mostly compressed already (images, archives): stored out of
-- line without trying to compress them again.
ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
{{- end}}
