-- helpers_present: which of the helper functions named in $2 exist in schema $1 (by name).
SELECT coalesce(pg_catalog.array_agg(DISTINCT p.proname::text), '{}')
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1 AND p.proname = ANY ($2::text[])
