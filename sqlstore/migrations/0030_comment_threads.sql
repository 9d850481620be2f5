-- The number of threads of each document (its roots, a Deleted placeholder
-- included, as quire.MaxThreads counts them), kept beside its comments
-- version by every create and delete of a root, in its transaction: a
-- create compares it with the limit instead of counting the document's
-- roots, which made filling a document quadratic. Documents whose comments
-- were written before comment_versions existed get their row (version 0,
-- as CommentsSeq read them).
ALTER TABLE comment_versions ADD COLUMN threads {{.Int64}} NOT NULL DEFAULT 0;
INSERT INTO comment_versions (document_id, seq, threads)
SELECT document_id, 0, count(*) FROM comments WHERE parent_id IS NULL GROUP BY document_id
ON CONFLICT (document_id) DO UPDATE SET threads = excluded.threads;
