-- payload_asked: what PostgreSQL itself makes of the payload a request asks for, so the stored
-- job is judged against the server's own types, not the implementation's functions: each
-- args ($1) and metadata ($2) text as jsonb text, each run_at ($3, NULL: none) as UTC text to
-- the microsecond, in request order; and the clock now, the earliest a defaulted run_at may be.
SELECT t.a::jsonb::text, t.m::jsonb::text,
       pg_catalog.to_char(t.r::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       pg_catalog.to_char(pg_catalog.clock_timestamp() AT TIME ZONE 'UTC',
                          'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]),
               pg_catalog.unnest($3::text[])) WITH ORDINALITY AS t(a, m, r, i)
ORDER BY t.i
