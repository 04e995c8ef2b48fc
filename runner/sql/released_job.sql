-- released_job: job $1 as released Awa's queue storage (@Q@, quoted) keeps it before any worker
-- claims it: a ready row (state available, with its enqueue shard) or a deferred row (its
-- state, no shard yet), with priority, unique key and unique states. No row: no such job
-- waiting (never stored, or already claimed).
SELECT r.job_id, r.queue, 'available'::text, r.priority, r.enqueue_shard, r.unique_key,
       r.unique_states
FROM @Q@.ready_entries AS r
WHERE r.job_id = $1::bigint
UNION ALL
SELECT d.job_id, d.queue, d.state::text, d.priority, NULL::smallint, d.unique_key,
       d.unique_states
FROM @Q@.deferred_jobs AS d
WHERE d.job_id = $1::bigint
