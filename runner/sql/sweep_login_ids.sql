-- sweep_login_ids: job ids (column @ID@) of table @S@.@T@ that a producer case wrote, found by
-- the login column @L@ wherever the rows landed (ADR 0049): every row of the run-scoped login
-- $1 (NULL: none), and the answered job ids $2 whose login is $3. A row of another login is
-- never selected.
SELECT @ID@::bigint FROM @S@.@T@
WHERE @L@ OPERATOR(pg_catalog.=) $1::text
   OR (@ID@ OPERATOR(pg_catalog.=) ANY ($2::bigint[]) AND @L@ OPERATOR(pg_catalog.=) $3::text)
