-- procs: every function named $2 in namespace $1: oid, argument names and types, whether all
-- arguments are IN, the return type and whether it returns a set.
SELECT p.oid,
       coalesce(p.proargnames, '{}'::text[]),
       ARRAY(SELECT pg_catalog.format_type(u.t, NULL)
             FROM pg_catalog.unnest(p.proargtypes::oid[]) WITH ORDINALITY AS u(t, n)
             ORDER BY u.n),
       p.proargmodes IS NULL,
       p.prorettype,
       p.proretset
FROM pg_catalog.pg_proc p
WHERE p.pronamespace = $1 AND p.proname = $2
ORDER BY p.oid
