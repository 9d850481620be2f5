-- The version of a document's comments: every write of its comments
-- (create, edit, delete, resolve, reopen, react) and every save that
-- re-anchors its threads adds one, in its transaction. A reader that keeps
-- a document's threads in memory (package comments) reads this one number,
-- with the reader's visibility, to know whether what it holds is still what
-- the database has, whichever node wrote it. A table of its own rather
-- than a column of documents: a comment write does not rewrite the
-- document's row (nor fire what follows the document's changes).
CREATE TABLE comment_versions (
	document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
	seq         BIGINT NOT NULL
){{.WithoutRowid}};
