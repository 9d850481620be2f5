-- The comments version of a document in two numbers and a name: seq moves
-- at every write of its comments; threads_seq is seq as it was after the
-- last write that was not a reaction; reacted_id is the comment of the last
-- write when it was a reaction (NULL otherwise). A reader that keeps a
-- window of a document's threads in memory (package comments) re-reads
-- only the reactions of its window when only reactions changed since it
-- read it, and only those of one comment when one reaction did: a reaction
-- is the commonest write of comments.
ALTER TABLE comment_versions ADD COLUMN threads_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE comment_versions ADD COLUMN reacted_id TEXT;
