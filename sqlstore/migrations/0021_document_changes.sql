{{if .SQLite -}}
-- The rows of documents changed, in the order of their changes, for the
-- index of documents the store keeps in memory (package docindex): it
-- reads the changes after the last one it applied, in the snapshot of the
-- read that uses it, so that it follows every write, this process's and
-- any other's (an admin command beside the server), and answers only when
-- it holds exactly that snapshot. Every change of a document's text, tags
-- or columns writes its row (a change of tags rewrites the row's
-- updated_at), so the three triggers on documents see them all. The server
-- deletes the changes it has applied, keeping the last one so that ids are
-- never reused.
CREATE TABLE document_changes (
	id  INTEGER PRIMARY KEY,
	seq INTEGER NOT NULL
);

CREATE TRIGGER document_changes_insert AFTER INSERT ON documents BEGIN
	INSERT INTO document_changes (seq) VALUES (new.seq);
END;
CREATE TRIGGER document_changes_update AFTER UPDATE ON documents BEGIN
	INSERT INTO document_changes (seq) VALUES (new.seq);
END;
CREATE TRIGGER document_changes_delete AFTER DELETE ON documents BEGIN
	INSERT INTO document_changes (seq) VALUES (old.seq);
END;
{{- end}}
