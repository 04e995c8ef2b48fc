-- sweep_tables: base tables (and partitioned parents) of schema $1 and whether they have the
-- columns a run-scoped row can be found by (queue, job_id, id), whether its rows name a
-- sequence created for their queue (seq_name: released Awa's per-lane sequences), and the
-- column recording the login that wrote a row, if any (enqueued_by, or staged_by of the
-- staging table: ADR 0049 finds a producer's rows by it wherever they landed).
SELECT c.relname::text,
       pg_catalog.bool_or(a.attname = 'queue'), pg_catalog.bool_or(a.attname = 'job_id'), pg_catalog.bool_or(a.attname = 'id'),
       pg_catalog.bool_or(a.attname = 'seq_name'),
       pg_catalog.max(a.attname::text) FILTER (WHERE a.attname IN ('enqueued_by', 'staged_by'))
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
GROUP BY c.relname
