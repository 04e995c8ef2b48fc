-- job_stored_call: the whole stored job $1 through job_stored (@S@ = the quoted schema; contract
-- revision 1.2, ADR 0052): first job_routing_call.sql's ten columns in its order (one decoder
-- reads both), then the payload. run_at comes back as UTC text to the microsecond, so the
-- runner compares it without a timestamp type; unique_states as text, as in job_routing_call.
SELECT job_id, queue, enqueue_shard, route_source, concurrency_digest, ordering_key_digest,
       unique_key, unique_states::text, state, priority,
       kind, args, max_attempts,
       pg_catalog.to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       metadata, tags, enqueued_by
FROM @S@.job_stored($1::bigint)
