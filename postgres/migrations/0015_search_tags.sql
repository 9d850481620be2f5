-- A search word also matches a document's tags, as words: each document's
-- search vector gains its tags' words with weight D (search.go). The vector
-- is computed in Go, so the store rebuilds the vectors of the documents that
-- have tags right after this file, in the same transaction (db.go,
-- afterMigration).
SELECT 1;
