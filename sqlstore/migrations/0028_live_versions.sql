-- The authors of a version made from the live text (product.md section 20):
-- everyone whose live changes it holds, in the order of their first change
-- there, written by SaveLive in the transaction that writes the version.
-- Versions not made from the live text have no rows. A table of its own:
-- most versions have none, and a version has several authors.
CREATE TABLE version_authors (
	document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	number      INTEGER NOT NULL,
	position    INTEGER NOT NULL,
	user_id     TEXT NOT NULL REFERENCES users(id),
	PRIMARY KEY (document_id, number, position),
	FOREIGN KEY (document_id, number) REFERENCES document_versions(document_id, number) ON DELETE CASCADE
){{.WithoutRowid}};
{{- if .Postgres}}
CREATE INDEX version_authors_user ON version_authors (user_id);
{{- end}}

-- Presence across nodes (product.md section 20): who each node has on a
-- document, written by the node when it changes and again every few seconds
-- while it lasts (seen_at), so that a node that dies without saying so
-- drops out once its rows are old. Only nodes of a shared database (on
-- PostgreSQL) write it: one process on SQLite knows everyone itself.
CREATE TABLE live_presence (
	document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	node        TEXT NOT NULL,
	position    INTEGER NOT NULL,
	user_id     TEXT NOT NULL REFERENCES users(id),
	editing     {{.Bool}} NOT NULL,
	seen_at     {{.Time}},
	PRIMARY KEY (document_id, node, position)
){{.WithoutRowid}};
{{- if .Postgres}}
CREATE INDEX live_presence_user ON live_presence (user_id);
{{- end}}
