-- The comments version of a document in two numbers: seq moves at every
-- write of its comments; threads_seq is seq as it was after the last write
-- that was not a reaction. A reader that keeps a document's threads in
-- memory (package comments) re-reads only the reactions of its window when
-- only reactions changed since it read it: a reaction is the commonest
-- write of comments, and the reactions of a window are a small part of it.
ALTER TABLE comment_versions ADD COLUMN threads_seq BIGINT NOT NULL DEFAULT 0;
