-- scope_row_count: how many rows of table @S@.@T@ have a queue starting with $1 (run-scoped);
-- a rejected bulk batch must leave none.
SELECT count(*)::bigint FROM @S@.@T@ WHERE left(queue, length($1)) = $1
