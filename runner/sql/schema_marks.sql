-- schema_marks: whether schema $1 and role $2 exist, and whether each carries install's mark
-- (comment $3), i.e. was created by `schema install`.
SELECT n.oid IS NOT NULL,
       coalesce(pg_catalog.obj_description(n.oid, 'pg_namespace') = $3, false),
       r.oid IS NOT NULL,
       coalesce(pg_catalog.shobj_description(r.oid, 'pg_authid') = $3, false)
FROM (SELECT 1) AS one
LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = $1
LEFT JOIN pg_catalog.pg_roles r ON r.rolname = $2
