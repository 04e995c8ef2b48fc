-- queue_meta_insert: one queue_meta row, queue $1 with enqueue_shards $2 (@S@ = the quoted
-- schema); the width CHECK must refuse widths outside 1..=64.
INSERT INTO @S@.queue_meta (queue, enqueue_shards) VALUES ($1, $2::smallint)
