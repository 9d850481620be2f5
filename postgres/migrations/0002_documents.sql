-- Folders, documents, their tags and versions, and the full-text index.

CREATE TABLE folders (
	id         text PRIMARY KEY,
	name       text NOT NULL,
	parent_id  text CONSTRAINT folders_parent_fkey REFERENCES folders(id),
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
CREATE INDEX folders_parent ON folders (parent_id);

-- search is the full-text vector of title (weight A), summary (B) and
-- content (C). The store computes it in Go, in the transaction that writes
-- the text (see search.go): words are split, lower-cased and stripped of
-- accents exactly as SQLite's FTS5 unicode61 tokenizer does, so that the
-- two stores find the same documents whatever the database's locale.
CREATE TABLE documents (
	id            text PRIMARY KEY,
	title         text NOT NULL,
	summary       text NOT NULL DEFAULT '',
	content_type  text NOT NULL CONSTRAINT documents_content_type_check CHECK (content_type IN ('html', 'markdown', 'plain')),
	status        text NOT NULL CONSTRAINT documents_status_check CHECK (status IN ('draft', 'review', 'published', 'archived')),
	visibility    text NOT NULL CONSTRAINT documents_visibility_check CHECK (visibility IN ('private', 'department', 'project', 'public')),
	folder_id     text CONSTRAINT documents_folder_fkey REFERENCES folders(id),
	department_id text CONSTRAINT documents_department_fkey REFERENCES departments(id),
	project_id    text CONSTRAINT documents_project_fkey REFERENCES projects(id),
	owner_id      text NOT NULL CONSTRAINT documents_owner_fkey REFERENCES users(id),
	version       integer NOT NULL,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL,
	content       text NOT NULL DEFAULT '',
	search        tsvector NOT NULL
);

-- One index per order, with id for ties, walked backwards for descending
-- pages. Titles order case-insensitively in ASCII and then by code point,
-- as SQLite's NOCASE does, whatever the database's collation; statuses
-- order along their lifecycle.
CREATE INDEX documents_updated ON documents (updated_at, id);
CREATE INDEX documents_created ON documents (created_at, id);
CREATE INDEX documents_title ON documents (lower(title COLLATE "C"), id);
CREATE INDEX documents_status_order ON documents (
	(CASE status WHEN 'draft' THEN 0 WHEN 'review' THEN 1 WHEN 'published' THEN 2 ELSE 3 END), id);

-- One index per filter, ordered like the default page.
CREATE INDEX documents_status ON documents (status, updated_at, id);
CREATE INDEX documents_visibility ON documents (visibility, updated_at, id);
CREATE INDEX documents_department ON documents (department_id, updated_at, id);
CREATE INDEX documents_folder ON documents (folder_id, updated_at, id);
CREATE INDEX documents_project ON documents (project_id, updated_at, id);
CREATE INDEX documents_owner ON documents (owner_id, updated_at, id);
CREATE INDEX documents_search ON documents USING gin (search);

-- Tags in their original spelling and order; tag_norm (trimmed, lower case)
-- is what filters match, through the index that leads with it.
CREATE TABLE document_tags (
	document_id text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	position    integer NOT NULL,
	tag         text NOT NULL,
	tag_norm    text NOT NULL,
	PRIMARY KEY (document_id, position)
);
CREATE INDEX document_tags_norm ON document_tags (tag_norm, document_id);

-- Every saved state; number 1 is the creation, the highest the current one.
-- folder_id, department_id and project_id are kept as they were, without
-- references, so that history outlives what it names.
CREATE TABLE document_versions (
	document_id   text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	number        integer NOT NULL,
	title         text NOT NULL,
	summary       text NOT NULL,
	content_type  text NOT NULL,
	status        text NOT NULL,
	visibility    text NOT NULL,
	tags          text[] NOT NULL,
	folder_id     text,
	department_id text,
	project_id    text,
	created_at    timestamptz NOT NULL,
	created_by    text NOT NULL REFERENCES users(id),
	content       text NOT NULL,
	PRIMARY KEY (document_id, number)
);
CREATE INDEX document_versions_created_by ON document_versions (created_by);
