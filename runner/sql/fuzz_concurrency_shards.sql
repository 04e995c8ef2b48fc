-- fuzz_concurrency_shards: concurrency_shard(concurrency_digest(key $1), w) at every width
-- 1..=64, in width order (@S@ = the quoted contract schema).
SELECT pg_catalog.array_agg(@S@.concurrency_shard(@S@.concurrency_digest($1::bytea), w)::integer ORDER BY w)
FROM pg_catalog.generate_series(1, 64) AS w
