-- leftover_role_runs: run ids of the runner's temporary login roles
-- (`awa_conformance_<12 hex>_login`) that no session is using.
SELECT pg_catalog.substring(r.rolname, '^awa_conformance_([0-9a-f]{12})_login$')
FROM pg_catalog.pg_roles r
WHERE r.rolname ~ '^awa_conformance_[0-9a-f]{12}_login$'
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a WHERE a.usename = r.rolname)
