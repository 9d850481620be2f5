-- Folders, documents, their tags and versions, and the full-text index.
--
-- On SQLite, documents.seq is the rowid, declared so that VACUUM never
-- renumbers it: the full-text index refers to documents by it. id is the
-- public identifier.
--
-- On PostgreSQL, documents.search is the full-text vector of title (weight
-- A), summary (B) and content (C). The store computes it in Go, in the
-- transaction that writes the text (see postgres/search.go): words are
-- split, lower-cased and stripped of accents exactly as SQLite's FTS5
-- unicode61 tokenizer does, so that the two stores find the same documents
-- whatever the database's locale.

CREATE TABLE folders (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	parent_id  TEXT {{con "folders_parent_fkey"}}REFERENCES folders(id),
	created_at {{.Time}},
	updated_at {{.Time}}
);
CREATE INDEX folders_parent ON folders (parent_id);

CREATE TABLE documents (
{{- if .SQLite}}
	seq           INTEGER PRIMARY KEY,
	id            TEXT NOT NULL UNIQUE,
{{- else}}
	id            TEXT PRIMARY KEY,
{{- end}}
	title         TEXT NOT NULL,
	summary       TEXT NOT NULL DEFAULT '',
	content_type  TEXT NOT NULL CHECK (content_type IN ('html', 'markdown', 'plain')),
	status        TEXT NOT NULL CHECK (status IN ('draft', 'review', 'published', 'archived')),
	visibility    TEXT NOT NULL CHECK (visibility IN ('private', 'department', 'project', 'public')),
	folder_id     TEXT {{con "documents_folder_fkey"}}REFERENCES folders(id),
	department_id TEXT {{con "documents_department_fkey"}}REFERENCES departments(id),
	project_id    TEXT {{con "documents_project_fkey"}}REFERENCES projects(id),
	owner_id      TEXT NOT NULL {{con "documents_owner_fkey"}}REFERENCES users(id),
	version       INTEGER NOT NULL,
	created_at    {{.Time}},
	updated_at    {{.Time}},
{{- if .SQLite}}
	-- Last, so that the fixed-size columns before it are read without
	-- walking past the body.
	content       TEXT NOT NULL DEFAULT ''
{{- else}}
	content       TEXT NOT NULL DEFAULT '',
	search        tsvector NOT NULL
{{- end}}
);

