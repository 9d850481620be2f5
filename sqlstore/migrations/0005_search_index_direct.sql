{{if .Postgres -}}
-- documents_search takes a saved document's lexemes into the index at once
-- instead of through GIN's pending list (fastupdate, on by default). With
-- the list, the save that finds it past gin_pending_list_limit (4 MB) merges
-- all of it into the index inside its own statement. Once the index is
-- large that merge outlasts statement_timeout (5 s by default): the save
-- fails with 503, its merge is cancelled before it has emptied a page of
-- the list, and the next save past the limit starts it again. Seeding the
-- bench with 32 writers, from about 300,000 documents one save failed every
-- 5 s while the list grew without end (24,000 pages, 190 MB), and every
-- search reads the whole list. PostgreSQL's manual gives the trade: without
-- the list each save does its own index work, at a steady cost.
ALTER INDEX documents_search SET (fastupdate = off);
-- Entries already in the list stay there until moved; move them now.
SELECT gin_clean_pending_list('documents_search');
{{- end}}
