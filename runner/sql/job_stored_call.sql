-- job_stored_call: the whole stored job $1 through job_stored (@S@ = the quoted schema; contract
-- revision 1.2, ADR 0052). run_at comes back as UTC text to the microsecond, so the runner
-- compares it without a timestamp type; unique_states as text, as in job_routing_call.
SELECT job_id, kind, queue, args, priority, max_attempts,
       pg_catalog.to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       state, metadata, tags, enqueue_shard, route_source, concurrency_digest,
       ordering_key_digest, unique_key, unique_states::text, enqueued_by
FROM @S@.job_stored($1::bigint)
