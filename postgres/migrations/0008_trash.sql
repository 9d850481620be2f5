-- The trash (product.md section 7). A deleted document keeps its row, tags
-- and versions, marked with when (deleted_at; NULL outside the trash) and by
-- whom it was deleted, until it is restored or purged.
--
-- Every query of live documents says d.deleted_at IS NULL. The indexes that
-- give pages their order and filters stay as they are: PostgreSQL reads each
-- row of a page from the table anyway (for the visibility columns), where
-- the condition costs nothing, and the trash holds few documents next to the
-- rest (it is purged after --trash-retention).
ALTER TABLE documents
	ADD COLUMN deleted_at timestamptz,
	ADD COLUMN deleted_by text CONSTRAINT documents_deleted_by_fkey REFERENCES users(id);

-- The trash, newest deletion first; the purge walks it from the oldest end.
CREATE INDEX documents_trash ON documents (deleted_at, id) WHERE deleted_at IS NOT NULL;

-- document_counts counts live documents only: a document leaves its count
-- when it goes to the trash and comes back when it is restored.
CREATE OR REPLACE FUNCTION document_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.deleted_at IS NULL THEN
		UPDATE document_counts SET n = n - 1
		WHERE visibility = OLD.visibility AND department_id = COALESCE(OLD.department_id, '')
		  AND project_id = COALESCE(OLD.project_id, '') AND owner_id = OLD.owner_id;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
		INSERT INTO document_counts (visibility, department_id, project_id, owner_id, n)
		VALUES (NEW.visibility, COALESCE(NEW.department_id, ''), COALESCE(NEW.project_id, ''), NEW.owner_id, 1)
		ON CONFLICT (visibility, department_id, project_id, owner_id) DO UPDATE SET n = document_counts.n + 1;
	END IF;
	RETURN NULL;
END
$$;

DROP TRIGGER document_counts_update ON documents;
CREATE TRIGGER document_counts_update AFTER UPDATE OF visibility, department_id, project_id, owner_id, deleted_at ON documents
FOR EACH ROW WHEN ((OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
	OR (NEW.deleted_at IS NULL AND (OLD.visibility IS DISTINCT FROM NEW.visibility
	OR OLD.department_id IS DISTINCT FROM NEW.department_id OR OLD.project_id IS DISTINCT FROM NEW.project_id
	OR OLD.owner_id IS DISTINCT FROM NEW.owner_id)))
EXECUTE FUNCTION document_counts_track();
