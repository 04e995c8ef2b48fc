-- smoke.sql: behavioural checks of an installed contract schema (run by tests/run.sh).
--
-- Placeholders as in the install files (@schema@, @producer_role@) plus @login_role@ and
-- @outsider_role@ (LOGIN test roles run.sh creates). Every check raises on failure, and
-- ON_ERROR_STOP turns that into a non-zero psql exit. Expected digests/hashes were computed
-- with Python hashlib and the released multiply-then-add loop (tests/crosscheck.py holds both).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
-- Only failures speak: results go nowhere until the final line.
\o /dev/null

-- Assertion helpers live in pg_temp so the test leaves nothing behind.
CREATE FUNCTION pg_temp.check(p_ok boolean, p_what text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_ok IS NOT TRUE THEN
        RAISE EXCEPTION 'FAIL: %', p_what;
    END IF;
END $$;

-- Run p_sql, require it to fail with p_state; for contract errors (p_code not NULL) also
-- require the D5 shape. Returns the DETAIL parsed as jsonb (NULL for non-contract errors).
CREATE FUNCTION pg_temp.expect_error(
    p_sql text, p_state text, p_code text DEFAULT NULL, p_msg text DEFAULT NULL,
    p_constraint text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_state text; v_msg text; v_detail text; v_hint text; v_con text;
BEGIN
    BEGIN
        EXECUTE p_sql;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_msg = MESSAGE_TEXT,
            v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT,
            v_con = CONSTRAINT_NAME;
        IF v_state <> p_state THEN
            RAISE EXCEPTION 'FAIL: % -> SQLSTATE % (%), want %', p_sql, v_state, v_msg, p_state;
        END IF;
        IF p_msg IS NOT NULL AND v_msg <> p_msg THEN
            RAISE EXCEPTION 'FAIL: % -> message "%", want "%"', p_sql, v_msg, p_msg;
        END IF;
        IF p_constraint IS NOT NULL AND v_con IS DISTINCT FROM p_constraint THEN
            RAISE EXCEPTION 'FAIL: % -> constraint %, want %', p_sql, v_con, p_constraint;
        END IF;
        IF p_code IS NULL THEN
            RETURN NULL;
        END IF;
        IF v_msg NOT LIKE 'awa.insert\_job: %' THEN
            RAISE EXCEPTION 'FAIL: % -> message "%" lacks the awa.insert_job: prefix', p_sql, v_msg;
        END IF;
        IF coalesce(v_hint, '') = '' THEN
            RAISE EXCEPTION 'FAIL: % -> no HINT', p_sql;
        END IF;
        IF jsonb_typeof(v_detail::jsonb) <> 'object' OR v_detail::jsonb ->> 'code' <> p_code THEN
            RAISE EXCEPTION 'FAIL: % -> DETAIL %, want code %', p_sql, v_detail, p_code;
        END IF;
        RETURN v_detail::jsonb;
    END;
    RAISE EXCEPTION 'FAIL: % succeeded, want SQLSTATE %', p_sql, p_state;
END $$;

-- Catalog ------------------------------------------------------------------------------------
SELECT pg_temp.check(@schema@.contract_version() = 1, 'contract_version() = 1');
SELECT pg_temp.check(@schema@.contract_capabilities() @> ARRAY['unique_key', 'ordering_shard',
    'concurrency_digest', 'concurrency_shard', 'routing_precedence', 'expectations',
    'unique_states', 'job_routing', 'move_shard', 'contract_1_1'], 'capabilities list');

-- Helpers: known values ----------------------------------------------------------------------
SELECT pg_temp.check(encode(@schema@.concurrency_digest(''::bytea), 'hex')
    = '9532f040fb7b2ab29d6804214aec37870a983b3816c1cc9bf4609616763631e3', 'digest of empty key');
SELECT pg_temp.check(encode(@schema@.concurrency_digest('tenant-42'::bytea), 'hex')
    = '9222cda824076fe5621e59be254c202926ea430e9cfac7e46ef3047de2aa941c', 'digest of tenant-42');
SELECT pg_temp.check(encode(@schema@.concurrency_digest('\x00'::bytea), 'hex')
    = 'cf55546849f2abc2ccc539823b42c430edca64404c2ab25cf457eed615662564', 'digest of 0x00');
SELECT pg_temp.check(@schema@.concurrency_shard(@schema@.concurrency_digest('tenant-42'::bytea), 8) = 5
    AND @schema@.concurrency_shard(@schema@.concurrency_digest('tenant-42'::bytea), 7) = 1,
    'concurrency_shard of tenant-42 at widths 8 and 7');
SELECT pg_temp.check(@schema@.ordering_key_hash64(''::bytea) = 14695981039346656037,
    'ordering hash of empty key = FNV offset basis');
SELECT pg_temp.check(@schema@.ordering_key_hash64('tenant-42'::bytea) = 805962331363418024,
    'ordering hash of tenant-42');
SELECT pg_temp.check(@schema@.ordering_key_hash64('\x00'::bytea) = 12638153115695167455,
    'ordering hash of 0x00 (> 2^63, exercises the sign bit)');
SELECT pg_temp.check(@schema@.ordering_shard('\x00'::bytea, 8) = 7
    AND @schema@.ordering_shard('\x00'::bytea, 63) = 3
    AND @schema@.ordering_shard('\x80'::bytea, 8) = 7, 'ordering_shard of 0x00/0x80');
SELECT pg_temp.check(@schema@.move_shard(63, 8) = 7 AND @schema@.move_shard(5, 64) = 5,
    'move_shard');
SELECT pg_temp.check(@schema@.unique_states_bits(31) = B'11111000'
    AND @schema@.unique_states_bits(1) = B'10000000'
    AND @schema@.unique_states_bits(128) = B'00000001', 'unique_states_bits released examples');
SELECT pg_temp.check(
    (SELECT bool_and(get_bit(@schema@.unique_states_bits(m), i) = (m >> i) & 1)
     FROM generate_series(0, 255) m, generate_series(0, 7) i), 'unique_states_bits all masks');
SELECT pg_temp.check(@schema@.concurrency_digest(NULL) IS NULL
    AND @schema@.ordering_shard(NULL, 8) IS NULL, 'helpers are STRICT');

-- Helper errors
SELECT pg_temp.expect_error($$SELECT @schema@.concurrency_shard('\x0102030405060708'::bytea, 0)$$,
    'ZA004', 'invalid_width');
SELECT pg_temp.expect_error($$SELECT @schema@.ordering_shard('\x01'::bytea, 65)$$, 'ZA004', 'invalid_width');
SELECT pg_temp.expect_error($$SELECT @schema@.move_shard(1, -1)$$, 'ZA004', 'invalid_width');
SELECT pg_temp.expect_error($$SELECT @schema@.move_shard(64, 8)$$, '22003');
SELECT pg_temp.expect_error($$SELECT @schema@.unique_states_bits(256)$$, '22003');
SELECT pg_temp.expect_error($$SELECT @schema@.concurrency_shard('\x01'::bytea, 8)$$, '22023');
SELECT pg_temp.check(
    (pg_temp.expect_error($$SELECT @schema@.concurrency_shard('\x0102030405060708'::bytea, 65)$$,
        'ZA004', 'invalid_width')) @> '{"width": 65, "min": 1, "max": 64}', 'ZA004 DETAIL members');

-- insert_job: defaults, coalescing, state -----------------------------------------------------
SELECT pg_temp.check((SELECT r.queue = 'default' AND r.state = 'available' AND r.priority = 2
    AND r.enqueue_shard = 0 AND r.route_source = 'rotor' AND r.concurrency_digest IS NULL
    AND r.unique_key IS NULL
    FROM @schema@.insert_job('smoke.defaults') r), 'defaults');

SELECT (@schema@.insert_job('smoke.nulls', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    NULL, NULL, NULL)).job_id AS nulls_id \gset
SELECT pg_temp.check((SELECT j.queue = 'default' AND j.state = 'available' AND j.priority = 2
    AND j.args = '{}' AND j.metadata = '{}' AND j.tags = '{}' AND j.max_attempts = 25
    AND j.run_at = j.created_at AND j.unique_key IS NULL AND j.unique_states IS NULL
    FROM @schema@.contract_jobs j WHERE j.id = :nulls_id), 'NULL coalescing');

SELECT pg_temp.check((SELECT r.state = 'scheduled'
    FROM @schema@.insert_job('smoke.future', p_run_at => now() + interval '1 hour') r), 'future run_at -> scheduled');
-- v1.1 (ADR 0027): any given run_at, even a past one, gives scheduled, as released producers do.
SELECT pg_temp.check((SELECT r.state = 'scheduled'
    FROM @schema@.insert_job('smoke.past', p_run_at => now() - interval '1 hour') r), 'past run_at -> scheduled');
SELECT pg_temp.check((SELECT r.state = 'available'
    FROM @schema@.insert_job('smoke.now', p_run_at => NULL) r), 'NULL run_at -> available');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job(NULL)$$, '23502');
-- v1.1 (ADR 0025): unique_states of any other length than 8 is refused by the function itself,
-- with a contract DETAIL, however it is bound (varbit, bit, untyped text).
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_unique_states => B'1111')$$,
    '22026', 'unique_states_not_8_bits') = '{"code": "unique_states_not_8_bits", "length": 4, "expected_length": 8}',
    '4-bit unique_states refused with DETAIL');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_unique_states => '1111'::varbit)$$,
    '22026', 'unique_states_not_8_bits');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_unique_states => '111110000')$$,
    '22026', 'unique_states_not_8_bits');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_unique_states => ''::varbit)$$,
    '22026', 'unique_states_not_8_bits');
