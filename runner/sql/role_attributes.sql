-- role_attributes: can the runner's role create roles, and does the producer role ($1) exist?
SELECT r.rolsuper OR r.rolcreaterole,
       EXISTS (SELECT 1 FROM pg_catalog.pg_roles p WHERE p.rolname = $1)
FROM pg_catalog.pg_roles r
WHERE r.rolname = current_user
