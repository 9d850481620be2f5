-- Live editing (product.md section 20): the changes of a document's live
-- text, each stored before anyone is told of it. A change's number is the
-- document's count once it is applied; the primary key lets each number be
-- stored once per document, so that of two nodes that accept "change N+1"
-- one fails and catches up from here. change is the editor's JSON, kept as
-- text: given back byte for byte (PostgreSQL's binary JSON would reorder it).
CREATE TABLE live_changes (
	document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	seq         {{.Int64}} NOT NULL,
	change      TEXT NOT NULL,
	client_id   TEXT NOT NULL,
	user_id     TEXT NOT NULL REFERENCES users(id),
	created_at  {{.Time}},
	PRIMARY KEY (document_id, seq)
){{.WithoutRowid}};
{{- if .Postgres}}
CREATE INDEX live_changes_user ON live_changes (user_id);
{{- end}}

-- What a document's stored content includes of its live changes. base is
-- their number: the live text is the content followed by the changes after
-- base. superseded is the count at the last write of the content that did
-- not come from the live text (a save through the API or the form, a
-- restore, an import): the changes up to it no longer lead to the content,
-- and are never read again. Both are written in the transaction that writes
-- the content, under the document's row lock. A table of its own rather
-- than columns of documents: most documents are never edited live and have
-- no row; a save of the live text rewrites no more of the document's row
-- than any save (on SQLite every update of documents is also journalled for
-- the index of documents); and the row stays when every change up to base
-- has been trimmed, so that the count never goes back, across trims and
-- restarts: the count is the greater of base and the last change stored.
CREATE TABLE live_documents (
	document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
	base        {{.Int64}} NOT NULL,
	superseded  {{.Int64}} NOT NULL DEFAULT 0
){{.WithoutRowid}};