-- The unique_states check comes before every other check (released validation included).
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job(repeat('k', 201), p_unique_states => '1111')$$,
    '22026', 'unique_states_not_8_bits');
-- The hazard the contract warns about: the caller's own ::bit(8) pads before the call, so the
-- function sees 8 bits and stores 11110000. Only the producer can avoid it (docs/contract.md).
SELECT pg_temp.check((SELECT x.unique_states = '11110000'
    FROM @schema@.insert_job('k', p_unique_key => '\xbb01', p_unique_states => B'1111'::bit(8)) r,
    @schema@.job_routing(r.job_id) x), 'a caller-side ::bit(8) pads (documented hazard)');

-- Routing (D3) against known values -----------------------------------------------------------
INSERT INTO @schema@.queue_meta (queue, enqueue_shards) VALUES ('smoke_w8', 8), ('smoke_w63', 63)
ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards;

SELECT pg_temp.check((SELECT r.route_source = 'concurrency_key' AND r.enqueue_shard = 5
    AND encode(r.concurrency_digest, 'hex')
        = '9222cda824076fe5621e59be254c202926ea430e9cfac7e46ef3047de2aa941c'
    FROM @schema@.insert_job('k', 'smoke_w8', p_concurrency_key => 'tenant-42'::bytea) r),
    'concurrency key routing at width 8');

