-- function_owner: the owner of the function named $2 in schema $1 and what bounds it (ADR-043,
-- docs/adr/0033-bounded-function-owner.md): its role attributes, the roles it is a member of,
-- and whether the producer role $3 holds the owner's privileges (is it, or is a member of it).
SELECT o.rolname::text,
       o.rolcanlogin, o.rolsuper, o.rolcreaterole, o.rolcreatedb, o.rolreplication,
       o.rolbypassrls,
       ARRAY(SELECT g.rolname::text
             FROM pg_catalog.pg_auth_members m
             JOIN pg_catalog.pg_roles g ON g.oid = m.roleid
             WHERE m.member = o.oid
             ORDER BY 1),
       coalesce((SELECT pg_catalog.pg_has_role(r.oid, o.oid, 'USAGE')
                 FROM pg_catalog.pg_roles r WHERE r.rolname = $3), false)
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_roles o ON o.oid = p.proowner
WHERE n.nspname = $1 AND p.proname = $2
