-- role_droppable: one row when role $1 exists and no session is logged in as it.
SELECT 1
FROM pg_catalog.pg_roles r
WHERE r.rolname = $1
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a WHERE a.usename = r.rolname)
