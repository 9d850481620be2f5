{{if .SQLite -}}
-- documents_fts_source (migration 0015) joined a document's tags with
-- group_concat(... ORDER BY ...), which SQLite parses only from 3.44: the
-- sqlite3 of Debian 12 (3.40), Ubuntu 22.04, RHEL 9, Python's sqlite3 and
-- Litestream 0.3 refused every statement on the file ("malformed database
-- schema"), the README's own rebuild of the full-text index included. The
-- view is the same with the tags ordered in a subquery (SQLite 3.37+ reads
-- it): SQLite does not flatten a subquery with ORDER BY into an aggregate,
-- and reads document_tags in its primary key's order, (document_id,
-- position), so the text is the same, and the index needs no rebuild.
DROP VIEW documents_fts_source;
CREATE VIEW documents_fts_source AS
SELECT d.seq AS seq, d.title AS title, d.summary AS summary, d.content AS content,
	COALESCE((SELECT group_concat(o.tag, ' ') FROM (SELECT t.tag AS tag FROM document_tags t WHERE t.document_id = d.id ORDER BY t.position) o), '') AS tags
FROM documents d;
{{- end}}
