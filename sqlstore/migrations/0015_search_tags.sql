-- A search word also matches a document's tags, as words.
{{- if .SQLite}}
-- The full-text index gains a fourth column, tags, the document's tags in
-- their order joined by single spaces. Its text comes from
-- documents_fts_source, a view of documents with that column (FTS5 reads an
-- external content table only to rebuild and check the index; the store
-- writes the index itself, from the same expression, see sqlite/fts.go).
-- The index is built again from every row, so that existing documents are
-- found by their tags at once.
CREATE VIEW documents_fts_source AS
SELECT d.seq AS seq, d.title AS title, d.summary AS summary, d.content AS content,
	COALESCE((SELECT group_concat(t.tag, ' ' ORDER BY t.position) FROM document_tags t WHERE t.document_id = d.id), '') AS tags
FROM documents d;

DROP TABLE documents_fts;
CREATE VIRTUAL TABLE documents_fts USING fts5(
	title, summary, content, tags,
	content = 'documents_fts_source', content_rowid = 'seq',
	tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO documents_fts (documents_fts) VALUES ('rebuild');
{{- else}}
-- Each document's search vector gains its tags' words with weight D
-- (postgres/search.go). The vector is computed in Go, so the store rebuilds
-- the vectors of the documents that have tags right after this file, in the
-- same transaction (postgres/migrate_go.go, afterMigration).
SELECT 1;
{{- end}}
