-- v1_0_shapes.sql: the contract v1.0 objects that the v1.1 install replaces (run by tests/run.sh
-- before installing into a fresh schema, to prove that a re-install upgrades in place).
--
-- Only the shapes matter (signatures, the row type); bodies are stubs. Placeholders as in the
-- install files.
CREATE SCHEMA @schema@;
CREATE TYPE @schema@.job_routing_row AS (
    job_id bigint, queue text, state text, priority smallint, enqueue_shard smallint,
    route_source text, concurrency_digest bytea, ordering_key bytea, unique_key bytea,
    unique_states text);
CREATE FUNCTION @schema@.job_routing(p_job_id bigint) RETURNS @schema@.job_routing_row
LANGUAGE sql AS $$ SELECT NULL::@schema@.job_routing_row $$;
CREATE FUNCTION @schema@.insert_job(
    p_kind text, p_queue text DEFAULT 'default', p_args jsonb DEFAULT '{}',
    p_priority smallint DEFAULT 2, p_max_attempts smallint DEFAULT 25,
    p_run_at timestamptz DEFAULT NULL, p_metadata jsonb DEFAULT '{}', p_tags text[] DEFAULT '{}',
    p_unique_key bytea DEFAULT NULL, p_unique_states bit(8) DEFAULT NULL,
    p_ordering_key bytea DEFAULT NULL, p_concurrency_key bytea DEFAULT NULL,
    p_opts jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE sql AS $$ SELECT 0::bigint $$;
