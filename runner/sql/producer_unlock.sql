-- producer_unlock: release the advisory lock ($1, $2) taken by producer_lock.
SELECT pg_catalog.pg_advisory_unlock($1::int, $2::int)
