-- Links between documents (product.md section 14): one row for each
-- document (source) and document its content links to (target), written by
-- every save of content. Backlinks read them by target; a purge takes a
-- source's rows with it. A target need not exist: a link may be written
-- before the document it names, and keeps naming it after a purge.
CREATE TABLE document_links (
	target_id TEXT NOT NULL,
	source_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	PRIMARY KEY (target_id, source_id)
){{.WithoutRowid}};
CREATE INDEX document_links_source ON document_links (source_id);
-- The links of the documents saved before this table existed are read at
-- start (DB.backfillLinks), which deletes this setting when done.
INSERT INTO settings (key, value) VALUES ('document_links_backfill', 'pending');
