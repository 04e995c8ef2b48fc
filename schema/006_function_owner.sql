-- 006_function_owner: the bounded NOLOGIN owner of the SECURITY DEFINER functions insert_job,
-- job_routing and queue_enqueue_shards (ADR-043,
-- docs/adr/0033-bounded-function-owner.md).
--
-- Depends on: 002 (tables), 004 (insert_job, job_routing), 005 (the producer role, whose name
-- the owner's is derived from). Placeholders: @schema@, @producer_role@.
-- Idempotent: the role is created only when missing (roles are cluster-wide); GRANT of an
-- existing privilege and ALTER ... OWNER TO the current owner are no-ops. Safe inside one
-- transaction. Needs CREATEROLE (or superuser) the first time per cluster.

-- The SECURITY DEFINER functions run as their owner, so they are owned by a dedicated NOLOGIN
-- role that holds only what they need (USAGE on the schema; SELECT on queue_meta; SELECT, INSERT on contract_jobs
-- and USAGE on its sequence; INSERT on job_unique_claims), never by whoever ran the install
-- (often a superuser). Its name is the producer role's with a trailing `_producer` replaced by
-- `_owner` (else `_owner` appended), cut to 63 bytes: `awa_producer` -> `awa_owner`.
-- Install-time dynamic SQL only (the name is derived here); the contract functions have none.
-- A non-superuser installer (the database owner with CREATEROLE) becomes a member of the owner
-- role, which ALTER ... OWNER needs (on PostgreSQL 16+ with the SET option, which a CREATEROLE
-- creator does not get by default); the owner itself is a member of no role. ALTER ... OWNER
-- also requires the new owner to hold CREATE on the schema (superusers skip that check), so the
-- owner gets CREATE for the three statements only and loses it again before the block ends:
-- after the install it holds exactly what a superuser's install gives it.
DO $install$
DECLARE
    v_producer   text := (pg_catalog.parse_ident('@producer_role@'))[1];
    v_owner      text;
    v_had_create boolean;
BEGIN
    v_owner := pg_catalog.left(
        pg_catalog.regexp_replace(v_producer, '_producer$', '') || '_owner', 63);
    IF pg_catalog.to_regrole(pg_catalog.quote_ident(v_owner)) IS NULL THEN
        BEGIN
            EXECUTE pg_catalog.format(
                'CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT',
                v_owner);
        EXCEPTION
            -- Another installer created it between the check and CREATE ROLE.
            WHEN duplicate_object OR unique_violation THEN
                NULL;
        END;
    END IF;
    -- 16+ splits membership into INHERIT and SET: MEMBER alone does not allow ALTER ... OWNER.
    -- The option syntax is 16+ only, hence dynamic SQL chosen by version.
    IF pg_catalog.current_setting('server_version_num')::integer >= 160000 THEN
        IF NOT pg_catalog.pg_has_role(current_user, v_owner, 'SET') THEN
            EXECUTE pg_catalog.format('GRANT %I TO %I WITH SET TRUE', v_owner, current_user);
        END IF;
    ELSIF NOT pg_catalog.pg_has_role(current_user, v_owner, 'MEMBER') THEN
        EXECUTE pg_catalog.format('GRANT %I TO %I', v_owner, current_user);
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA @schema@ TO %I', v_owner);
    EXECUTE pg_catalog.format('GRANT SELECT ON @schema@.queue_meta TO %I', v_owner);
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT ON @schema@.contract_jobs TO %I', v_owner);
    EXECUTE pg_catalog.format(
        'GRANT USAGE ON SEQUENCE @schema@.contract_jobs_id_seq TO %I', v_owner);
    EXECUTE pg_catalog.format('GRANT INSERT ON @schema@.job_unique_claims TO %I', v_owner);
    v_had_create := pg_catalog.has_schema_privilege(
        v_owner, '@schema@'::pg_catalog.regnamespace::pg_catalog.oid, 'CREATE');
    IF NOT v_had_create THEN
        EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA @schema@ TO %I', v_owner);
    END IF;
    EXECUTE pg_catalog.format(
        'ALTER FUNCTION @schema@.insert_job(text, text, jsonb, smallint, smallint, timestamptz, '
        'jsonb, text[], bytea, bit varying, bytea, bytea, jsonb) OWNER TO %I', v_owner);
    EXECUTE pg_catalog.format('ALTER FUNCTION @schema@.job_routing(bigint) OWNER TO %I', v_owner);
    EXECUTE pg_catalog.format(
        'ALTER FUNCTION @schema@.queue_enqueue_shards(text) OWNER TO %I', v_owner);
    IF NOT v_had_create THEN
        EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA @schema@ FROM %I', v_owner);
    END IF;
END
$install$;
