-- The number of documents per combination of the columns the visibility
-- rule and the cheap filters read, kept in step by a trigger inside every
-- writing transaction. A page's total is then a sum over some hundreds of
-- combinations, whatever the number of documents, instead of a count that
-- visits every visible document. '' stands for a NULL department or
-- project, which no filter value equals. Writers of the same combination
-- queue on its row until they commit, which costs little next to the
-- document's own row and version.
CREATE TABLE document_counts (
	visibility    text NOT NULL,
	department_id text NOT NULL,
	project_id    text NOT NULL,
	owner_id      text NOT NULL,
	n             bigint NOT NULL,
	PRIMARY KEY (visibility, department_id, project_id, owner_id)
);

INSERT INTO document_counts (visibility, department_id, project_id, owner_id, n)
SELECT visibility, COALESCE(department_id, ''), COALESCE(project_id, ''), owner_id, count(*)
FROM documents GROUP BY 1, 2, 3, 4;

CREATE FUNCTION document_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('DELETE', 'UPDATE') THEN
		UPDATE document_counts SET n = n - 1
		WHERE visibility = OLD.visibility AND department_id = COALESCE(OLD.department_id, '')
		  AND project_id = COALESCE(OLD.project_id, '') AND owner_id = OLD.owner_id;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		INSERT INTO document_counts (visibility, department_id, project_id, owner_id, n)
		VALUES (NEW.visibility, COALESCE(NEW.department_id, ''), COALESCE(NEW.project_id, ''), NEW.owner_id, 1)
		ON CONFLICT (visibility, department_id, project_id, owner_id) DO UPDATE SET n = document_counts.n + 1;
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER document_counts_insert_delete AFTER INSERT OR DELETE ON documents
FOR EACH ROW EXECUTE FUNCTION document_counts_track();

CREATE TRIGGER document_counts_update AFTER UPDATE OF visibility, department_id, project_id, owner_id ON documents
FOR EACH ROW WHEN (OLD.visibility IS DISTINCT FROM NEW.visibility OR OLD.department_id IS DISTINCT FROM NEW.department_id
	OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.owner_id IS DISTINCT FROM NEW.owner_id)
EXECUTE FUNCTION document_counts_track();
