-- 004_insert_job: the contract v1.1 producer entry point insert_job(...), the read functions
-- job_routing(bigint) and queue_enqueue_shards(text), all hardened SECURITY DEFINER (ADR-043).
--
-- Depends on: 002 (tables, row types), 003 (routing helpers). Placeholders: @schema@.
-- Idempotent: CREATE OR REPLACE FUNCTION keeps the owner and grants; the REVOKEs are no-ops
-- on a re-run. Safe inside one transaction: EXECUTE is revoked from PUBLIC in the same
-- transaction that creates the functions, so no other session ever sees them callable.
-- Upgrades an install of contract v1.0 in place: its insert_job took p_unique_states bit(8),
-- which a caller's `$n::bit(8)` silently pads (ADR 0025); that signature is dropped first so
-- that exactly one insert_job remains (the contract forbids overloads).
--
-- Hardening: fixed search_path with pg_catalog first and pg_temp last, every object
-- schema-qualified, no dynamic SQL, caller values never used as identifiers.

DO $install$
BEGIN
    IF pg_catalog.to_regprocedure('@schema@.insert_job(text, text, jsonb, smallint, smallint, '
           'timestamptz, jsonb, text[], bytea, bit, bytea, bytea, jsonb)') IS NOT NULL THEN
        DROP FUNCTION @schema@.insert_job(text, text, jsonb, smallint, smallint, timestamptz,
            jsonb, text[], bytea, bit, bytea, bytea, jsonb);
    END IF;
END
$install$;

CREATE OR REPLACE FUNCTION @schema@.insert_job(
    p_kind            text,
    p_queue           text        DEFAULT 'default',
    p_args            jsonb       DEFAULT '{}'::jsonb,
    p_priority        smallint    DEFAULT 2,
    p_max_attempts    smallint    DEFAULT 25,
    p_run_at          timestamptz DEFAULT NULL,
    p_metadata        jsonb       DEFAULT '{}'::jsonb,
    p_tags            text[]      DEFAULT '{}'::text[],
    p_unique_key      bytea       DEFAULT NULL,
    p_unique_states   varbit      DEFAULT NULL,
    p_ordering_key    bytea       DEFAULT NULL,
    p_concurrency_key bytea       DEFAULT NULL,
    p_opts            jsonb       DEFAULT '{}'::jsonb
)
RETURNS @schema@.insert_job_result
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, @schema@, pg_temp
AS $fn$
DECLARE
    -- Performance note: producers call this once per job, each call in its own transaction.
    -- Most of a call is executor start-up of its SQL statements (plan nodes, CHECK
    -- expressions re-read on every INSERT), and PL/pgSQL also sets up each expression once per
    -- transaction. So a valid call with opts '{}' runs ONE statement and a handful of
    -- expressions: a single guard sends every unusual input (failures, opts, long keys) to
    -- the detailed checks; the width lookup, the shard arithmetic, the NULL coalescing and
    -- the result row all live inside the INSERT (scripts/bench-db.py measures the cost).
    --
    -- varbit, not bit(8): a caller's `$n::bit(8)` pads or truncates silently before the call,
    -- so the parameter takes any length and the first check below refuses all but 8 bits.
    v_unique_states varbit      := p_unique_states;
    v_now           timestamptz := clock_timestamp();
    v_result        @schema@.insert_job_result;
    v_shard         integer;  -- set only when opts carry expectations
    v_source        text;     -- NULL = rotor
    v_digest        bytea;
    v_h             bigint;
    v_width         bigint;
    v_opts          jsonb;
    v_opt           jsonb;
    v_bad_key       text;
    v_has_opts      boolean;  -- NULL = false
    v_exp_digest_set boolean; -- NULL = false
    v_exp_digest    bytea;
    v_exp_shard     jsonb;
    v_exp_source    text;
