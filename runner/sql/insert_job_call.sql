-- insert_job_call: one awa.insert_job call in the README's prepared-statement form (13 text-cast
-- parameters), returning the D7 result columns (@S@ = the quoted contract schema). unique_states
-- goes through ::varbit, never ::bit(8), which would pad a short value (contract section 3).
SELECT job_id, queue, state, priority, enqueue_shard, route_source, concurrency_digest, unique_key
FROM @S@.insert_job($1::text, $2::text, $3::text::jsonb, $4::smallint, $5::smallint,
                    $6::text::timestamptz, $7::text::jsonb, $8::text[], $9::bytea,
                    $10::text::varbit, $11::bytea, $12::bytea, $13::text::jsonb)
