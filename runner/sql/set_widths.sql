-- set_widths: queue_meta rows `$1_w<width>` with enqueue_shards = width for each width of $2
-- (@S@ = the quoted contract schema).
INSERT INTO @S@.queue_meta (queue, enqueue_shards)
SELECT $1 || '_w' || w, w
FROM pg_catalog.unnest($2::smallint[]) AS w
