-- 007_bulk: the staged bulk path (docs/contract.md section 14, docs/adr/0042-staged-bulk-path.md): a
-- staging table producers COPY rows into, and publish_batch(uuid), which validates every
-- staged row of a batch and then publishes the whole batch or nothing.
--
-- Depends on: 002 (tables), 003 (routing helpers), 005 (the producer role), 006 (the bounded
-- owner, whose name is derived here the same way). Placeholders: @schema@, @producer_role@.
-- Idempotent: IF NOT EXISTS, CREATE OR REPLACE FUNCTION, DO blocks that skip an existing
-- trigger; GRANT/REVOKE and ALTER ... OWNER TO of what is already so are no-ops. Safe inside
-- one transaction: EXECUTE is revoked from PUBLIC in the transaction that creates the
-- functions. Forward-only: 001-006 are not edited; this file replaces contract_capabilities()
-- to add `bulk`.
--
-- Hardening as 004: SECURITY DEFINER owned by the bounded owner, fixed search_path with
-- pg_catalog first and pg_temp last, every object schema-qualified, no dynamic SQL in the
-- contract functions, caller values never used as identifiers.

-- 001's list plus `bulk` (sorted): this install answers publish_batch.
CREATE OR REPLACE FUNCTION @schema@.contract_capabilities()
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT ARRAY[
    'bulk',
    'concurrency_digest',
    'concurrency_shard',
    'contract_1_1',
    'expectations',
    'job_routing',
    'move_shard',
    'ordering_shard',
    'routing_precedence',
    'unique_key',
    'unique_states'
  ]::text[]
$fn$;

-- One row per staged job: the insert_job parameters (NULL = the default, as in insert_job,
-- opts excepted: a staged row states its routing in the last three columns instead) plus
-- the routing the producer computed client-side. The batch belongs to the session user that
-- staged it: staged_by is filled by its DEFAULT, and producers may INSERT every column but
-- that one, so no producer can stage into, read or publish another's batch. Rows never
-- outlive their transaction (the deferred trigger below), so the table is empty between
-- transactions.
CREATE TABLE IF NOT EXISTS @schema@.bulk_staging (
    batch_id           uuid NOT NULL,
    row_no             integer NOT NULL,
    staged_by          text NOT NULL DEFAULT session_user,
    kind               text,
    queue              text,
    args               jsonb,
    priority           smallint,
    max_attempts       smallint,
    run_at             timestamptz,
    metadata           jsonb,
    tags               text[],
    unique_key         bytea,
    unique_states      varbit,
    ordering_key       bytea,
    concurrency_key    bytea,
    concurrency_digest bytea,
    enqueue_shard      smallint,
    route_source       text,
    CONSTRAINT bulk_staging_pkey PRIMARY KEY (staged_by, batch_id, row_no)
);

-- ZA006 at COMMIT for a staged row that was never published: staging is part of the batch's
-- transaction, so a rejected or forgotten batch leaves nothing behind (the commit fails and
-- the rows roll back). A published row was deleted by publish_batch and passes. SECURITY
-- DEFINER because the staging producer cannot read the table; a trigger function cannot be
-- called directly, and EXECUTE is revoked from PUBLIC anyway.
CREATE OR REPLACE FUNCTION @schema@.bulk_staging_unpublished()
RETURNS trigger
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, @schema@, pg_temp
AS $fn$
BEGIN
    IF EXISTS (SELECT 1 FROM @schema@.bulk_staging AS b
               WHERE b.staged_by = NEW.staged_by AND b.batch_id = NEW.batch_id
                 AND b.row_no = NEW.row_no) THEN
        RAISE EXCEPTION 'awa.insert_job: bulk batch % has staged rows that were never published (row %)',
            NEW.batch_id, NEW.row_no
            USING ERRCODE = 'ZA006',
                  DETAIL = jsonb_build_object('code', 'bulk_batch_unpublished',
                      'batch', NEW.batch_id, 'row', NEW.row_no)::text,
                  HINT = 'Call publish_batch(batch) in the transaction that staged the rows; staged rows never commit on their own.';
    END IF;
    RETURN NULL;
END
$fn$;

REVOKE ALL ON FUNCTION @schema@.bulk_staging_unpublished() FROM PUBLIC;

-- CREATE CONSTRAINT TRIGGER has no IF NOT EXISTS / OR REPLACE: check the catalog first.
DO $install$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_catalog.pg_trigger
        WHERE tgrelid = '@schema@.bulk_staging'::regclass
          AND tgname = 'bulk_staging_published_before_commit'
    ) THEN
        CREATE CONSTRAINT TRIGGER bulk_staging_published_before_commit
            AFTER INSERT ON @schema@.bulk_staging
            DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION @schema@.bulk_staging_unpublished();
    END IF;
