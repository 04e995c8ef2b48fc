-- producer_can_execute: whether role $1 may EXECUTE the function $2 (a regprocedure text such
-- as `"awa".queue_enqueue_shards(text)`); no row when the role does not exist.
SELECT pg_catalog.has_function_privilege(r.oid, $2::text::regprocedure, 'EXECUTE')
FROM pg_catalog.pg_roles r
WHERE r.rolname = $1
