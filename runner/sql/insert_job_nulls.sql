-- insert_job_nulls: insert_job with p_kind only non-NULL and every other argument an explicit,
-- typed NULL (each must mean its default); the result fields the defaults fix (@S@ = the
-- quoted schema).
SELECT job_id, queue, state, priority, route_source
FROM @S@.insert_job('awa_conformance'::text, NULL::text, NULL::jsonb, NULL::smallint,
                    NULL::smallint, NULL::timestamptz, NULL::jsonb, NULL::text[], NULL::bytea,
                    NULL::bit(8), NULL::bytea, NULL::bytea, NULL::jsonb)