END
$install$;

-- Validate every row the caller staged for p_batch, then publish all of them (job rows,
-- uniqueness claims; staged rows deleted) or raise ZA006 naming the first bad row (smallest
-- row_no) with nothing published. Returns the new job ids in row_no order.
--
-- Per row, in insert_job's check order: unique_states 8 bits; kind, queue, priority,
-- max_attempts, tags (released rules); key lengths; then the staged routing against the
-- routing PostgreSQL computes (digest, shard, route source; a rotor row's shard must be NULL,
-- as no producer can know it); kind NULL; then a claim that an earlier row of the same batch
-- already takes. Only a batch that passes all of that is inserted: a claim held outside the
-- batch then names the first row whose claim collides.
CREATE OR REPLACE FUNCTION @schema@.publish_batch(p_batch uuid)
RETURNS bigint[]
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, @schema@, pg_temp
AS $fn$
DECLARE
    v_now     timestamptz := clock_timestamp();
    v_bad     record;
    v_ids     bigint[];
    v_claim   record;
    v_count   bigint;
BEGIN
    -- 1. Validate. One statement computes each row's routing and its first problem; the
    -- smallest row_no with a problem is reported.
    SELECT v.row_no, v.problem INTO v_bad
    FROM (
        SELECT c.row_no,
            CASE
                WHEN length(c.unique_states) <> 8 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', '22026',
                    'rule', 'unique_states_not_8_bits',
                    'why', 'unique_states has ' || length(c.unique_states) || ' bits, it must have exactly 8')
                WHEN length(c.kind) > 200 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', '23514', 'rule', 'kind_too_long',
                    'why', 'job kind length must be <= 200 characters')
                WHEN length(c.queue) > 200 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', '23514', 'rule', 'queue_too_long',
                    'why', 'queue name length must be <= 200 characters')
                WHEN c.priority NOT BETWEEN 1 AND 4 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', '23514', 'rule', 'priority_range',
                    'why', 'priority must be between 1 and 4')
                WHEN c.max_attempts NOT BETWEEN 1 AND 1000 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', '23514', 'rule', 'max_attempts_range',
                    'why', 'max_attempts must be between 1 and 1000')
                WHEN cardinality(c.tags) > 20 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', '23514', 'rule', 'too_many_tags',
                    'why', 'job tags must contain at most 20 values')
                WHEN octet_length(c.ordering_key) > 4096 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', 'ZA003', 'rule', 'key_too_long',
                    'field', 'ordering_key',
                    'why', 'ordering_key is ' || octet_length(c.ordering_key) || ' bytes, longer than 4096')
                WHEN octet_length(c.concurrency_key) > 4096 THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', 'ZA003', 'rule', 'key_too_long',
                    'field', 'concurrency_key',
                    'why', 'concurrency_key is ' || octet_length(c.concurrency_key) || ' bytes, longer than 4096')
                WHEN c.concurrency_digest IS DISTINCT FROM c.c_digest THEN jsonb_build_object(
                    'code', 'bulk_row_mismatch', 'field', 'concurrency_digest',
                    'staged', encode(c.concurrency_digest, 'hex'), 'computed', encode(c.c_digest, 'hex'),
                    'why', 'the staged concurrency_digest differs from the digest PostgreSQL computed')
                WHEN c.enqueue_shard IS DISTINCT FROM c.c_shard THEN jsonb_build_object(
                    'code', 'bulk_row_mismatch', 'field', 'enqueue_shard',
                    'staged', c.enqueue_shard, 'computed', c.c_shard,
                    'why', 'the staged enqueue_shard differs from the shard PostgreSQL computed')
                WHEN c.route_source IS DISTINCT FROM c.c_source THEN jsonb_build_object(
                    'code', 'bulk_row_mismatch', 'field', 'route_source',
                    'staged', c.route_source, 'computed', c.c_source,
                    'why', 'the staged route_source differs from the route source PostgreSQL computed')
                WHEN c.kind IS NULL THEN jsonb_build_object(
                    'code', 'bulk_row_invalid', 'sqlstate', '23502', 'rule', 'kind_null',
                    'why', 'kind is NULL')
                WHEN c.claiming AND c.first_claim <> c.row_no THEN jsonb_build_object(
                    'code', 'bulk_unique_conflict', 'with_row', c.first_claim,
                    'why', 'row ' || c.first_claim || ' of the batch already claims this unique_key')
            END AS problem
        FROM (
            SELECT r.*,
                CASE WHEN r.c_source = 'ordering_key'
                         THEN @schema@.ordering_shard(r.ordering_key, r.width)
                     WHEN r.c_source = 'concurrency_key'
                         THEN @schema@.concurrency_shard(r.c_digest, r.width)
                END AS c_shard,
                CASE WHEN r.claiming THEN
                    first_value(r.row_no) OVER (PARTITION BY r.claiming, r.unique_key ORDER BY r.row_no)
                END AS first_claim
            FROM (
                SELECT b.row_no, b.kind, b.queue, b.priority, b.max_attempts, b.tags,
                    b.unique_key, b.unique_states, b.ordering_key, b.concurrency_key,
                    b.concurrency_digest, b.enqueue_shard, b.route_source,
                    COALESCE(m.enqueue_shards, 1)::integer AS width,
                    -- D3: an ordering key without a concurrency key is digested (fallback).
                    @schema@.concurrency_digest(COALESCE(b.concurrency_key, b.ordering_key)) AS c_digest,
                    CASE WHEN b.ordering_key IS NOT NULL THEN 'ordering_key'
                         WHEN b.concurrency_key IS NOT NULL THEN 'concurrency_key'
                         ELSE 'rotor' END AS c_source,
                    -- The released claim rule: key and states set, the initial state's bit set.
                    -- (CASE, not AND: get_bit must never see a value of another length.)
                    CASE WHEN b.unique_key IS NOT NULL AND length(b.unique_states) = 8
                         THEN get_bit(b.unique_states,
                                      CASE WHEN b.run_at IS NOT NULL THEN 0 ELSE 1 END) = 1
                         ELSE false END AS claiming
                FROM @schema@.bulk_staging AS b
                LEFT JOIN @schema@.queue_meta AS m ON m.queue = COALESCE(b.queue, 'default')
                WHERE b.staged_by = session_user AND b.batch_id = p_batch
            ) AS r
        ) AS c
    ) AS v
    WHERE v.problem IS NOT NULL
    ORDER BY v.row_no
    LIMIT 1;

    IF FOUND THEN
        RAISE EXCEPTION 'awa.insert_job: bulk batch % rejected at row %: %', p_batch,
            v_bad.row_no, v_bad.problem ->> 'why'
            USING ERRCODE = 'ZA006',
                  DETAIL = ((v_bad.problem - 'why')
                            || jsonb_build_object('batch', p_batch, 'row', v_bad.row_no))::text,
                  HINT = 'Nothing of the batch was published. Fix the producer for the named row (bulk_row_mismatch: its routing code, contract D1-D3, or a stale queue width; bulk_row_invalid: insert_job''s rule; bulk_unique_conflict: a duplicate unique_key) and stage the batch again.';
    END IF;

    -- 2. Publish: take the rows out of staging and insert jobs and claims in one statement.
    -- The staged routing equals the computed one (step 1); a rotor row's shard is picked
    -- here, sticky per backend as in insert_job. Ids are drawn first so claims can name them.
    BEGIN
        WITH moved AS (
            DELETE FROM @schema@.bulk_staging AS b
            WHERE b.staged_by = session_user AND b.batch_id = p_batch
            RETURNING b.*
        ), placed AS (
            SELECT mv.*, nextval('@schema@.contract_jobs_id_seq'::regclass) AS id,
                CASE WHEN mv.run_at IS NOT NULL THEN 'scheduled' ELSE 'available' END AS state,
                COALESCE(mv.enqueue_shard, (
                    SELECT CASE
                        WHEN m.enqueue_shards NOT BETWEEN 1 AND 64 THEN @schema@.raise_invalid_width(
                            m.enqueue_shards, 'publish_batch (queue_meta.enqueue_shards)')
                        ELSE pg_backend_pid() % m.enqueue_shards END
                    FROM @schema@.queue_meta AS m WHERE m.queue = COALESCE(mv.queue, 'default')),
                    0) AS shard
            FROM moved AS mv
        ), jobs AS (
            INSERT INTO @schema@.contract_jobs (
                id, kind, queue, args, state, priority, max_attempts, run_at, created_at,
                metadata, tags, unique_key, unique_states, ordering_key, concurrency_digest,
                enqueue_shard, route_source, enqueued_by)
            SELECT p.id, p.kind, COALESCE(p.queue, 'default'), COALESCE(p.args, '{}'::jsonb),
                p.state, COALESCE(p.priority, 2), COALESCE(p.max_attempts, 25),
                COALESCE(p.run_at, v_now), v_now, COALESCE(p.metadata, '{}'::jsonb),
                COALESCE(p.tags, '{}'::text[]), p.unique_key, p.unique_states::bit(8),
                p.ordering_key, p.concurrency_digest, p.shard, p.route_source, session_user
            FROM placed AS p
        ), claims AS (
            INSERT INTO @schema@.job_unique_claims (unique_key, job_id)
            SELECT p.unique_key, p.id
            FROM placed AS p
            WHERE p.unique_key IS NOT NULL AND p.unique_states IS NOT NULL
              AND get_bit(p.unique_states, CASE p.state WHEN 'scheduled' THEN 0 ELSE 1 END) = 1
        )
        SELECT array_agg(p.id ORDER BY p.row_no), count(*) INTO v_ids, v_count FROM placed AS p;
    EXCEPTION WHEN unique_violation THEN
        -- A claim already held outside the batch (the block's work is undone, the rows are
        -- staged again): probe the claims in row order to name the first colliding row.
        FOR v_claim IN
            SELECT b.row_no, b.unique_key
            FROM @schema@.bulk_staging AS b
            WHERE b.staged_by = session_user AND b.batch_id = p_batch
              AND b.unique_key IS NOT NULL AND length(b.unique_states) = 8
              AND get_bit(b.unique_states, CASE WHEN b.run_at IS NOT NULL THEN 0 ELSE 1 END) = 1
            ORDER BY b.row_no
        LOOP
            INSERT INTO @schema@.job_unique_claims (unique_key, job_id)
            VALUES (v_claim.unique_key, 0) ON CONFLICT DO NOTHING;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            IF v_count = 0 THEN
                RAISE EXCEPTION 'awa.insert_job: bulk batch % rejected at row %: a job outside the batch already claims this unique_key',
                    p_batch, v_claim.row_no
                    USING ERRCODE = 'ZA006',
                          DETAIL = jsonb_build_object('code', 'bulk_unique_conflict',
                              'with_row', NULL::integer, 'batch', p_batch,
                              'row', v_claim.row_no)::text,
                          HINT = 'Nothing of the batch was published. The unique_key of the named row is claimed by an existing job (released duplicate rule); drop the row or its uniqueness and stage the batch again.';
            END IF;
        END LOOP;
        RAISE;
    END;

    IF v_count = 0 THEN
        RAISE EXCEPTION 'awa.insert_job: bulk batch % has no staged rows', p_batch
            USING ERRCODE = 'ZA006',
                  DETAIL = jsonb_build_object('code', 'bulk_batch_empty', 'batch', p_batch)::text,
                  HINT = 'Stage the rows (COPY into bulk_staging with this batch_id) in the same transaction and as the same session user, then publish.';
    END IF;
    RETURN v_ids;
