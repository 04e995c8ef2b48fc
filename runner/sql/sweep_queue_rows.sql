-- sweep_queue_rows: delete rows of table @S@.@T@ whose queue starts with one of the run-scoped
-- prefixes $1 (a case's, or a batch of cases').
DELETE FROM @S@.@T@
WHERE EXISTS (SELECT FROM pg_catalog.unnest($1::text[]) AS s(p)
              WHERE pg_catalog.left(queue, pg_catalog.length(s.p)) = s.p)
