-- job_routing_call: the stored routing of job $1 through job_routing (@S@ = the quoted schema).
-- Contract v1.1: the ordering key comes back as its digest only, never raw.
SELECT job_id, queue, enqueue_shard, route_source, concurrency_digest, ordering_key_digest,
       unique_key, unique_states
FROM @S@.job_routing($1::bigint)
