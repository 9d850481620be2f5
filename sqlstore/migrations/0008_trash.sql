-- The trash (product.md section 7). A deleted document keeps its row, tags,
-- versions and full-text entry, marked with when (deleted_at; none for a
-- document outside the trash) and by whom it was deleted, until it is
-- restored or purged.
ALTER TABLE documents ADD COLUMN deleted_at {{.MaybeTime}};
ALTER TABLE documents ADD COLUMN deleted_by TEXT REFERENCES users(id);
{{if .SQLite}}
-- Every query of live documents says d.deleted_at = 0. The indexes that give
-- the pages their order, their filters, the counts of what a caller sees and
-- the rows a search match is checked against hold live documents only
-- (partial indexes with that same condition), so that a page is still found
-- by walking one index alone and never steps over trashed documents: the
-- new columns come after the content in the row, where checking them would
-- read past the body.
DROP INDEX documents_updated;
DROP INDEX documents_created;
DROP INDEX documents_title;
DROP INDEX documents_status_order;
DROP INDEX documents_status;
DROP INDEX documents_department;
DROP INDEX documents_folder;
DROP INDEX documents_project;
DROP INDEX documents_owner;
DROP INDEX documents_visibility;
DROP INDEX documents_by_seq;

CREATE INDEX documents_updated ON documents (updated_at, id, visibility, department_id, project_id, owner_id)
	WHERE deleted_at = 0;
CREATE INDEX documents_created ON documents (created_at, id, visibility, department_id, project_id, owner_id)
	WHERE deleted_at = 0;
CREATE INDEX documents_title ON documents (title COLLATE NOCASE, id, visibility, department_id, project_id, owner_id)
	WHERE deleted_at = 0;
CREATE INDEX documents_status_order ON documents (
	(CASE status WHEN 'draft' THEN 0 WHEN 'review' THEN 1 WHEN 'published' THEN 2 ELSE 3 END), id,
	visibility, department_id, project_id, owner_id) WHERE deleted_at = 0;
CREATE INDEX documents_status ON documents (status, updated_at, id) WHERE deleted_at = 0;
CREATE INDEX documents_department ON documents (department_id, updated_at, id) WHERE deleted_at = 0;
CREATE INDEX documents_folder ON documents (folder_id, updated_at, id) WHERE deleted_at = 0;
CREATE INDEX documents_project ON documents (project_id, updated_at, id) WHERE deleted_at = 0;
CREATE INDEX documents_owner ON documents (owner_id, updated_at, id) WHERE deleted_at = 0;
CREATE INDEX documents_visibility ON documents (visibility, department_id, project_id, owner_id) WHERE deleted_at = 0;
CREATE INDEX documents_by_seq ON documents (
	seq, id, visibility, department_id, project_id, owner_id, status, folder_id, updated_at, created_at)
	WHERE deleted_at = 0;

-- The trash, newest deletion first, with the columns of the visibility rule;
-- the purge walks it from the oldest end.
CREATE INDEX documents_trash ON documents (deleted_at, id, visibility, department_id, project_id, owner_id)
	WHERE deleted_at <> 0;
-- A folder that holds only trashed documents may be deleted: it finds them.
CREATE INDEX documents_trash_folder ON documents (folder_id) WHERE deleted_at <> 0;

-- document_counts counts live documents only: a document leaves its count
-- when it goes to the trash and comes back when it is restored.
DROP TRIGGER document_counts_insert;
DROP TRIGGER document_counts_delete;
DROP TRIGGER document_counts_update;

CREATE TRIGGER document_counts_insert AFTER INSERT ON documents WHEN new.deleted_at = 0 BEGIN
	INSERT OR IGNORE INTO document_counts (visibility, department_id, project_id, owner_id, n)
	VALUES ({{template "count_values" "new"}}, 0);
	UPDATE document_counts SET n = n + 1
	WHERE {{template "count_key" "new"}};
END;

CREATE TRIGGER document_counts_delete AFTER DELETE ON documents WHEN old.deleted_at = 0 BEGIN
	UPDATE document_counts SET n = n - 1
	WHERE {{template "count_key" "old"}};
END;

CREATE TRIGGER document_counts_update AFTER UPDATE OF visibility, department_id, project_id, owner_id, deleted_at ON documents
WHEN (old.deleted_at = 0) <> (new.deleted_at = 0)
  OR (new.deleted_at = 0 AND (old.visibility IS NOT new.visibility OR old.department_id IS NOT new.department_id
    OR old.project_id IS NOT new.project_id OR old.owner_id IS NOT new.owner_id))
BEGIN
	UPDATE document_counts SET n = n - 1
	WHERE old.deleted_at = 0 AND {{template "count_key" "old"}};
	INSERT OR IGNORE INTO document_counts (visibility, department_id, project_id, owner_id, n)
	SELECT {{template "count_values" "new"}}, 0
	WHERE new.deleted_at = 0;
	UPDATE document_counts SET n = n + 1
	WHERE new.deleted_at = 0 AND {{template "count_key" "new"}};
END;
{{- else}}
-- Every query of live documents says d.deleted_at IS NULL. The indexes that
-- give pages their order and filters stay as they are: PostgreSQL reads each
-- row of a page from the table anyway (for the visibility columns), where
-- the condition costs nothing, and the trash holds few documents next to the
-- rest (it is purged after --trash-retention).

-- The trash, newest deletion first; the purge walks it from the oldest end.
CREATE INDEX documents_trash ON documents (deleted_at, id) WHERE deleted_at IS NOT NULL;

-- document_counts counts live documents only: a document leaves its count
-- when it goes to the trash and comes back when it is restored.
{{template "counts_track" true}}

DROP TRIGGER document_counts_update ON documents;
CREATE TRIGGER document_counts_update AFTER UPDATE OF visibility, department_id, project_id, owner_id, deleted_at ON documents
FOR EACH ROW WHEN ((OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
	OR (NEW.deleted_at IS NULL AND (OLD.visibility IS DISTINCT FROM NEW.visibility
	OR OLD.department_id IS DISTINCT FROM NEW.department_id OR OLD.project_id IS DISTINCT FROM NEW.project_id
	OR OLD.owner_id IS DISTINCT FROM NEW.owner_id)))
EXECUTE FUNCTION document_counts_track();
{{- end}}
