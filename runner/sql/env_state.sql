-- env_state: what decides whether this database can host a run, in one row: read-only
-- (hot standby, or default_transaction_read_only from the role, database or server), the
-- server version number, whether the runner's role is a superuser, and the database's
-- encoding (a run needs UTF8: ADR 0060).
SELECT pg_catalog.pg_is_in_recovery(),
       pg_catalog.current_setting('default_transaction_read_only')::boolean,
       pg_catalog.current_setting('server_version_num')::integer,
       r.rolsuper,
       pg_catalog.getdatabaseencoding()::text
FROM pg_catalog.pg_roles r
WHERE r.rolname = current_user
