-- role_mark: whether role $1 carries the install mark $2 (no row when the role does not exist).
SELECT coalesce(pg_catalog.shobj_description(r.oid, 'pg_authid') = $2, false)
FROM pg_catalog.pg_roles AS r
WHERE r.rolname = $1
