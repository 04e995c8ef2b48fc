-- env_connections: the connection limits that apply to the runner and how many sessions
-- already count against each (this session excluded): the server (max_connections less the
-- reserved slots), the role's and the database's CONNECTION LIMIT (-1 = none). Superusers
-- may use the reserved slots and are exempt from role and database limits.
SELECT pg_catalog.current_setting('max_connections')::integer,
       pg_catalog.current_setting('superuser_reserved_connections')::integer
         + coalesce((SELECT setting::integer FROM pg_catalog.pg_settings
                     WHERE name = 'reserved_connections'), 0),
       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_catalog.pg_backend_pid())::integer,
       r.rolconnlimit,
       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity
        WHERE backend_type = 'client backend' AND usename = current_user
          AND pid <> pg_catalog.pg_backend_pid())::integer,
       d.datconnlimit,
       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity
        WHERE backend_type = 'client backend' AND datname = pg_catalog.current_database()
          AND pid <> pg_catalog.pg_backend_pid())::integer
FROM pg_catalog.pg_roles r, pg_catalog.pg_database d
WHERE r.rolname = current_user AND d.datname = pg_catalog.current_database()
