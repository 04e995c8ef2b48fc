-- insert_job_defaults: insert_job with only p_kind; the result fields the D7 defaults fix, and
-- the width of queue 'default' (a missing row means 1) (@S@ = the quoted schema).
SELECT r.queue, r.state, r.priority, r.route_source, r.concurrency_digest IS NULL,
       r.enqueue_shard,
       coalesce((SELECT enqueue_shards FROM @S@.queue_meta WHERE queue = 'default'), 1)::smallint
FROM @S@.insert_job('awa_conformance') r
