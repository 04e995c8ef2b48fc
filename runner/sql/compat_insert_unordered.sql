-- compat_insert_unordered: compat_insert.sql for released Awa 0.5.x, whose insert_job_compat
-- takes no p_ordering_key (it arrives with schema version 18, first released in 0.6.0): one
-- call with every other argument explicit, bound as the released SDKs bind it (state as text,
-- unique_states text::bit(8), key as bytea). Returns what the function returned: job id,
-- queue, state, unique key, unique states. @S@ = the quoted schema.
SELECT j.id, j.queue, j.state::text, j.unique_key, j.unique_states::text
FROM @S@.insert_job_compat(
    p_kind => $1::text,
    p_queue => $2::text,
    p_args => $3::text::jsonb,
    p_state => $4::text::@S@.job_state,
    p_priority => $5::smallint,
    p_max_attempts => $6::smallint,
    p_run_at => $7::text::timestamptz,
    p_metadata => '{}'::jsonb,
    p_tags => $8::text[],
    p_unique_key => $9::bytea,
    p_unique_states => $10::text::bit(8)
) AS j
