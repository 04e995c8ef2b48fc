-- sweep_queue_rows: delete rows of table @S@.@T@ whose queue starts with $1 (run-scoped).
DELETE FROM @S@.@T@ WHERE pg_catalog.left(queue, pg_catalog.length($1)) = $1
