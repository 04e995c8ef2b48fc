-- job_routing_many: job_routing_call.sql for many jobs in one statement (@S@ = the quoted
-- schema; $1 = the job ids): the DB suites read a case's jobs back in one round trip instead of
-- one per job. job_routing_call's ten columns in its order (one decoder reads both), then the
-- id's position in $1 (1-based), ordered by it. A job_routing that gives no row or several rows
-- for an id shows as a position missing or repeated; the runner then reads that id alone, so
-- the finding is the one-id read's.
SELECT r.job_id, r.queue, r.enqueue_shard, r.route_source, r.concurrency_digest,
       r.ordering_key_digest, r.unique_key, r.unique_states::text, r.state, r.priority, i.n
FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY AS i(id, n)
     CROSS JOIN LATERAL @S@.job_routing(i.id) AS r
ORDER BY i.n
