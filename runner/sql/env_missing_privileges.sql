-- env_missing_privileges: the privileges the SQL suites need that the runner's role lacks, one
-- row each, for contract schema $1 and producer role $2 (server version number $3):
-- USAGE on the schema; EXECUTE on its functions; SELECT and DELETE on every table the sweep
-- reads by queue or job id; INSERT on queue_meta (queue widths); CREATEROLE and, on 16+, ADMIN
-- on the producer role (the temporary login role of the least-privilege cases), only when $4
-- (false for released Awa: the compat profile creates no role).
WITH ns AS (SELECT oid, nspname FROM pg_catalog.pg_namespace WHERE nspname = $1)
SELECT pg_catalog.format('USAGE on schema %I', ns.nspname)
FROM ns
WHERE NOT pg_catalog.has_schema_privilege(ns.oid, 'USAGE')
UNION ALL
SELECT pg_catalog.format('EXECUTE on function %s', p.oid::pg_catalog.regprocedure)
FROM pg_catalog.pg_proc p
JOIN ns ON ns.oid = p.pronamespace
WHERE p.prokind = 'f'
  AND p.prorettype <> 'pg_catalog.trigger'::pg_catalog.regtype
  AND NOT pg_catalog.has_function_privilege(p.oid, 'EXECUTE')
UNION ALL
SELECT pg_catalog.format('%s on table %I.%I', priv.name, ns.nspname, c.relname)
FROM pg_catalog.pg_class c
JOIN ns ON ns.oid = c.relnamespace
CROSS JOIN (VALUES ('SELECT'), ('DELETE'), ('INSERT')) AS priv(name)
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND (priv.name <> 'INSERT' OR c.relname = 'queue_meta')
  AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = c.oid AND a.attname IN ('queue', 'job_id') AND NOT a.attisdropped)
  AND NOT pg_catalog.has_table_privilege(c.oid, priv.name)
UNION ALL
SELECT 'CREATEROLE (to create the temporary login role of the least-privilege cases)'
FROM pg_catalog.pg_roles r
WHERE r.rolname = current_user AND NOT (r.rolsuper OR r.rolcreaterole) AND $4::boolean
UNION ALL
SELECT pg_catalog.format('ADMIN OPTION on role %I (to grant it to the temporary login role)', p.rolname)
FROM pg_catalog.pg_roles p
WHERE p.rolname = $2 AND $3 >= 160000 AND $4::boolean
  AND NOT pg_catalog.pg_has_role(current_user, p.oid, 'MEMBER WITH ADMIN OPTION')
