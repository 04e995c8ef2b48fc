-- job_routing_call: the stored routing of job $1 through job_routing (@S@ = the quoted schema),
-- including the stored state and priority. Contract v1.1: the ordering key comes back as its
-- digest only, never raw; unique_states is read as text so a bit(8) or a varbit column reads
-- the same.
SELECT job_id, queue, enqueue_shard, route_source, concurrency_digest, ordering_key_digest,
       unique_key, unique_states::text, state, priority
FROM @S@.job_routing($1::bigint)
