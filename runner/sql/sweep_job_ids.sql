-- sweep_job_ids: job ids (column @ID@) of table @S@.@T@ whose queue starts with one of the
-- run-scoped prefixes $1 (a case's, or a batch of cases').
SELECT @ID@::bigint FROM @S@.@T@
WHERE EXISTS (SELECT FROM pg_catalog.unnest($1::text[]) AS s(p)
              WHERE pg_catalog.left(queue, pg_catalog.length(s.p)) = s.p)