SELECT pg_temp.check((SELECT r.route_source = 'ordering_key' AND r.enqueue_shard = 3
    AND encode(r.concurrency_digest, 'hex')
        = '9222cda824076fe5621e59be254c202926ea430e9cfac7e46ef3047de2aa941c'
    FROM @schema@.insert_job('k', 'smoke_w63', p_ordering_key => '\x00'::bytea,
    p_concurrency_key => 'tenant-42'::bytea) r),
    'ordering key wins; digest of the concurrency key');

SELECT pg_temp.check((SELECT r.route_source = 'ordering_key' AND r.enqueue_shard = 7
    AND encode(r.concurrency_digest, 'hex')
        = 'cf55546849f2abc2ccc539823b42c430edca64404c2ab25cf457eed615662564'
    AND x.ordering_key_digest = r.concurrency_digest AND x.concurrency_digest = r.concurrency_digest
    AND x.enqueue_shard = r.enqueue_shard AND x.route_source = r.route_source
    FROM @schema@.insert_job('k', 'smoke_w8', p_ordering_key => '\x00'::bytea) r,
     @schema@.job_routing(r.job_id) x),
    'ordering key alone: fallback digest of the ordering key, stored and read back');

SELECT pg_temp.check((SELECT r.route_source = 'ordering_key' AND r.enqueue_shard = 5
    AND encode(r.concurrency_digest, 'hex')
        = '9532f040fb7b2ab29d6804214aec37870a983b3816c1cc9bf4609616763631e3'
    FROM @schema@.insert_job('k', 'smoke_w8', p_ordering_key => ''::bytea) r),
    'empty ordering key is a key');

