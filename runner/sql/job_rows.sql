-- job_rows: how many job rows of table @S@.@T@ a check can see whose queue is one of $1, or
-- starts with the run-scoped prefix $2 (NULL: no prefix), or that the login $3 wrote (through
-- the login column @L@, which is NULL::text when the table records none). The row-count rule
-- (contract::judge::row_count) compares it with the jobs a check asked for.
SELECT pg_catalog.count(*)::bigint FROM @S@.@T@
WHERE queue = ANY ($1::text[])
   OR ($2::text IS NOT NULL AND pg_catalog.left(queue, pg_catalog.length($2)) = $2)
   OR ($3::text IS NOT NULL AND @L@ = $3)
