-- clock_now: the server's clock as UTC text to the microsecond: the latest a defaulted run_at
-- of a request already answered may be (payload_asked.sql gives the earliest).
SELECT pg_catalog.to_char(pg_catalog.clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