SELECT pg_temp.check((SELECT r.route_source = 'rotor' AND r.enqueue_shard = pg_backend_pid() % 63
    AND r.concurrency_digest IS NULL
    FROM @schema@.insert_job('k', 'smoke_w63') r), 'rotor in [0, width)');

SELECT pg_temp.check((SELECT x IS NULL
    FROM @schema@.job_routing(-1) x), 'job_routing of an unknown id is NULL');
SELECT pg_temp.check((SELECT x.ordering_key_digest = @schema@.concurrency_digest('o'::bytea)
    AND x.concurrency_digest = @schema@.concurrency_digest('c'::bytea)
    FROM @schema@.insert_job('k', p_ordering_key => 'o'::bytea, p_concurrency_key => 'c'::bytea) r,
     @schema@.job_routing(r.job_id) x), 'job_routing returns the ordering key''s digest, never the key');

-- queue_enqueue_shards (v1.1): the width insert_job reads.
SELECT pg_temp.check(@schema@.queue_enqueue_shards('smoke_w8') = 8
    AND @schema@.queue_enqueue_shards('smoke_w63') = 63
    AND @schema@.queue_enqueue_shards('smoke_no_such_queue') = 1
    AND @schema@.queue_enqueue_shards(NULL) = @schema@.queue_enqueue_shards('default'),
    'queue_enqueue_shards');

-- Rotor plus expected_enqueue_shard (v1.1): always ZA001, at every width and for every value.
SELECT pg_temp.check(pg_temp.expect_error(format($$SELECT @schema@.insert_job('k', %L,
    p_opts => '{"expected_enqueue_shard": %s}')$$, q, e), 'ZA001', 'expected_enqueue_shard_mismatch')
    = jsonb_build_object('code', 'expected_enqueue_shard_mismatch', 'expected', e, 'actual', NULL,
        'route_source', 'rotor'), format('rotor + expected shard %s on %s', e, q))
FROM (VALUES ('smoke_no_such_queue'), ('smoke_w8'), ('smoke_w63')) AS w(q),
     generate_series(0, 8) AS e;

-- Keys of exactly 4096 bytes are accepted.
SELECT pg_temp.check((SELECT r.route_source = 'ordering_key'
    FROM @schema@.insert_job('k', p_ordering_key => decode(repeat('ab', 4096), 'hex'),
    p_concurrency_key => decode(repeat('cd', 4096), 'hex')) r), '4096-byte keys accepted');

