-- bulk_copy: a producer's staging step, COPY of CSV rows into bulk_staging: every column a
-- producer may write (staged_by is filled by its default), in the order the suite sends them
-- (@S@ = the quoted contract schema; docs/contract.md section 14).
COPY @S@.bulk_staging (batch_id, row_no, kind, queue, args, priority, max_attempts, run_at,
    metadata, tags, unique_key, unique_states, ordering_key, concurrency_key,
    concurrency_digest, enqueue_shard, route_source) FROM STDIN (FORMAT csv)
