-- compat_claims: the jobs holding a uniqueness claim on key $1 in released Awa's claim table
-- (@S@ = the quoted schema).
SELECT c.job_id FROM @S@.job_unique_claims AS c WHERE c.unique_key = $1::bytea ORDER BY 1