-- Expectations -------------------------------------------------------------------------------
SELECT pg_temp.check((SELECT r.enqueue_shard = 5
    FROM @schema@.insert_job('k', 'smoke_w8', p_concurrency_key => 'tenant-42'::bytea, p_opts =>
    '{"expected_concurrency_digest": "9222cda824076fe5621e59be254c202926ea430e9cfac7e46ef3047de2aa941c",
      "expected_enqueue_shard": 5, "expected_route_source": "concurrency_key"}') r), 'matching expectations pass');
SELECT pg_temp.check((SELECT r.route_source = 'rotor'
    FROM @schema@.insert_job('k', p_opts => '{"expected_concurrency_digest": null}') r), 'expected digest null matches no digest');

SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k', 'smoke_w8',
    p_concurrency_key => 'tenant-42'::bytea, p_opts => '{"expected_concurrency_digest":
    "0000000000000000000000000000000000000000000000000000000000000000"}')$$,
    'ZA001', 'expected_concurrency_digest_mismatch')
    = '{"code": "expected_concurrency_digest_mismatch",
        "expected": "0000000000000000000000000000000000000000000000000000000000000000",
        "actual": "9222cda824076fe5621e59be254c202926ea430e9cfac7e46ef3047de2aa941c"}',
    'ZA001 digest DETAIL');
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k',
    p_opts => '{"expected_concurrency_digest":
    "9222cda824076fe5621e59be254c202926ea430e9cfac7e46ef3047de2aa941c"}')$$,
    'ZA001', 'expected_concurrency_digest_mismatch') -> 'actual' = 'null',
    'ZA001 digest expected but rotor has none');
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k', 'smoke_w8',
    p_concurrency_key => 'tenant-42'::bytea, p_opts => '{"expected_enqueue_shard": 4}')$$,
    'ZA001', 'expected_enqueue_shard_mismatch')
    = '{"code": "expected_enqueue_shard_mismatch", "expected": 4, "actual": 5}',
    'ZA001 shard DETAIL');
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k', 'smoke_w8',
    p_ordering_key => 'o'::bytea, p_concurrency_key => 'c'::bytea,
    p_opts => '{"expected_route_source": "concurrency_key"}')$$,
    'ZA001', 'expected_route_source_mismatch')
    = '{"code": "expected_route_source_mismatch", "expected": "concurrency_key", "actual": "ordering_key"}',
    'ZA001 route source DETAIL');

-- opts shape (ZA002 / ZA005) -----------------------------------------------------------------
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '[]')$$,
    'ZA002', 'opts_not_object') ->> 'actual_type' = 'array', 'opts array');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => 'null')$$, 'ZA002', 'opts_not_object');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '"x"')$$, 'ZA002', 'opts_not_object');
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k',
    p_opts => '{"zz": 1, "expected_route_source": "rotor", "ordering_key": "x"}')$$,
    'ZA002', 'unknown_opts_key') ->> 'key' = 'ordering_key', 'smallest unknown key reported');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '{"expected_enqueue_shard": "1"}')$$,
    'ZA005', 'invalid_opts_value');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '{"expected_enqueue_shard": 1.5}')$$,
    'ZA005', 'invalid_opts_value');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '{"expected_enqueue_shard": null}')$$,
    'ZA005', 'invalid_opts_value');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '{"expected_route_source": "shard"}')$$,
    'ZA005', 'invalid_opts_value');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '{"expected_route_source": 1}')$$,
    'ZA005', 'invalid_opts_value');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts =>
    '{"expected_concurrency_digest": "9222CDA824076FE5621E59BE254C202926EA430E9CFAC7E46EF3047DE2AA941C"}')$$,
    'ZA005', 'invalid_opts_value');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts =>
    '{"expected_concurrency_digest": "9222cd"}')$$, 'ZA005', 'invalid_opts_value');
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts =>
    '{"expected_concurrency_digest": 1}')$$, 'ZA005', 'invalid_opts_value') ->> 'key'
    = 'expected_concurrency_digest', 'ZA005 names the key');

-- Key length (ZA003) -------------------------------------------------------------------------
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k',
    p_ordering_key => decode(repeat('00', 4097), 'hex'))$$, 'ZA003', 'key_too_long')
    @> '{"field": "ordering_key", "length": 4097, "max": 4096}', 'ZA003 ordering_key');
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k',
    p_concurrency_key => decode(repeat('00', 5000), 'hex'))$$, 'ZA003', 'key_too_long')
    @> '{"field": "concurrency_key", "length": 5000}', 'ZA003 concurrency_key');

-- U+0000 in args cannot reach insert_job: jsonb rejects it during parameter conversion.
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_args => '{"a": "\u0000"}')$$, '22P05');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_args => '{"\u0000": 1}')$$, '22P05');

