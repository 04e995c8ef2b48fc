-- return_columns: names and types of the columns of composite type $1 (a function's result).
SELECT coalesce(pg_catalog.array_agg(a.attname::text ORDER BY a.attnum), '{}'),
       coalesce(pg_catalog.array_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) ORDER BY a.attnum), '{}')
FROM pg_catalog.pg_type t
JOIN pg_catalog.pg_attribute a ON a.attrelid = t.typrelid
WHERE t.oid = $1 AND a.attnum > 0 AND NOT a.attisdropped
