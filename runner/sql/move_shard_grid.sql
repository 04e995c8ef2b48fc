-- move_shard_grid: move_shard(retained, width) for every retained shard 0..=63 and destination
-- width 1..=64, ordered by retained then width (@S@ = the quoted schema).
SELECT pg_catalog.array_agg(@S@.move_shard(r, w)::integer ORDER BY r, w)
FROM pg_catalog.generate_series(0, 63) AS r, pg_catalog.generate_series(1, 64) AS w
