-- schema_objects: the top-level objects of schema $1 that `schema install` can create
-- (functions, tables, composite types), as SQL identities for COMMENT and DROP, each with
-- whether it carries install's mark (comment $2). Run with search_path = pg_catalog so the
-- identities are qualified.
SELECT 'FUNCTION', p.oid::pg_catalog.regprocedure::text,
       coalesce(pg_catalog.obj_description(p.oid, 'pg_proc') = $2, false)
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1 AND p.prokind = 'f'
UNION ALL
SELECT 'TABLE', c.oid::pg_catalog.regclass::text,
       coalesce(pg_catalog.obj_description(c.oid, 'pg_class') = $2, false)
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
UNION ALL
SELECT 'TYPE', t.oid::pg_catalog.regtype::text,
       coalesce(pg_catalog.obj_description(t.oid, 'pg_type') = $2, false)
FROM pg_catalog.pg_type t
JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
JOIN pg_catalog.pg_class c ON c.oid = t.typrelid
WHERE n.nspname = $1 AND c.relkind = 'c'
