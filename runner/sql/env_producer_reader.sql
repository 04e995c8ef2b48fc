-- env_producer_reader: the owner of schema $1's job_routing when the runner's role is not a member
-- of it (no row otherwise, or when there is no job_routing). job_routing shows a caller only the
-- jobs it enqueued itself unless it is a member of that owner, so a runner outside it would read
-- every job a producer stored as missing and blame the producer (docs/contract.md section 9).
SELECT pg_catalog.pg_get_userbyid(p.proowner)::text
FROM pg_catalog.pg_proc AS p
JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = $1::text
  AND p.proname = 'job_routing'
  AND NOT pg_catalog.pg_has_role(current_user, p.proowner, 'MEMBER')
LIMIT 1
