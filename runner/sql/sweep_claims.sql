-- sweep_claims: delete rows of claim-like table @S@.@T@ (job_id, no queue) for the job ids $1.
DELETE FROM @S@.@T@ WHERE job_id = ANY ($1)
