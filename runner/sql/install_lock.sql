-- install_lock: serialise `schema install` runs that share producer role $1 (roles are
-- cluster-wide; the lock is per database): a transaction-level advisory lock, released at
-- COMMIT or ROLLBACK. The key is the role name's hash in the "awai" lock space.
SELECT pg_catalog.pg_advisory_xact_lock(1635213673, pg_catalog.hashtext('awa_conformance_install:' || $1::text))
