-- sweep_job_ids: job ids (column @ID@) of table @S@.@T@ whose queue starts with $1.
SELECT @ID@::bigint FROM @S@.@T@ WHERE pg_catalog.left(queue, pg_catalog.length($1)) = $1
