-- scope_insert: enqueue one keyed job as the current session user and return its id
-- (@S@ = the quoted contract schema).
SELECT job_id FROM @S@.insert_job('awa_conformance', $1::text, p_ordering_key => $2::bytea,
                                  p_concurrency_key => $3::bytea)
