-- sweep_login_rows: delete the rows of table @S@.@T@ that sweep_login_ids.sql selects (the
-- same predicate: the run-scoped login $1, or an answered job id in $2 enqueued by login $3
-- whose row was written at or after the run's start watermark $4; ADR 0049). A row of another
-- login, or one that existed before the run, is never deleted.
DELETE FROM @S@.@T@
WHERE @L@ OPERATOR(pg_catalog.=) $1::text
   OR (@ID@ OPERATOR(pg_catalog.=) ANY ($2::bigint[]) AND @L@ OPERATOR(pg_catalog.=) $3::text
       AND (SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::text::bigint)
           - ((SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::text::bigint)
              - xmin::text::bigint) % 4294967296 >= $4::bigint)
