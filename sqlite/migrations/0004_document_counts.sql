-- The number of documents per combination of the columns the visibility
-- rule and the cheap filters read, kept in step by triggers inside every
-- writing transaction. A page's total is then a sum over some hundreds of
-- combinations, whatever the number of documents, instead of a count that
-- walks every visible document (milliseconds at 10,000 documents, most of a
-- second at a million). '' stands for a NULL department or project, which
-- no filter value equals.
CREATE TABLE document_counts (
	visibility    TEXT NOT NULL,
	department_id TEXT NOT NULL,
	project_id    TEXT NOT NULL,
	owner_id      TEXT NOT NULL,
	n             INTEGER NOT NULL,
	PRIMARY KEY (visibility, department_id, project_id, owner_id)
) WITHOUT ROWID;

INSERT INTO document_counts (visibility, department_id, project_id, owner_id, n)
SELECT visibility, COALESCE(department_id, ''), COALESCE(project_id, ''), owner_id, count(*)
FROM documents GROUP BY 1, 2, 3, 4;

CREATE TRIGGER document_counts_insert AFTER INSERT ON documents BEGIN
	INSERT OR IGNORE INTO document_counts (visibility, department_id, project_id, owner_id, n)
	VALUES (new.visibility, COALESCE(new.department_id, ''), COALESCE(new.project_id, ''), new.owner_id, 0);
	UPDATE document_counts SET n = n + 1
	WHERE visibility = new.visibility AND department_id = COALESCE(new.department_id, '')
	  AND project_id = COALESCE(new.project_id, '') AND owner_id = new.owner_id;
END;

CREATE TRIGGER document_counts_delete AFTER DELETE ON documents BEGIN
	UPDATE document_counts SET n = n - 1
	WHERE visibility = old.visibility AND department_id = COALESCE(old.department_id, '')
	  AND project_id = COALESCE(old.project_id, '') AND owner_id = old.owner_id;
END;

CREATE TRIGGER document_counts_update AFTER UPDATE OF visibility, department_id, project_id, owner_id ON documents
WHEN old.visibility IS NOT new.visibility OR old.department_id IS NOT new.department_id
  OR old.project_id IS NOT new.project_id OR old.owner_id IS NOT new.owner_id
BEGIN
	UPDATE document_counts SET n = n - 1
	WHERE visibility = old.visibility AND department_id = COALESCE(old.department_id, '')
	  AND project_id = COALESCE(old.project_id, '') AND owner_id = old.owner_id;
	INSERT OR IGNORE INTO document_counts (visibility, department_id, project_id, owner_id, n)
	VALUES (new.visibility, COALESCE(new.department_id, ''), COALESCE(new.project_id, ''), new.owner_id, 0);
	UPDATE document_counts SET n = n + 1
	WHERE visibility = new.visibility AND department_id = COALESCE(new.department_id, '')
	  AND project_id = COALESCE(new.project_id, '') AND owner_id = new.owner_id;
END;
