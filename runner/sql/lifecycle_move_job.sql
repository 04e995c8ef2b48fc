-- lifecycle_move_job: the shard job $1 gets when it moves to queue $2: its stored shard (read
-- back through job_routing) resolved by move_shard against the width queue_enqueue_shards
-- reports for the destination, as a mover must compute it (@S@ = the quoted contract schema).
SELECT x.enqueue_shard, @S@.move_shard(x.enqueue_shard, @S@.queue_enqueue_shards($2::text))
FROM @S@.job_routing($1::bigint) AS x
