-- leftover_queue_runs: run ids of the runner's queues (`awa_conformance_<12 hex>_...`) that
-- still have rows in table @S@.@T@.
SELECT DISTINCT pg_catalog.substring(queue, '^awa_conformance_([0-9a-f]{12})_')
FROM @S@.@T@
WHERE queue ~ '^awa_conformance_[0-9a-f]{12}_'
