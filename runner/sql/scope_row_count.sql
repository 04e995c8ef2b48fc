-- scope_row_count: how many rows of table @S@.@T@ have a queue starting with $1 (run-scoped);
-- a rejected bulk batch must leave none.
SELECT pg_catalog.count(*)::bigint FROM @S@.@T@ WHERE pg_catalog.left(queue, pg_catalog.length($1)) = $1
