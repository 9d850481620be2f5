-- Comments on documents (product.md section 18). A root (parent_id NULL)
-- opens a thread; a reply names its root (one level). Only a root has an
-- anchor: quote, prefix and suffix as normalised when it was made, and its
-- state ('' for a page comment and every reply) and position (the byte
-- offset of the quote in the document's reading text while attached, -1
-- otherwise), which every change of the content sets again in its own
-- transaction. A comment sees its document's visibility and trash through
-- a join; a purge deletes it with the document (ON DELETE CASCADE).
CREATE TABLE comments (
	id           TEXT PRIMARY KEY,
	document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	parent_id    TEXT REFERENCES comments(id) ON DELETE CASCADE,
	author_id    TEXT NOT NULL REFERENCES users(id),
	body         TEXT NOT NULL,
	quote        TEXT NOT NULL DEFAULT '',
	prefix       TEXT NOT NULL DEFAULT '',
	suffix       TEXT NOT NULL DEFAULT '',
	anchor_state TEXT NOT NULL DEFAULT '' CHECK (anchor_state IN ('', 'attached', 'outdated')),
	position     {{.Int64}} NOT NULL DEFAULT -1,
	created_at   {{.Time}},
	updated_at   {{.Time}},
	edited       {{.Bool}} NOT NULL DEFAULT {{.False}},
	deleted      {{.Bool}} NOT NULL DEFAULT {{.False}},
	resolved_at  {{.MaybeTime}},
	resolved_by  TEXT REFERENCES users(id)
);
-- A document's threads (parent_id IS NULL) of a status (resolved_at),
-- their count, the open threads of each document of a list page, and the
-- cascade of a purge (not partial, so that it serves every comment of the
-- document). A page of threads sorts at most quire.MaxThreads of them by
-- anchor.
CREATE INDEX comments_document ON comments (document_id, parent_id, resolved_at, created_at, id);
-- The anchored threads of a document, re-found at each change of its content.
CREATE INDEX comments_anchored ON comments (document_id) WHERE anchor_state <> '';
-- A thread's replies, oldest first (and the cascade from their root).
CREATE INDEX comments_replies ON comments (parent_id, created_at, id);
{{- if .Postgres}}
CREATE INDEX comments_author ON comments (author_id);
CREATE INDEX comments_resolved_by ON comments (resolved_by);
{{- end}}

-- One reaction of a user to a comment, one of quire.Reactions; it goes
-- with its comment.
CREATE TABLE comment_reactions (
	comment_id TEXT NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
	user_id    TEXT NOT NULL REFERENCES users(id),
	emoji      TEXT NOT NULL,
	created_at {{.Time}},
	PRIMARY KEY (comment_id, user_id, emoji)
){{.WithoutRowid}};
{{- if .Postgres}}
CREATE INDEX comment_reactions_user ON comment_reactions (user_id);
{{- end}}