END
$fn$;

REVOKE ALL ON FUNCTION @schema@.publish_batch(uuid) FROM PUBLIC;

-- The producer stages (INSERT on every column but staged_by, which its DEFAULT fills with the
-- session user) and publishes; it still reads no table.
GRANT INSERT (batch_id, row_no, kind, queue, args, priority, max_attempts, run_at, metadata,
    tags, unique_key, unique_states, ordering_key, concurrency_key, concurrency_digest,
    enqueue_shard, route_source) ON @schema@.bulk_staging TO @producer_role@;
GRANT EXECUTE ON FUNCTION @schema@.publish_batch(uuid) TO @producer_role@;

-- The bounded owner of 006 owns the two new definer functions and holds what they need:
-- SELECT and DELETE on the staging table (claims are only inserted, as by insert_job). As in
-- 006, ALTER ... OWNER needs the new owner to hold CREATE on the schema when a non-superuser
-- installs: granted for the two statements only.
DO $install$
DECLARE
    v_owner text := pg_catalog.left(pg_catalog.regexp_replace(
        (pg_catalog.parse_ident('@producer_role@'))[1], '_producer$', '') || '_owner', 63);
    v_had_create boolean;
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT, DELETE ON @schema@.bulk_staging TO %I', v_owner);
    v_had_create := pg_catalog.has_schema_privilege(
        v_owner, '@schema@'::pg_catalog.regnamespace::pg_catalog.oid, 'CREATE');
    IF NOT v_had_create THEN
        EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA @schema@ TO %I', v_owner);
    END IF;
    EXECUTE pg_catalog.format(
        'ALTER FUNCTION @schema@.publish_batch(uuid) OWNER TO %I', v_owner);
    EXECUTE pg_catalog.format(
        'ALTER FUNCTION @schema@.bulk_staging_unpublished() OWNER TO %I', v_owner);
    IF NOT v_had_create THEN
        EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA @schema@ FROM %I', v_owner);
    END IF;
END
$install$;
