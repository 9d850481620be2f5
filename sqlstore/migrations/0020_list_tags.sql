{{if .Postgres -}}
-- A list filtered by tags is answered from document_tags alone. Each tag row
-- carries a copy of the columns of its document that such a list reads
-- (status, the columns of the visibility rule, updated_at for the default
-- order, and whether the document is in the trash), so that the exact total
-- of a page is an index-only scan of the tag's entries instead of a visit of
-- every matching document's row, and the page itself is read in order from
-- the same index. department_id and project_id hold '' for NULL, as in
-- document_counts: no bound value equals it. counted is true on exactly one
-- row of each document and tag_norm (the first stored), so that counting
-- rows counts documents even if a document carries two spellings of a tag
-- (the HTTP layer drops such repeats; the store does not rely on it).
--
-- The copies are kept by triggers in the writing transaction: a tag row
-- takes its document's values when inserted, and a change of any of those
-- columns of a document is copied to its tag rows.
ALTER TABLE document_tags
	ADD COLUMN status        text,
	ADD COLUMN visibility    text,
	ADD COLUMN owner_id      text,
	ADD COLUMN department_id text,
	ADD COLUMN project_id    text,
	ADD COLUMN updated_at    timestamptz,
	ADD COLUMN live          boolean,
	ADD COLUMN counted       boolean;

UPDATE document_tags t SET status = d.status, visibility = d.visibility, owner_id = d.owner_id,
	department_id = COALESCE(d.department_id, ''), project_id = COALESCE(d.project_id, ''),
	updated_at = d.updated_at, live = d.deleted_at IS NULL,
	counted = NOT EXISTS (SELECT 1 FROM document_tags o
		WHERE o.document_id = t.document_id AND o.tag_norm = t.tag_norm AND o.position < t.position)
FROM documents d WHERE d.id = t.document_id;

ALTER TABLE document_tags
	ALTER COLUMN status SET NOT NULL,
	ALTER COLUMN visibility SET NOT NULL,
	ALTER COLUMN owner_id SET NOT NULL,
	ALTER COLUMN department_id SET NOT NULL,
	ALTER COLUMN project_id SET NOT NULL,
	ALTER COLUMN updated_at SET NOT NULL,
	ALTER COLUMN live SET NOT NULL,
	ALTER COLUMN counted SET NOT NULL;

-- The live tag rows of a tag and status, newest first, with what the
-- visibility rule reads: the total and the default page of a tag filter
-- without touching documents. Without a status filter the index is read
-- over the tag's whole range.
CREATE INDEX document_tags_list ON document_tags (tag_norm, status, updated_at, document_id)
	INCLUDE (visibility, owner_id, department_id, project_id) WHERE live AND counted;

CREATE FUNCTION document_tags_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	SELECT d.status, d.visibility, d.owner_id, COALESCE(d.department_id, ''), COALESCE(d.project_id, ''),
		d.updated_at, d.deleted_at IS NULL
	INTO NEW.status, NEW.visibility, NEW.owner_id, NEW.department_id, NEW.project_id, NEW.updated_at, NEW.live
	FROM documents d WHERE d.id = NEW.document_id;
	-- Rows inserted before this one by the same statement are visible here.
	NEW.counted := NOT EXISTS (SELECT 1 FROM document_tags o
		WHERE o.document_id = NEW.document_id AND o.tag_norm = NEW.tag_norm);
	RETURN NEW;
END
$$;

CREATE TRIGGER document_tags_fill BEFORE INSERT ON document_tags
FOR EACH ROW EXECUTE FUNCTION document_tags_fill();

CREATE FUNCTION document_tags_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE document_tags SET status = NEW.status, visibility = NEW.visibility, owner_id = NEW.owner_id,
		department_id = COALESCE(NEW.department_id, ''), project_id = COALESCE(NEW.project_id, ''),
		updated_at = NEW.updated_at, live = NEW.deleted_at IS NULL
	WHERE document_id = NEW.id;
	RETURN NULL;
END
$$;

CREATE TRIGGER document_tags_follow AFTER UPDATE OF status, visibility, owner_id, department_id, project_id,
	updated_at, deleted_at ON documents
FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.visibility IS DISTINCT FROM NEW.visibility
	OR OLD.owner_id IS DISTINCT FROM NEW.owner_id OR OLD.department_id IS DISTINCT FROM NEW.department_id
	OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.updated_at IS DISTINCT FROM NEW.updated_at
	OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
EXECUTE FUNCTION document_tags_follow();
{{- end}}