-- Check order --------------------------------------------------------------------------------
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job(repeat('k', 201), repeat('q', 201), p_priority => 0::smallint)$$,
    '23514', NULL, 'job kind length must be <= 200 characters');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', repeat('q', 201), p_priority => 0::smallint)$$,
    '23514', NULL, 'queue name length must be <= 200 characters');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_priority => 0::smallint, p_max_attempts => 0::smallint)$$,
    '23514', NULL, 'priority must be between 1 and 4');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_priority => 5::smallint)$$,
    '23514', NULL, 'priority must be between 1 and 4');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_max_attempts => 1001::smallint,
    p_tags => array_fill('t'::text, ARRAY[21]))$$,
    '23514', NULL, 'max_attempts must be between 1 and 1000');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_tags => array_fill('t'::text, ARRAY[21]),
    p_opts => '[]')$$, '23514', NULL, 'job tags must contain at most 20 values');
SELECT pg_temp.check((SELECT r.job_id IS NOT NULL
    FROM @schema@.insert_job(repeat('é', 200), repeat('q', 200), p_priority => 4::smallint,
    p_max_attempts => 1000::smallint, p_tags => array_fill('t'::text, ARRAY[20])) r), 'boundaries accepted: 200-char kind/queue, 20 tags');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '{"x": 1}',
    p_ordering_key => decode(repeat('00', 4097), 'hex'))$$, 'ZA002', 'unknown_opts_key');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_opts => '{"expected_enqueue_shard": 63}',
    p_ordering_key => decode(repeat('00', 4097), 'hex'))$$, 'ZA003', 'key_too_long');

-- Uniqueness (released claim rule) -----------------------------------------------------------
DELETE FROM @schema@.job_unique_claims WHERE unique_key IN ('\xaa01', '\xaa02', '\xaa03', '');
SELECT pg_temp.check((SELECT r.unique_key = '\xaa01'
    FROM @schema@.insert_job('k', p_unique_key => '\xaa01', p_unique_states => B'11111000') r), 'claimed insert');
SELECT count(*) AS jobs_before FROM @schema@.contract_jobs \gset
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', 'other_queue', p_unique_key => '\xaa01',
    p_unique_states => B'01000000')$$, '23505', NULL, NULL, 'idx_awa_jobs_unique');
SELECT pg_temp.check((SELECT count(*) = :jobs_before
    FROM @schema@.contract_jobs), 'duplicate left no job row');
SELECT pg_temp.check((SELECT count(*) = 2
    FROM (SELECT @schema@.insert_job('k', p_unique_key => '\xaa02') FROM generate_series(1, 2)) s), 'NULL states: stored, never enforced');
SELECT pg_temp.check((SELECT count(*) = 2
    FROM (SELECT @schema@.insert_job('k', p_unique_key => '\xaa03', p_unique_states => B'01111000',
      p_run_at => now() + interval '1 day') FROM generate_series(1, 2)) s), 'mask without the initial state takes no claim');
SELECT pg_temp.check((SELECT r.state = 'available'
    FROM @schema@.insert_job('k', p_unique_key => '\xaa03', p_unique_states => B'01111000') r), 'available insert claims after unclaimed scheduled ones');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_unique_key => '\xaa03',
    p_unique_states => B'11111000')$$, '23505', NULL, NULL, 'idx_awa_jobs_unique');
SELECT pg_temp.check((SELECT r.unique_key = ''
    FROM @schema@.insert_job('k', p_unique_key => '', p_unique_states => B'11111000') r), 'empty unique key claims');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k', p_unique_key => '',
    p_unique_states => B'11111000')$$, '23505', NULL, NULL, 'idx_awa_jobs_unique');
SELECT pg_temp.check((SELECT x.unique_states = '11111000' AND x.unique_key = ''
    FROM @schema@.contract_jobs j, @schema@.job_routing(j.id) x
WHERE j.unique_key = '' ORDER BY j.id LIMIT 1), 'job_routing unique fields');

-- ZA004 from insert_job: only reachable when the width CHECK has been dropped.
BEGIN;
ALTER TABLE @schema@.queue_meta DROP CONSTRAINT queue_meta_enqueue_shards_range;
INSERT INTO @schema@.queue_meta (queue, enqueue_shards) VALUES ('smoke_w65', 65);
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.insert_job('k', 'smoke_w65')$$,
    'ZA004', 'invalid_width') ->> 'width' = '65', 'ZA004 from insert_job');
