-- bulk_leftovers: rows of batch $1 (a UUID as text) still in bulk_staging, and jobs in the
-- queues $2, as the installer reads them after a publish or a rejection (@S@ = the quoted
-- contract schema).
SELECT (SELECT pg_catalog.count(*) FROM @S@.bulk_staging AS b WHERE b.batch_id = $1::text::uuid),
       (SELECT pg_catalog.count(*) FROM @S@.contract_jobs AS j WHERE j.queue = ANY ($2::text[]))
