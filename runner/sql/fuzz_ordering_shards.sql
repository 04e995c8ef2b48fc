-- fuzz_ordering_shards: ordering_shard(key $1, w) at every width 1..=64, in width order
-- (@S@ = the quoted contract schema).
SELECT pg_catalog.array_agg(@S@.ordering_shard($1::bytea, w)::integer ORDER BY w)
FROM pg_catalog.generate_series(1, 64) AS w
