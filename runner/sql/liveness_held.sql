-- liveness_held: whether the two-int advisory lock ($1, $2, shown as unsigned oids) is held
-- by a session of any database of the cluster (pg_locks lists them all), i.e. whether the
-- run it marks is alive. Advisory locks themselves are per database; roles are not.
SELECT EXISTS (
    SELECT 1
    FROM pg_catalog.pg_locks l
    WHERE l.locktype = 'advisory'
      AND l.classid::bigint = $1
      AND l.objid::bigint = $2
      AND l.objsubid = 2
      AND l.granted
)