BEGIN
    -- Steps 1-3 behind one guard. NULL parameters mean "the default" (released
    -- insert_job_compat); every default passes, and a NULL comparison is not true, so the
    -- raw parameters are tested here.
    IF length(p_kind) > 200 OR length(p_queue) > 200 OR p_priority NOT BETWEEN 1 AND 4
       OR p_max_attempts NOT BETWEEN 1 AND 1000 OR cardinality(p_tags) > 20
       OR p_opts <> '{}'::jsonb  -- NULL opts coalesce to {}: no opts work either
       OR octet_length(p_ordering_key) > 4096 OR octet_length(p_concurrency_key) > 4096
       OR length(v_unique_states) <> 8 THEN
        -- 0. unique_states is exactly 8 bits (v1.1): the SQLSTATE a ::bit(8) cast raises,
        -- raised here with the contract's DETAIL, before any other check.
        IF length(v_unique_states) <> 8 THEN
            RAISE EXCEPTION 'awa.insert_job: unique_states has % bits, it must have exactly 8', length(v_unique_states)
                USING ERRCODE = '22026',
                      DETAIL = jsonb_build_object('code', 'unique_states_not_8_bits',
                          'length', length(v_unique_states), 'expected_length', 8)::text,
                      HINT = 'Bind unique_states as text of 8 characters 0/1 (leftmost = scheduled) cast with ::varbit, e.g. ''11111000''; never cast it to bit(8) in your SQL, which pads short values.';
        END IF;
        -- 1. Released validation, released order and messages (docs/released-awa.md R2.2).
        IF length(p_kind) > 200 THEN
            RAISE EXCEPTION 'job kind length must be <= 200 characters' USING ERRCODE = '23514';
        END IF;
        IF length(p_queue) > 200 THEN
            RAISE EXCEPTION 'queue name length must be <= 200 characters' USING ERRCODE = '23514';
        END IF;
        IF p_priority < 1 OR p_priority > 4 THEN
            RAISE EXCEPTION 'priority must be between 1 and 4' USING ERRCODE = '23514';
        END IF;
        IF p_max_attempts < 1 OR p_max_attempts > 1000 THEN
            RAISE EXCEPTION 'max_attempts must be between 1 and 1000' USING ERRCODE = '23514';
        END IF;
        IF cardinality(p_tags) > 20 THEN
            RAISE EXCEPTION 'job tags must contain at most 20 values' USING ERRCODE = '23514';
        END IF;

        -- 2. opts (D6).
        IF p_opts <> '{}'::jsonb THEN  -- NULL opts coalesce to {}: skipped too
            v_opts := p_opts;
            IF jsonb_typeof(v_opts) <> 'object' THEN
                RAISE EXCEPTION 'awa.insert_job: opts must be a JSON object, got %', jsonb_typeof(v_opts)
                    USING ERRCODE = 'ZA002',
                          DETAIL = jsonb_build_object(
                              'code', 'opts_not_object', 'actual_type', jsonb_typeof(v_opts))::text,
                          HINT = 'Pass opts as a JSON object, e.g. ''{}''::jsonb.';
            END IF;
            -- Report the smallest unknown key (byte order) so the error is deterministic.
            SELECT min(k COLLATE "C") INTO v_bad_key
            FROM jsonb_object_keys(v_opts) AS k
            WHERE k NOT IN ('expected_concurrency_digest', 'expected_enqueue_shard',
                            'expected_route_source');
            IF v_bad_key IS NOT NULL THEN
                RAISE EXCEPTION 'awa.insert_job: unknown opts key "%"', v_bad_key
                    USING ERRCODE = 'ZA002',
                          DETAIL = jsonb_build_object(
                              'code', 'unknown_opts_key', 'key', v_bad_key,
                              'allowed', jsonb_build_array('expected_concurrency_digest',
                                  'expected_enqueue_shard', 'expected_route_source'))::text,
                          HINT = 'Remove the key; contract v1 accepts only expected_concurrency_digest, expected_enqueue_shard and expected_route_source.';
            END IF;
            v_has_opts := true;

            v_opt := v_opts -> 'expected_concurrency_digest';
            IF v_opt IS NOT NULL THEN
                IF jsonb_typeof(v_opt) = 'null' THEN
                    v_exp_digest_set := true;
                ELSIF jsonb_typeof(v_opt) = 'string' AND (v_opt #>> '{}') ~ '^[0-9a-f]{64}$' THEN
                    v_exp_digest_set := true;
                    v_exp_digest := decode(v_opt #>> '{}', 'hex');
                ELSE
                    RAISE EXCEPTION 'awa.insert_job: opts.expected_concurrency_digest must be 64 lowercase hex characters or null'
                        USING ERRCODE = 'ZA005',
                              DETAIL = jsonb_build_object(
                                  'code', 'invalid_opts_value', 'key', 'expected_concurrency_digest',
                                  'expected_type', 'string of 64 lowercase hex characters, or null')::text,
                              HINT = 'Send the hex of the 32-byte SHA-256 digest in lowercase, or null to expect no digest.';
                END IF;
            END IF;

            v_opt := v_opts -> 'expected_enqueue_shard';
            IF v_opt IS NOT NULL THEN
                -- An integer JSON number: jsonb prints integral values without a point or exponent.
                IF jsonb_typeof(v_opt) = 'number' AND (v_opt #>> '{}') ~ '^-?[0-9]+$' THEN
                    v_exp_shard := v_opt;
                ELSE
                    RAISE EXCEPTION 'awa.insert_job: opts.expected_enqueue_shard must be an integer'
                        USING ERRCODE = 'ZA005',
                              DETAIL = jsonb_build_object(
                                  'code', 'invalid_opts_value', 'key', 'expected_enqueue_shard',
                                  'expected_type', 'integer')::text,
                              HINT = 'Send the expected shard as a JSON integer such as 3 (not a string, float or null).';
                END IF;
            END IF;

            v_opt := v_opts -> 'expected_route_source';
            IF v_opt IS NOT NULL THEN
                IF jsonb_typeof(v_opt) = 'string'
                   AND (v_opt #>> '{}') IN ('ordering_key', 'concurrency_key', 'rotor') THEN
                    v_exp_source := v_opt #>> '{}';
                ELSE
                    RAISE EXCEPTION 'awa.insert_job: opts.expected_route_source must be "ordering_key", "concurrency_key" or "rotor"'
                        USING ERRCODE = 'ZA005',
                              DETAIL = jsonb_build_object(
                                  'code', 'invalid_opts_value', 'key', 'expected_route_source',
                                  'expected_type', 'string: ordering_key, concurrency_key or rotor')::text,
                              HINT = 'Send one of the three route source names as a JSON string.';
                END IF;
            END IF;
        END IF;

        -- 3. Key length (ZA003).
        IF octet_length(p_ordering_key) > 4096 THEN
            RAISE EXCEPTION 'awa.insert_job: ordering_key is % bytes, longer than 4096', octet_length(p_ordering_key)
                USING ERRCODE = 'ZA003',
                      DETAIL = jsonb_build_object('code', 'key_too_long', 'field', 'ordering_key',
                          'length', octet_length(p_ordering_key), 'max', 4096)::text,
                      HINT = 'Keys are at most 4096 bytes; hash or shorten the ordering key before enqueueing.';
        END IF;
        IF octet_length(p_concurrency_key) > 4096 THEN
            RAISE EXCEPTION 'awa.insert_job: concurrency_key is % bytes, longer than 4096', octet_length(p_concurrency_key)
                USING ERRCODE = 'ZA003',
                      DETAIL = jsonb_build_object('code', 'key_too_long', 'field', 'concurrency_key',
                          'length', octet_length(p_concurrency_key), 'max', 4096)::text,
                      HINT = 'Keys are at most 4096 bytes; hash or shorten the concurrency key before enqueueing.';
        END IF;
    END IF;

    -- 5. Routing (D3), always computed here: client values are only expectations. v_h holds
    -- the u64 that selects the shard as a two's complement bigint; no key leaves v_h, v_digest
    -- and v_source NULL, which the INSERT reads as the rotor.
    IF p_ordering_key IS NOT NULL OR p_concurrency_key IS NOT NULL THEN
        -- With an ordering key but no concurrency key the ordering key is digested (fallback).
        v_digest := @schema@.concurrency_digest(COALESCE(p_concurrency_key, p_ordering_key));
        IF p_ordering_key IS NOT NULL THEN
            v_source := 'ordering_key';
            v_h := @schema@.ordering_key_hash64_i64(p_ordering_key);
        ELSE
            v_source := 'concurrency_key';
            -- D2: digest[0..8] big-endian. The hex round trip is the fewest operators (each
            -- costs a permission check per transaction in PL/pgSQL) that yields the 64 bits.
            v_h := ('x' || encode(substr(v_digest, 1, 8), 'hex'))::bit(64)::bigint;
        END IF;
    END IF;

    -- 4-6 when opts are present: read the width and compute the shard here, so that a
    -- mismatch (ZA001) is raised before the insert, as in the check order; the INSERT then
    -- stores this v_shard. Without opts the INSERT itself does step 4 and the shard of step 5.
    IF v_has_opts THEN
        -- 4. Width: the queue's enqueue_shards, a missing row meaning 1 (released rule).
        SELECT m.enqueue_shards INTO v_width
        FROM @schema@.queue_meta AS m WHERE m.queue = COALESCE(p_queue, 'default');
        IF v_width IS NULL THEN
            v_width := 1;
        ELSIF v_width < 1 OR v_width > 64 THEN
            -- Only reachable if queue_meta_enqueue_shards_range was dropped.
            PERFORM @schema@.raise_invalid_width(v_width, 'insert_job (queue_meta.enqueue_shards)');
        END IF;
        v_source := COALESCE(v_source, 'rotor');
        -- Rotor: sticky per backend like released Awa; any value in [0, width) conforms.
        v_h := COALESCE(v_h, pg_backend_pid());
        -- u64 mod width without NUMERIC (D2): ((hi mod w) * (2^32 mod w) + lo mod w) mod w.
        v_shard := (((((v_h >> 32) & 4294967295) % v_width) * (4294967296 % v_width))
                    + ((v_h & 4294967295) % v_width)) % v_width;

        -- 6. Expectations (ZA001): a supplied value must equal the computed one.
        IF v_exp_digest_set AND v_exp_digest IS DISTINCT FROM v_digest THEN
            RAISE EXCEPTION 'awa.insert_job: expected_concurrency_digest does not match the digest PostgreSQL computed'
                USING ERRCODE = 'ZA001',
                      DETAIL = jsonb_build_object('code', 'expected_concurrency_digest_mismatch',
                          'expected', v_opts -> 'expected_concurrency_digest',
                          'actual', encode(v_digest, 'hex'))::text,
                      HINT = 'The producer computes the concurrency digest differently from contract v1 (D1: SHA-256 of the tag "awa:concurrency_key:v1", a zero byte, then the key bytes); fix the producer or drop the expectation.';
        END IF;
        IF v_exp_shard IS NOT NULL AND v_source = 'rotor' THEN
            -- v1.1: the rotor's shard is the implementation's choice (vectors record null), so
            -- no producer can know it; an expectation on an unkeyed job always fails, whatever
            -- the width, instead of failing at random.
            RAISE EXCEPTION 'awa.insert_job: expected_enqueue_shard % cannot hold for a job without keys: the rotor chooses its shard',
                v_exp_shard #>> '{}'
                USING ERRCODE = 'ZA001',
                      DETAIL = jsonb_build_object('code', 'expected_enqueue_shard_mismatch',
                          'expected', v_exp_shard, 'actual', NULL::integer,
                          'route_source', 'rotor')::text,
                      HINT = 'Send expected_enqueue_shard only with an ordering_key or concurrency_key; an unkeyed job goes to the rotor, whose shard no producer can predict.';
        END IF;
        IF v_exp_shard IS NOT NULL AND (v_exp_shard #>> '{}')::numeric <> v_shard THEN
            RAISE EXCEPTION 'awa.insert_job: expected_enqueue_shard % does not match the computed shard %',
                v_exp_shard #>> '{}', v_shard
                USING ERRCODE = 'ZA001',
                      DETAIL = jsonb_build_object('code', 'expected_enqueue_shard_mismatch',
                          'expected', v_exp_shard, 'actual', v_shard)::text,
                      HINT = 'The producer routes differently from contract v1 (D2/D3) or uses a stale queue width; re-read the width with awa.queue_enqueue_shards(queue) or fix the routing code.';
        END IF;
        IF v_exp_source IS NOT NULL AND v_exp_source <> v_source THEN
            RAISE EXCEPTION 'awa.insert_job: expected_route_source % does not match the computed route source %',
                v_exp_source, v_source
                USING ERRCODE = 'ZA001',
                      DETAIL = jsonb_build_object('code', 'expected_route_source_mismatch',
                          'expected', v_exp_source, 'actual', v_source)::text,
                      HINT = 'Precedence is ordering_key, then concurrency_key, then rotor (D3); fix the producer''s precedence.';
        END IF;
    END IF;

    -- 7. The job row, in one statement. Without opts the scalar subquery does step 4 and the
    -- shard of step 5: it reads the queue's width and returns the u64 mod width (rotor:
    -- pg_backend_pid() mod width, a non-negative int); no row means width 1, so shard 0. A
    -- width outside 1..=64 (only possible if queue_meta_enqueue_shards_range was dropped)
    -- raises ZA004 there, before the row is checked. The initial state is scheduled whenever
    -- run_at is given, even in the past, as released Rust and Python producers choose it (v1.1,
    -- ADR 0027); a NULL kind fails here with 23502 (NOT NULL), as released.
    INSERT INTO @schema@.contract_jobs (
        kind, queue, args, state, priority, max_attempts, run_at, created_at, metadata, tags,
        unique_key, unique_states, ordering_key, concurrency_digest, enqueue_shard,
        route_source, enqueued_by)
    VALUES (
        p_kind, COALESCE(p_queue, 'default'), COALESCE(p_args, '{}'::jsonb),
        CASE WHEN p_run_at IS NOT NULL THEN 'scheduled' ELSE 'available' END,
        COALESCE(p_priority, 2), COALESCE(p_max_attempts, 25), COALESCE(p_run_at, v_now), v_now,
        COALESCE(p_metadata, '{}'::jsonb), COALESCE(p_tags, '{}'::text[]), p_unique_key,
        v_unique_states, p_ordering_key, v_digest,
        COALESCE(v_shard, (
            SELECT CASE
                WHEN m.enqueue_shards NOT BETWEEN 1 AND 64 THEN @schema@.raise_invalid_width(
                    m.enqueue_shards, 'insert_job (queue_meta.enqueue_shards)')
                WHEN v_h IS NULL THEN pg_backend_pid() % m.enqueue_shards
                ELSE (((((v_h >> 32) & 4294967295) % m.enqueue_shards)
                        * (4294967296 % m.enqueue_shards))
                      + ((v_h & 4294967295) % m.enqueue_shards)) % m.enqueue_shards
            END
            FROM @schema@.queue_meta AS m WHERE m.queue = COALESCE(p_queue, 'default')), 0),
        COALESCE(v_source, 'rotor'), session_user)
    RETURNING id, queue, state, priority, enqueue_shard, route_source, concurrency_digest,
        unique_key
    INTO v_result;

    -- 8. The uniqueness claim (released rule, docs/released-awa.md R7.2). A duplicate raises 23505 on
    -- idx_awa_jobs_unique and the rollback removes the job row too.
    IF p_unique_key IS NOT NULL AND v_unique_states IS NOT NULL
       AND get_bit(v_unique_states, CASE v_result.state WHEN 'scheduled' THEN 0 ELSE 1 END) = 1 THEN
        INSERT INTO @schema@.job_unique_claims (unique_key, job_id)
        VALUES (p_unique_key, v_result.job_id);
    END IF;

    RETURN v_result;
END
$fn$;

REVOKE ALL ON FUNCTION @schema@.insert_job(
    text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], bytea, varbit, bytea,
    bytea, jsonb) FROM PUBLIC;

-- The stored routing of one job (D7), scoped to its caller (v1.1, ADR 0026): a caller sees a
-- job only if its session user enqueued it (contract_jobs.enqueued_by, the ADR-043 audit
-- identity) or if it is a member of this function's owner (the role that installed the schema,
-- e.g. the runner; superusers are members of every role). Any other id gives the NULL row, as
-- an unknown one does, so a producer learns nothing about other producers' jobs. No raw key is
-- returned to anyone: ordering_key_digest is the section 6 digest of the stored ordering key.
-- VOLATILE on purpose: it then reads with a fresh snapshot, so it sees a job inserted earlier
-- in the same statement (e.g. SELECT ... FROM insert_job(...) r, job_routing(r.job_id) x);
-- a STABLE function would use the caller's statement snapshot and return NULL there.
CREATE OR REPLACE FUNCTION @schema@.job_routing(p_job_id bigint)
RETURNS @schema@.job_routing_row
LANGUAGE sql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, @schema@, pg_temp
AS $fn$
    SELECT j.id, j.queue, j.state, j.priority, j.enqueue_shard, j.route_source,
           j.concurrency_digest, @schema@.concurrency_digest(j.ordering_key), j.unique_key,
           j.unique_states::text
    FROM @schema@.contract_jobs AS j
    WHERE j.id = p_job_id
      -- Inside a SECURITY DEFINER function current_user is the owner.
      AND (j.enqueued_by = session_user OR pg_has_role(session_user, current_user, 'MEMBER'))
$fn$;

REVOKE ALL ON FUNCTION @schema@.job_routing(bigint) FROM PUBLIC;

-- A queue's width as insert_job reads it (v1.1): producers hold no privilege on queue_meta, yet
-- need the width to compute an expected_enqueue_shard client-side. A missing row means 1 (the
-- released rule); NULL means the queue 'default', as in insert_job. A width outside 1..=64
-- (only possible if queue_meta_enqueue_shards_range was dropped) raises ZA004, as insert_job.
CREATE OR REPLACE FUNCTION @schema@.queue_enqueue_shards(p_queue text)
RETURNS smallint
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, @schema@, pg_temp
AS $fn$
    SELECT COALESCE((
        SELECT CASE
            WHEN m.enqueue_shards BETWEEN 1 AND 64 THEN m.enqueue_shards
            ELSE @schema@.raise_invalid_width(m.enqueue_shards, 'queue_enqueue_shards')::smallint
        END
        FROM @schema@.queue_meta AS m WHERE m.queue = COALESCE(p_queue, 'default')), 1::smallint)
$fn$;

REVOKE ALL ON FUNCTION @schema@.queue_enqueue_shards(text) FROM PUBLIC;
