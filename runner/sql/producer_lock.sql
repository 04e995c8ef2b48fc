-- producer_lock: take the session advisory lock ($1, $2) that serializes producer cases whose
-- unique key is global (it hashes no run-scoped queue), across concurrent runs; bounded by the
-- session's lock_timeout.
SELECT pg_catalog.pg_advisory_lock($1::int, $2::int)
