-- lifecycle_set_width: change queue $1's enqueue_shards to $2, as an operator does (released
-- queue_meta upsert; @S@ = the quoted contract schema).
INSERT INTO @S@.queue_meta (queue, enqueue_shards) VALUES ($1, $2::smallint)
ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards
