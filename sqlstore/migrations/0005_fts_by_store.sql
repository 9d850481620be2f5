{{if .SQLite -}}
-- The full-text index is now kept in step by the store itself, inside the
-- same writing transaction, with one statement per committed transaction
-- just before COMMIT (sqlite/fts.go): with these triggers, FTS5 wrote a
-- one-document segment for every document of a group commit's batch, and
-- then merged them again. The index itself is unchanged and up to date.
DROP TRIGGER documents_fts_insert;
DROP TRIGGER documents_fts_delete;
DROP TRIGGER documents_fts_update;
{{- end}}
