-- 005_producer_role: the NOLOGIN producer role, allowed to enqueue, read its own jobs' routing
-- and read queue widths, nothing else.
--
-- Depends on: 004 (insert_job, job_routing, queue_enqueue_shards). Placeholders: @schema@,
-- @producer_role@.
-- Idempotent: the role is created only when missing (roles are cluster-wide, so a second
-- database's install finds it); GRANT of an existing privilege is a no-op. Safe inside one
-- transaction. Needs CREATEROLE (or superuser) the first time per cluster.

DO $install$
BEGIN
    IF pg_catalog.to_regrole('@producer_role@') IS NULL THEN
        CREATE ROLE @producer_role@ NOLOGIN;
    END IF;
EXCEPTION
    -- Another installer created it between the check and CREATE ROLE.
    WHEN duplicate_object OR unique_violation THEN
        NULL;
END
$install$;

-- ADR-043 producer: "enqueue and inspect its enqueue result". No table privileges at all:
-- the SECURITY DEFINER functions are the only way in.
GRANT USAGE ON SCHEMA @schema@ TO @producer_role@;
GRANT EXECUTE ON FUNCTION @schema@.insert_job(
    text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], bytea, varbit, bytea,
    bytea, jsonb) TO @producer_role@;
GRANT EXECUTE ON FUNCTION @schema@.job_routing(bigint) TO @producer_role@;
-- v1.1: the width a producer needs for expected_enqueue_shard (queue_meta stays unreadable).
GRANT EXECUTE ON FUNCTION @schema@.queue_enqueue_shards(text) TO @producer_role@;
