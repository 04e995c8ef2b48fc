-- sweep_login_ids: job ids (column @ID@) of table @S@.@T@ that a producer case wrote, found by
-- the login column @L@ wherever the rows landed (ADR 0049): every row of the run-scoped login
-- $1 (NULL: none), and the answered job ids $2 whose login is $3 and whose row was written
-- during the run: its 32-bit xmin, widened to xid8 as the newest such id at or below the
-- current one (the run spans far fewer than 2^31 transactions), is at or after the run's
-- start watermark $4 (run_began.sql; NULL: none qualifies). A row of another login, or one
-- that existed before the run, is never selected, whatever id a producer answers.
SELECT @ID@::bigint FROM @S@.@T@
WHERE @L@ OPERATOR(pg_catalog.=) $1::text
   OR (@ID@ OPERATOR(pg_catalog.=) ANY ($2::bigint[]) AND @L@ OPERATOR(pg_catalog.=) $3::text
       AND (SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::text::bigint)
           - ((SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::text::bigint)
              - xmin::text::bigint) % 4294967296 >= $4::bigint)
