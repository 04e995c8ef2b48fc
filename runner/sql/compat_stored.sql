-- compat_stored: where released queue storage keeps the jobs $1 (ids) of the queues $2: ready
-- rows with their enqueue shard, deferred (scheduled) rows without one, with the stored
-- unique key and states text. @Q@ = the quoted queue-storage schema.
SELECT r.job_id, r.queue, 'ready'::text, r.enqueue_shard, r.unique_key, r.unique_states
FROM @Q@.ready_entries AS r
WHERE r.queue = ANY ($2::text[]) AND r.job_id = ANY ($1::bigint[])
UNION ALL
SELECT d.job_id, d.queue, 'deferred'::text, NULL::smallint, d.unique_key, d.unique_states
FROM @Q@.deferred_jobs AS d
WHERE d.queue = ANY ($2::text[]) AND d.job_id = ANY ($1::bigint[])
