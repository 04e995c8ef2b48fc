-- blocking_job: who holds unique key $1 in the contract schema @S@, for a message that names
-- the job (ADR 0049): its claim's job id, and the job's queue and enqueuing login
-- (contract_jobs.enqueued_by, the session_user at enqueue) when its row still exists.
SELECT c.job_id, j.queue, j.enqueued_by
FROM @S@.job_unique_claims AS c
LEFT JOIN @S@.contract_jobs AS j ON j.id OPERATOR(pg_catalog.=) c.job_id
WHERE c.unique_key OPERATOR(pg_catalog.=) $1::bytea
LIMIT 1
