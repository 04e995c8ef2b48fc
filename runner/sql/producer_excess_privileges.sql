-- producer_excess_privileges: each privilege the producer role ($1) holds in schema $2 beyond
-- ADR-043's (EXECUTE on insert_job, job_routing and, from contract v1.1, queue_enqueue_shards,
-- from v1.2 job_stored,
-- plus the documented public functions $3 when they are not SECURITY DEFINER), one readable
-- line per privilege. The staged bulk path's (docs/contract.md section 14) are allowed too: EXECUTE on
-- publish_batch(uuid) and INSERT on columns of bulk_staging, never on staged_by (filled by its
-- default), whether or not the database advertises `bulk`.
WITH r AS (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = $1),
     n AS (SELECT oid, nspname FROM pg_catalog.pg_namespace WHERE nspname = $2),
     rel AS (
         SELECT c.oid, c.relname, c.relkind
         FROM pg_catalog.pg_class c JOIN n ON c.relnamespace = n.oid
         WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
     )
SELECT pg_catalog.format('%s on table %I', p.priv, rel.relname)
FROM rel, r,
     pg_catalog.unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES',
                  'TRIGGER']) AS p(priv)
WHERE rel.relkind <> 'S' AND pg_catalog.has_table_privilege(r.oid, rel.oid, p.priv)
UNION ALL
SELECT pg_catalog.format('%s on a column of %I', p.priv, rel.relname)
FROM rel, r, pg_catalog.unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']) AS p(priv)
WHERE rel.relkind <> 'S'
  AND pg_catalog.has_any_column_privilege(r.oid, rel.oid, p.priv)
  AND NOT pg_catalog.has_table_privilege(r.oid, rel.oid, p.priv)
  AND NOT (rel.relname = 'bulk_staging' AND p.priv = 'INSERT'
           AND NOT pg_catalog.has_column_privilege(r.oid, rel.oid, 'staged_by', 'INSERT'))
UNION ALL
SELECT pg_catalog.format('%s on sequence %I', p.priv, rel.relname)
FROM rel, r, pg_catalog.unnest(ARRAY['USAGE', 'SELECT', 'UPDATE']) AS p(priv)
WHERE rel.relkind = 'S' AND pg_catalog.has_sequence_privilege(r.oid, rel.oid, p.priv)
UNION ALL
SELECT pg_catalog.format('CREATE on schema %I', n.nspname)
FROM n, r
WHERE pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE')
UNION ALL
SELECT pg_catalog.format('EXECUTE on function %s', p.oid::regprocedure)
FROM pg_catalog.pg_proc p JOIN n ON p.pronamespace = n.oid, r
WHERE pg_catalog.has_function_privilege(r.oid, p.oid, 'EXECUTE')
  AND p.proname NOT IN ('insert_job', 'job_routing', 'queue_enqueue_shards', 'job_stored')
  AND NOT (p.proname = 'publish_batch'
           AND pg_catalog.oidvectortypes(p.proargtypes) = 'uuid')
  AND NOT (p.proname = ANY ($3::text[]) AND NOT p.prosecdef)
ORDER BY 1
