-- producer_can_execute_insert_job: whether role $1 may EXECUTE the v1.1 insert_job (@S@ = the
-- quoted schema); no row when the role does not exist.
SELECT pg_catalog.has_function_privilege(
           r.oid,
           '@S@.insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], bytea, varbit, bytea, bytea, jsonb)'::regprocedure,
           'EXECUTE')
FROM pg_catalog.pg_roles r
WHERE r.rolname = $1
