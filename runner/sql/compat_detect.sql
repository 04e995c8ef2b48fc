-- compat_detect: does schema $1 hold released Awa 0.6.x rather than the contract? One row:
-- a schema_version table; an insert_job_compat taking p_ordering_key (released since schema
-- version 18); an insert_job (the contract's entry point, which released Awa lacks); the
-- queue-storage locator function. The compat profile runs only on (true, true, false, true).
SELECT pg_catalog.to_regclass(pg_catalog.format('%I.schema_version', $1::text)) IS NOT NULL,
       EXISTS (SELECT 1
               FROM pg_catalog.pg_proc p
               JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = $1::text AND p.proname = 'insert_job_compat'
                 AND 'p_ordering_key' = ANY (p.proargnames)),
       EXISTS (SELECT 1
               FROM pg_catalog.pg_proc p
               JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = $1::text AND p.proname = 'insert_job'),
       pg_catalog.to_regprocedure(
           pg_catalog.format('%I.active_queue_storage_schema()', $1::text)) IS NOT NULL
