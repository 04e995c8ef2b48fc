-- compat_stored_canonical: where released Awa's canonical engine (the only one before 0.6.0,
-- and 0.6.x until queue storage is activated) keeps the jobs $1 (ids) of the queues $2, in the
-- shape of compat_stored.sql: jobs_hot rows (available, waiting to run) as 'ready', and
-- scheduled_jobs rows as 'deferred'; no enqueue shard (the canonical engine keeps none), with the
-- stored unique key and states as bit text. @S@ = the quoted schema.
SELECT h.id, h.queue, 'ready'::text, NULL::smallint, h.unique_key, h.unique_states::text
FROM @S@.jobs_hot AS h
WHERE h.queue = ANY ($2::text[]) AND h.id = ANY ($1::bigint[])
UNION ALL
SELECT s.id, s.queue, 'deferred'::text, NULL::smallint, s.unique_key, s.unique_states::text
FROM @S@.scheduled_jobs AS s
WHERE s.queue = ANY ($2::text[]) AND s.id = ANY ($1::bigint[])
