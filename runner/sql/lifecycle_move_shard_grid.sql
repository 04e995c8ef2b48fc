-- lifecycle_move_shard_grid: move_shard(retained, destination width) for every retained shard
-- 0..=63 and every destination width 1..=64 (@S@ = the quoted contract schema).
SELECT r, d, @S@.move_shard(r, d)
FROM pg_catalog.generate_series(0, 63) AS r, pg_catalog.generate_series(1, 64) AS d
ORDER BY r, d
