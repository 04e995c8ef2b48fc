-- job_stored_many: job_stored_call.sql for many jobs in one statement (@S@ = the quoted schema;
-- $1 = the job ids; contract revision 1.2): job_stored_call's seventeen columns in its order
-- (one decoder reads both), then the id's position in $1 (1-based), ordered by it. As in
-- job_routing_many.sql, a position missing or repeated makes the runner read that id alone.
SELECT r.job_id, r.queue, r.enqueue_shard, r.route_source, r.concurrency_digest,
       r.ordering_key_digest, r.unique_key, r.unique_states::text, r.state, r.priority,
       r.kind, r.args, r.max_attempts,
       pg_catalog.to_char(r.run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       r.metadata, r.tags, r.enqueued_by, i.n
FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY AS i(id, n)
     CROSS JOIN LATERAL @S@.job_stored(i.id) AS r
ORDER BY i.n
