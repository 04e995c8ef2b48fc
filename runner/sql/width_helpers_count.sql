-- width_helpers_count: how many of the optional width helpers (concurrency_shard,
-- ordering_shard) schema $1 has.
SELECT count(*)
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1 AND p.proname IN ('concurrency_shard', 'ordering_shard')