SELECT pg_temp.check(pg_temp.expect_error($$SELECT @schema@.queue_enqueue_shards('smoke_w65')$$,
    'ZA004', 'invalid_width') ->> 'width' = '65', 'ZA004 from queue_enqueue_shards');
ROLLBACK;
SELECT pg_temp.expect_error($$INSERT INTO @schema@.queue_meta (queue, enqueue_shards) VALUES ('smoke_w0', 0)$$,
    '23514', NULL, NULL, 'queue_meta_enqueue_shards_range');

-- Hardening ----------------------------------------------------------------------------------
SELECT pg_temp.check((SELECT count(*) = 4 AND bool_and(p.prosecdef
        AND p.proconfig = ARRAY['search_path=pg_catalog, ' || quote_ident(n.nspname) || ', pg_temp'])
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE p.oid IN ('@schema@.insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb,
        text[], bytea, varbit, bytea, bytea, jsonb)'::regprocedure,
        '@schema@.job_routing(bigint)'::regprocedure,
        '@schema@.job_stored(bigint)'::regprocedure,
        '@schema@.queue_enqueue_shards(text)'::regprocedure)),
    'SECURITY DEFINER + fixed search_path (pg_catalog first, pg_temp last) on the four functions');
SELECT pg_temp.check((SELECT count(*) = 1
    FROM pg_proc WHERE proname = 'insert_job'
  AND pronamespace = (SELECT relnamespace FROM pg_class WHERE oid = '@schema@.contract_jobs'::regclass)), 'exactly one insert_job overload');
SELECT pg_temp.check(NOT EXISTS (
    SELECT 1 FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
    WHERE p.oid IN ('@schema@.insert_job(text, text, jsonb, smallint, smallint, timestamptz,
        jsonb, text[], bytea, varbit, bytea, bytea, jsonb)'::regprocedure,
        '@schema@.job_routing(bigint)'::regprocedure,
        '@schema@.job_stored(bigint)'::regprocedure,
        '@schema@.queue_enqueue_shards(text)'::regprocedure)
      AND a.grantee = 0), 'no PUBLIC EXECUTE on insert_job / job_routing / job_stored / queue_enqueue_shards');
SELECT pg_temp.check((SELECT array_agg(p.proname::text ORDER BY p.proname)
        = ARRAY['insert_job', 'job_routing', 'job_stored', 'publish_batch', 'queue_enqueue_shards']
    FROM pg_proc p, aclexplode(p.proacl) a
WHERE a.grantee = '@producer_role@'::regrole AND a.privilege_type = 'EXECUTE'),
    'producer role holds EXECUTE grants on exactly insert_job, job_routing, job_stored (008), publish_batch (007) and queue_enqueue_shards');
