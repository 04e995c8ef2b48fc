-- sweep_login_staged: delete the rows of table @S@.@T@ (no job id, e.g. bulk_staging) whose
-- login column @L@ is the run-scoped login $1 (ADR 0049); no other login's row is touched.
DELETE FROM @S@.@T@ WHERE @L@ OPERATOR(pg_catalog.=) $1::text
