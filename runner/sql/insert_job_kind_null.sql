-- insert_job_kind_null: insert_job with a NULL kind, which must fail with 23502 (released:
-- kind passes the length check and violates NOT NULL; @S@ = the quoted contract schema).
SELECT job_id FROM @S@.insert_job(NULL::text, $1::text)
