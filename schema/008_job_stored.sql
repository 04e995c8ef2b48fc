-- 008_job_stored: contract revision 1.2 (docs/contract.md section 15, ADR 0052):
-- job_stored(job_id), the whole stored job as a worker will see it, scoped like job_routing.
--
-- Depends on: 002 (contract_jobs), 003 (concurrency_digest), 004 (job_routing's scoping rule),
-- 005 (the producer role), 006 (the bounded owner, whose name is derived here the same way),
-- 007 (the capability list it extends). Placeholders: @schema@, @producer_role@.
-- Idempotent: the row type is created only when missing, CREATE OR REPLACE FUNCTION, GRANT and
-- ALTER ... OWNER TO of what is already so are no-ops. Safe inside one transaction: EXECUTE is
-- revoked from PUBLIC in the transaction that creates the function. Forward-only: 001-007 are
-- not edited; this file replaces contract_capabilities() to add `contract_1_2` and `job_stored`.
--
-- Hardening as 004: SECURITY DEFINER owned by the bounded owner, fixed search_path with
-- pg_catalog first and pg_temp last, every object schema-qualified, no dynamic SQL.

-- 007's list plus `contract_1_2` and `job_stored` (sorted).
CREATE OR REPLACE FUNCTION @schema@.contract_capabilities()
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT ARRAY[
    'bulk',
    'concurrency_digest',
    'concurrency_shard',
    'contract_1_1',
    'contract_1_2',
    'expectations',
    'job_routing',
    'job_stored',
    'move_shard',
    'ordering_shard',
    'routing_precedence',
    'unique_key',
    'unique_states'
  ]::text[]
$fn$;

-- The whole stored job. args and metadata as jsonb's own text (what a worker decoding the row
-- sees: key order, number text and duplicate keys as jsonb keeps them), run_at as stored
-- (microseconds, UTC), tags in their stored order, and the audit login. No raw key: the
-- ordering key is given as its section 6 digest, as in job_routing. CREATE TYPE has no IF NOT EXISTS.
DO $install$
BEGIN
    IF pg_catalog.to_regtype('@schema@.job_stored_row') IS NULL THEN
        CREATE TYPE @schema@.job_stored_row AS (
            job_id              bigint,
            kind                text,
            queue               text,
            args                text,
            priority            smallint,
            max_attempts        smallint,
            run_at              timestamptz,
            state               text,
            metadata            text,
            tags                text[],
            enqueue_shard       smallint,
            route_source        text,
            concurrency_digest  bytea,
            ordering_key_digest bytea,
            unique_key          bytea,
            unique_states       text,
            enqueued_by         text
        );
    END IF;
END
$install$;

-- Scoped exactly like job_routing: a caller sees a job only if its session user enqueued it or
-- if it is a member of this function's owner; any other id gives the NULL row, as an unknown
-- one does.
CREATE OR REPLACE FUNCTION @schema@.job_stored(p_job_id bigint)
RETURNS @schema@.job_stored_row
LANGUAGE sql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, @schema@, pg_temp
AS $fn$
    SELECT j.id, j.kind, j.queue, j.args::text, j.priority, j.max_attempts, j.run_at, j.state,
           j.metadata::text, j.tags, j.enqueue_shard, j.route_source, j.concurrency_digest,
           @schema@.concurrency_digest(j.ordering_key), j.unique_key, j.unique_states::text,
           j.enqueued_by
    FROM @schema@.contract_jobs AS j
    WHERE j.id = p_job_id
      -- Inside a SECURITY DEFINER function current_user is the owner.
      AND (j.enqueued_by = session_user OR pg_has_role(session_user, current_user, 'MEMBER'))
$fn$;

REVOKE ALL ON FUNCTION @schema@.job_stored(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @schema@.job_stored(bigint) TO @producer_role@;

-- The bounded owner (006) already reads contract_jobs for job_routing.
DO $install$
DECLARE
    v_owner text := pg_catalog.left(pg_catalog.regexp_replace(
        (pg_catalog.parse_ident('@producer_role@'))[1], '_producer$', '') || '_owner', 63);
    v_had_create boolean;
BEGIN
    v_had_create := pg_catalog.has_schema_privilege(
        v_owner, '@schema@'::pg_catalog.regnamespace::pg_catalog.oid, 'CREATE');
    IF NOT v_had_create THEN
        EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA @schema@ TO %I', v_owner);
    END IF;
    EXECUTE pg_catalog.format('ALTER FUNCTION @schema@.job_stored(bigint) OWNER TO %I', v_owner);
    IF NOT v_had_create THEN
        EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA @schema@ FROM %I', v_owner);
    END IF;
END
$install$;
