-- hardening: SECURITY DEFINER flag, SET options, and whether PUBLIC can EXECUTE, of the
-- function named $2 in schema $1.
SELECT p.prosecdef,
       coalesce(p.proconfig, '{}'::text[]),
       p.proacl IS NULL OR EXISTS (
           SELECT 1 FROM pg_catalog.aclexplode(p.proacl) a
           WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1 AND p.proname = $2
