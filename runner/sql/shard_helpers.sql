-- shard_helpers: for every key of $1 (by position) at every width of $2: ordering_shard,
-- concurrency_shard of concurrency_digest, and the digest (@S@ = the quoted schema).
SELECT k.n::bigint, w.w::integer,
       @S@.ordering_shard(k.key, w.w)::integer,
       @S@.concurrency_shard(@S@.concurrency_digest(k.key), w.w)::integer,
       @S@.concurrency_digest(k.key)
FROM pg_catalog.unnest($1::bytea[]) WITH ORDINALITY AS k(key, n), pg_catalog.unnest($2::integer[]) AS w(w)
ORDER BY 1, 2
