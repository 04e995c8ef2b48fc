-- role_exists: one row when the role named $1 exists.
SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1
