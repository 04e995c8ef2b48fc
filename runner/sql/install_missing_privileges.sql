-- install_missing_privileges: what the installing role lacks for `schema install`, one row each
-- (none: nothing this query knows of is missing), for schema $1, producer role $2 and its
-- bounded owner $3. Read after an install step failed, to name the missing privilege instead
-- of a guess: CREATE on the database (for the schema and the comparison's scratch schema);
-- CREATE on an existing schema; CREATEROLE for a role that does not exist yet; on PostgreSQL
-- 16+, ADMIN OPTION on an existing owner role the installer must grant itself, which
-- CREATEROLE alone no longer gives for roles another role created.
SELECT 'CREATE on database ' || pg_catalog.quote_ident(pg_catalog.current_database())
WHERE NOT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE')
UNION ALL
SELECT 'CREATE on schema ' || pg_catalog.quote_ident(n.nspname)
FROM pg_catalog.pg_namespace n
WHERE n.nspname = $1::text AND NOT pg_catalog.has_schema_privilege(n.oid, 'CREATE')
UNION ALL
SELECT pg_catalog.format('CREATEROLE (role %I does not exist yet)', r.name)
FROM (VALUES ($2::text), ($3::text)) AS r(name)
WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles p WHERE p.rolname = r.name)
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles u
                  WHERE u.rolname = current_user AND (u.rolsuper OR u.rolcreaterole))
UNION ALL
SELECT pg_catalog.format(
           'ADMIN OPTION on role %I (PostgreSQL 16+; its creator or a superuser can run '
           'GRANT %I TO %I WITH ADMIN OPTION)', o.rolname, o.rolname, current_user)
FROM pg_catalog.pg_roles o
WHERE o.rolname = $3::text
  AND CASE WHEN pg_catalog.current_setting('server_version_num')::integer >= 160000
           THEN NOT pg_catalog.pg_has_role(current_user, o.oid, 'SET')
                AND NOT pg_catalog.pg_has_role(current_user, o.oid, 'MEMBER WITH ADMIN OPTION')
           ELSE false END