-- 007: INSERT on the staging columns only, never on staged_by (the batch's owner).
SELECT pg_temp.check(has_any_column_privilege('@producer_role@'::regrole, '@schema@.bulk_staging'::regclass, 'INSERT')
    AND NOT has_column_privilege('@producer_role@'::regrole, '@schema@.bulk_staging'::regclass, 'staged_by', 'INSERT')
    AND NOT has_any_column_privilege('@producer_role@'::regrole, '@schema@.bulk_staging'::regclass, 'SELECT'),
    'producer role stages into bulk_staging (INSERT, not staged_by) and reads nothing');
SELECT pg_temp.check(NOT EXISTS (
    SELECT 1 FROM pg_class c, aclexplode(c.relacl) a
    WHERE a.grantee = '@producer_role@'::regrole), 'producer role has no table privileges');
SELECT pg_temp.check((SELECT NOT rolcanlogin
    FROM pg_roles WHERE oid = '@producer_role@'::regrole), 'producer role is NOLOGIN');

-- A login member of the producer role can enqueue and read routing, and nothing else.
SET ROLE @login_role@;
SELECT pg_temp.check((SELECT r.route_source = 'concurrency_key' AND x.enqueue_shard = r.enqueue_shard
    FROM @schema@.insert_job('k', p_concurrency_key => 'c'::bytea) r, @schema@.job_routing(r.job_id) x),
    'login member enqueues and reads its routing');
SELECT pg_temp.check(@schema@.queue_enqueue_shards('smoke_w8') = 8, 'login member reads a width');
SELECT pg_temp.expect_error($$SELECT count(*) FROM @schema@.contract_jobs$$, '42501');
SELECT pg_temp.expect_error($$SELECT count(*) FROM @schema@.job_unique_claims$$, '42501');
SELECT pg_temp.expect_error($$SELECT count(*) FROM @schema@.queue_meta$$, '42501');
SELECT pg_temp.expect_error($$INSERT INTO @schema@.queue_meta (queue) VALUES ('x')$$, '42501');
-- 007: the login member stages (INSERT only) and publishes a batch in one transaction.
BEGIN;
INSERT INTO @schema@.bulk_staging (batch_id, row_no, kind, queue, concurrency_key,
    concurrency_digest, enqueue_shard, route_source)
VALUES ('5e5e5e5e-0000-4000-8000-000000000001', 1, 'k', 'smoke_w8', NULL, NULL, NULL, 'rotor'),
       ('5e5e5e5e-0000-4000-8000-000000000001', 2, 'k', 'smoke_w8', 'c'::bytea,
        @schema@.concurrency_digest('c'::bytea),
        @schema@.concurrency_shard(@schema@.concurrency_digest('c'::bytea), 8), 'concurrency_key');
SELECT pg_temp.check((SELECT x.route_source = 'concurrency_key'
        AND x.enqueue_shard = @schema@.concurrency_shard(@schema@.concurrency_digest('c'::bytea), 8)
    FROM unnest(@schema@.publish_batch('5e5e5e5e-0000-4000-8000-000000000001')) WITH ORDINALITY AS j(id, n),
         @schema@.job_routing(j.id) AS x WHERE j.n = 2),
    'login member publishes a staged batch; row 2 is stored with its routing');
COMMIT;
-- One off-by-one shard: ZA006 naming row 2 (the transaction then rolls the staged rows back).
BEGIN;
INSERT INTO @schema@.bulk_staging (batch_id, row_no, kind, queue, concurrency_key,
    concurrency_digest, enqueue_shard, route_source)
VALUES ('5e5e5e5e-0000-4000-8000-000000000002', 1, 'k', 'smoke_w8', NULL, NULL, NULL, 'rotor'),
       ('5e5e5e5e-0000-4000-8000-000000000002', 2, 'k', 'smoke_w8', 'c'::bytea,
        @schema@.concurrency_digest('c'::bytea),
        (@schema@.concurrency_shard(@schema@.concurrency_digest('c'::bytea), 8) + 1) % 8,
        'concurrency_key');
SELECT pg_temp.check((pg_temp.expect_error(
    $$SELECT @schema@.publish_batch('5e5e5e5e-0000-4000-8000-000000000002')$$,
    'ZA006', 'bulk_row_mismatch') ->> 'row') = '2', 'bulk: an off-by-one shard names its row');
ROLLBACK;
SELECT pg_temp.expect_error($$SELECT count(*) FROM @schema@.bulk_staging$$, '42501');
SELECT pg_temp.expect_error($$INSERT INTO @schema@.bulk_staging (batch_id, row_no, staged_by)
    VALUES ('5e5e5e5e-0000-4000-8000-000000000003', 1, 'someone_else')$$, '42501');
RESET ROLE;
SELECT pg_temp.check((SELECT count(*) FROM @schema@.bulk_staging) = 0, 'no staged row is left');
SET ROLE @outsider_role@;
SELECT pg_temp.expect_error($$SELECT @schema@.publish_batch('5e5e5e5e-0000-4000-8000-000000000001')$$, '42501');
SELECT pg_temp.expect_error($$SELECT @schema@.insert_job('k')$$, '42501');
SELECT pg_temp.expect_error($$SELECT @schema@.job_routing(1)$$, '42501');
SELECT pg_temp.expect_error($$SELECT @schema@.queue_enqueue_shards('x')$$, '42501');
RESET ROLE;

\o
\echo smoke.sql: all checks passed