-- One index per order, with id for ties, walked backwards for descending
-- pages; the status order is the lifecycle draft, review, published,
-- archived. Titles order case-insensitively in ASCII and then by code point
-- (SQLite's NOCASE; on PostgreSQL lower() of the "C" collation, whatever the
-- database's collation).
{{- if .SQLite}}
-- On SQLite each also carries the columns of the visibility rule, so that a
-- page is found by walking the index alone and only the rows it returns are
-- read from the table: a caller who sees few documents, or a deep page, then
-- costs index entries, not 2 KB rows.
CREATE INDEX documents_updated ON documents (updated_at, id, visibility, department_id, project_id, owner_id);
CREATE INDEX documents_created ON documents (created_at, id, visibility, department_id, project_id, owner_id);
CREATE INDEX documents_title ON documents (title COLLATE NOCASE, id, visibility, department_id, project_id, owner_id);
CREATE INDEX documents_status_order ON documents (
	(CASE status WHEN 'draft' THEN 0 WHEN 'review' THEN 1 WHEN 'published' THEN 2 ELSE 3 END), id,
	visibility, department_id, project_id, owner_id);
{{- else}}
CREATE INDEX documents_updated ON documents (updated_at, id);
CREATE INDEX documents_created ON documents (created_at, id);
CREATE INDEX documents_title ON documents (lower(title COLLATE "C"), id);
CREATE INDEX documents_status_order ON documents (
	(CASE status WHEN 'draft' THEN 0 WHEN 'review' THEN 1 WHEN 'published' THEN 2 ELSE 3 END), id);
CREATE INDEX documents_visibility ON documents (visibility, updated_at, id);
{{- end}}

-- One index per filter, ordered like the default page so that a filtered
-- first page reads no more rows than it returns.
CREATE INDEX documents_status ON documents (status, updated_at, id);
CREATE INDEX documents_department ON documents (department_id, updated_at, id);
CREATE INDEX documents_folder ON documents (folder_id, updated_at, id);
CREATE INDEX documents_project ON documents (project_id, updated_at, id);
CREATE INDEX documents_owner ON documents (owner_id, updated_at, id);
{{- if .SQLite}}
-- Serves each branch of the visibility rule (public; a department; a
-- project), so that counting what a caller sees reads index entries only.
CREATE INDEX documents_visibility ON documents (visibility, department_id, project_id, owner_id);

-- Keyed by seq, the rowid that the full-text index yields, with the columns
-- of visibility, filters and orders but not the text: a search checks each
-- match in an entry of some 200 bytes instead of its row with the body.
CREATE INDEX documents_by_seq ON documents (
	seq, id, visibility, department_id, project_id, owner_id, status, folder_id, updated_at, created_at);
{{- else}}
CREATE INDEX documents_search ON documents USING gin (search);
{{- end}}

-- Tags in their original spelling and order; tag_norm (trimmed, lower case)
-- is what filters match, through the index that leads with it.
CREATE TABLE document_tags (
	document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	position    INTEGER NOT NULL,
	tag         TEXT NOT NULL,
	tag_norm    TEXT NOT NULL,
	PRIMARY KEY (document_id, position)
){{.WithoutRowid}};
CREATE INDEX document_tags_norm ON document_tags (tag_norm, document_id);

-- Every saved state; number 1 is the creation, the highest the current one.
-- folder_id, department_id and project_id are kept as they were, without
-- references, so that history outlives what it names. tags is a JSON array
-- of strings on SQLite.
CREATE TABLE document_versions (
	document_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	number        INTEGER NOT NULL,
	title         TEXT NOT NULL,
	summary       TEXT NOT NULL,
	content_type  TEXT NOT NULL,
	status        TEXT NOT NULL,
	visibility    TEXT NOT NULL,
	tags          {{.Strings}} NOT NULL,{{if .SQLite}} -- JSON array of strings{{end}}
	folder_id     TEXT,
	department_id TEXT,
	project_id    TEXT,
	created_at    {{.Time}},
	created_by    TEXT NOT NULL REFERENCES users(id),
	content       TEXT NOT NULL,
	PRIMARY KEY (document_id, number)
);
{{- if .Postgres}}
CREATE INDEX document_versions_created_by ON document_versions (created_by);
{{- else}}

-- The full-text index reads its text from documents (external content), so
-- bodies are stored once. Triggers keep it in step inside the writing
-- transaction, whoever writes. unicode61 with remove_diacritics 2 folds case
-- and accents; no stemming and no stop words.
CREATE VIRTUAL TABLE documents_fts USING fts5(
	title, summary, content,
	content = 'documents', content_rowid = 'seq',
	tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
	INSERT INTO documents_fts (rowid, title, summary, content)
	VALUES (new.seq, new.title, new.summary, new.content);
END;

CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
	INSERT INTO documents_fts (documents_fts, rowid, title, summary, content)
	VALUES ('delete', old.seq, old.title, old.summary, old.content);
END;

-- A save that leaves the text alone (a status change) leaves the index alone.
CREATE TRIGGER documents_fts_update AFTER UPDATE OF title, summary, content ON documents
WHEN old.title IS NOT new.title OR old.summary IS NOT new.summary OR old.content IS NOT new.content
BEGIN
	INSERT INTO documents_fts (documents_fts, rowid, title, summary, content)
	VALUES ('delete', old.seq, old.title, old.summary, old.content);
	INSERT INTO documents_fts (rowid, title, summary, content)
	VALUES (new.seq, new.title, new.summary, new.content);
END;
{{- end}}
