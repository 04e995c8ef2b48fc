-- compat_detect: does schema $1 hold released Awa rather than the contract? One row:
-- (1) a schema_version table; (2) an insert_job_compat taking p_state (released Awa's SQL
-- producer entry point, from schema version 10, awa-cli 0.5.5); (3) whether it also takes
-- p_ordering_key (schema version 18, first released in 0.6.0); (4) an insert_job (the contract's
-- entry point, which released Awa lacks); (5) the queue-storage locator function (schema version
-- 12, first released in 0.6.0); (6) released Awa's own shape, a `jobs` relation and a `job_state`
-- type, so that an older release without insert_job_compat is told apart from some other
-- schema that happens to keep a schema_version table.
SELECT pg_catalog.to_regclass(pg_catalog.format('%I.schema_version', $1::text)) IS NOT NULL,
       EXISTS (SELECT 1
               FROM pg_catalog.pg_proc p
               JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = $1::text AND p.proname = 'insert_job_compat'
                 AND 'p_state' = ANY (p.proargnames)),
       EXISTS (SELECT 1
               FROM pg_catalog.pg_proc p
               JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = $1::text AND p.proname = 'insert_job_compat'
                 AND 'p_state' = ANY (p.proargnames)
                 AND 'p_ordering_key' = ANY (p.proargnames)),
       EXISTS (SELECT 1
               FROM pg_catalog.pg_proc p
               JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = $1::text AND p.proname = 'insert_job'),
       pg_catalog.to_regprocedure(
           pg_catalog.format('%I.active_queue_storage_schema()', $1::text)) IS NOT NULL,
       pg_catalog.to_regclass(pg_catalog.format('%I.jobs', $1::text)) IS NOT NULL
           AND pg_catalog.to_regtype(pg_catalog.format('%I.job_state', $1::text)) IS NOT NULL
