//! Mutation tests: a reference schema with one deliberate contract bug must make the

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]
//! corresponding SQL cases FAIL (exit 1, recorded `failed`, not a harness error).

mod db_support;

use db_support::{main_with, Gate};

use db_support::{cases_with, dsn, run_with_report, scalar, text, Scratch};

const INSERT_JOB: &str = "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, \
                          text[], bytea, bit varying, bytea, bytea, jsonb)";

/// Replace `from` with `to` in a function's definition and re-create it.
fn patch(s: &Scratch, function: &str, from: &str, to: &str) {
    let def = scalar(
        &s.dsn,
        &format!(
            "SELECT pg_get_functiondef('\"{}\".{function}'::regprocedure)",
            s.schema
        ),
    );
    assert!(
        def.contains(from),
        "mutant anchor {from:?} not found in {function}: update the test"
    );
    s.sql(&def.replace(from, to));
}

/// Drop the reference job table's CHECK constraints: they would catch some mutants at
/// insert time, and the runner is what must notice (a third-party schema has no such CHECKs).
fn drop_job_checks(s: &Scratch) {
    s.sql(
        "DO $$ DECLARE c text; BEGIN \
           FOR c IN SELECT conname FROM pg_constraint \
                    WHERE conrelid = '@S@.contract_jobs'::regclass AND contype = 'c' LOOP \
             EXECUTE format('ALTER TABLE @S@.contract_jobs DROP CONSTRAINT %I', c); \
           END LOOP; END $$",
    );
}

/// Run `filter`, expect exit 1 and every case whose name starts with one of `must_fail`
/// prefixes among the failures (at least one per prefix), and no harness errors.
fn assert_caught(s: &Scratch, filter: &str, must_fail: &[&str]) {
    let (out, report) = run_with_report(s, &[filter]);
    let failed = cases_with(&report, "failed");
    assert_eq!(
        out.status.code(),
        Some(1),
        "mutant not caught (exit code); failed: {failed:?}\nstderr: {}",
        text(&out.stderr)
    );
    for prefix in must_fail {
        assert!(
            failed.iter().any(|n| n.starts_with(prefix)),
            "no failed case starting with {prefix}; failed: {failed:?}"
        );
    }
    let errored = cases_with(&report, "errored");
    assert!(
        errored.is_empty(),
        "a mutant is a finding, not a harness error: {errored:?}"
    );
}

fn mutant_digest_without_nul_in_tag() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_tag");
    patch(
        &s,
        "concurrency_digest(bytea)",
        "6177613a636f6e63757272656e63795f6b65793a763100",
        "6177613a636f6e63757272656e63795f6b65793a7631",
    );
    assert_caught(
        &s,
        "sql::function::",
        &[
            "sql::function::cd-",
            "sql::function::cs-",
            "sql::function::rp-",
        ],
    );
}

fn mutant_ordering_hash_is_fnv1a() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_fnv");
    // Textbook FNV-1a (xor, then multiply) instead of released multiply-then-add.
    s.sql(
        "CREATE OR REPLACE FUNCTION @S@.ordering_key_hash64_i64(p_key bytea) RETURNS bigint \
         LANGUAGE plpgsql IMMUTABLE STRICT AS $$ \
         DECLARE h numeric := 14695981039346656037; lo integer; \
         BEGIN \
           FOR i IN 0 .. octet_length(p_key) - 1 LOOP \
             lo := mod(h, 256)::integer; \
             h := h - lo + (lo # get_byte(p_key, i)); \
             h := mod(h * 1099511628211, 18446744073709551616); \
           END LOOP; \
           IF h >= 9223372036854775808 THEN h := h - 18446744073709551616; END IF; \
           RETURN h::bigint; \
         END $$",
    );
    assert_caught(&s, "sql::function::os-", &["sql::function::os-"]);
}

fn mutant_ignores_the_ordering_key_fallback() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_fallback");
    drop_job_checks(&s);
    patch(
        &s,
        INSERT_JOB,
        "COALESCE(p_concurrency_key, p_ordering_key)",
        "p_concurrency_key",
    );
    assert_caught(
        &s,
        "sql::",
        &[
            "sql::function::os-",
            "sql::function::rp-",
            "sql::rejection::expected_digest_of_ordering_key",
        ],
    );
}

fn mutant_ignores_unknown_opts_keys() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_opts");
    patch(
        &s,
        INSERT_JOB,
        "IF v_bad_key IS NOT NULL THEN",
        "IF false THEN",
    );
    assert_caught(
        &s,
        "sql::rejection::",
        &[
            "sql::rejection::unknown_opts_key",
            "sql::rejection::unknown_opts_key_beside_known",
        ],
    );
}

fn mutant_concurrency_shard_reads_wrong_bytes() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_shard");
    patch(
        &s,
        INSERT_JOB,
        "encode(substr(v_digest, 1, 8), 'hex')",
        "encode(substr(v_digest, 25, 8), 'hex')",
    );
    // concurrency_digest vectors run at every width too, so they catch it as well.
    assert_caught(
        &s,
        "sql::function::c",
        &["sql::function::cs-", "sql::function::cd-"],
    );
}

fn mutant_concurrency_key_takes_precedence() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_prec");
    patch(
        &s,
        INSERT_JOB,
        "IF p_ordering_key IS NOT NULL THEN",
        "IF p_ordering_key IS NOT NULL AND p_concurrency_key IS NULL THEN",
    );
    drop_job_checks(&s);
    assert_caught(
        &s,
        "sql::",
        &[
            "sql::function::rp-",
            "sql::rejection::expected_route_source_mismatch",
        ],
    );
}

fn mutant_claims_regardless_of_state_mask() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_mask");
    patch(
        &s,
        INSERT_JOB,
        // `1 + 0 * get_bit(...) = 1`: the state bit no longer matters.
        "get_bit(v_unique_states,",
        "1 + 0 * get_bit(v_unique_states,",
    );
    assert_caught(
        &s,
        "sql::uniqueness::",
        &[
            "sql::uniqueness::mask_excluding_initial_state_takes_no_claim",
            "sql::uniqueness::scheduled_mask",
        ],
    );
}

fn mutant_security_invoker_and_public_execute() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "m_priv");
    s.sql(&format!(
        "ALTER FUNCTION @S@.{INSERT_JOB} SECURITY INVOKER; \
         GRANT EXECUTE ON FUNCTION @S@.{INSERT_JOB} TO PUBLIC; \
         ALTER FUNCTION @S@.{INSERT_JOB} SET search_path = @S@, pg_catalog"
    ));
    assert_caught(
        &s,
        "sql::",
        &[
            "sql::catalog::insert_job_security_definer",
            "sql::catalog::insert_job_no_public_execute",
            "sql::catalog::insert_job_search_path",
            // As an invoker function the producer role cannot write the tables.
            "sql::privilege::function::",
        ],
    );
}

/// Patch `insert_job`, dropping the job table's CHECKs first.
fn patch_insert_job(s: &Scratch, edits: &[(&str, &str)]) {
    drop_job_checks(s);
    let def = scalar(
        &s.dsn,
        &format!(
            "SELECT pg_get_functiondef('\"{}\".{INSERT_JOB}'::regprocedure)",
            s.schema
        ),
    );
    let mut out = def;
    for (from, to) in edits {
        assert!(
            out.contains(from),
            "mutant anchor {from:?} not found in insert_job: update the test"
        );
        out = out.replace(from, to);
    }
    s.sql(&out);
}

// ---- rotor ----

fn mutant_rotor_returns_the_width() {
    let s = Scratch::install(&dsn(), "m_rotor");
    patch_insert_job(
        &s,
        &[(
            "WHEN v_h IS NULL THEN pg_backend_pid() % m.enqueue_shards",
            "WHEN v_h IS NULL THEN m.enqueue_shards",
        )],
    );
    assert_caught(&s, "sql::rotor::", &["sql::rotor::unkeyed_width_"]);
}

// ---- race ----

fn mutant_race_without_unique_index() {
    let s = Scratch::install(&dsn(), "m_race");
    s.sql("DROP INDEX @S@.idx_awa_jobs_unique");
    assert_caught(
        &s,
        "sql::race::",
        &["sql::race::concurrent_same_unique_key"],
    );
}

// ---- uniqueness ----

fn mutant_null_states_key_enforced() {
    let s = Scratch::install(&dsn(), "m_nullst");
    patch_insert_job(
        &s,
        &[
            ("AND v_unique_states IS NOT NULL", "AND true"),
            (
                "get_bit(v_unique_states,",
                "get_bit(COALESCE(v_unique_states, B'11111111'),",
            ),
        ],
    );
    assert_caught(
        &s,
        "sql::uniqueness::",
        &["sql::uniqueness::null_states_stored_not_enforced"],
    );
}

fn mutant_empty_key_not_enforced() {
    let s = Scratch::install(&dsn(), "m_empty");
    patch_insert_job(
        &s,
        &[(
            "IF p_unique_key IS NOT NULL AND",
            "IF p_unique_key IS NOT NULL AND p_unique_key <> ''::bytea AND",
        )],
    );
    assert_caught(
        &s,
        "sql::uniqueness::",
        &["sql::uniqueness::empty_key_enforced"],
    );
}

fn mutant_queue_is_part_of_the_claim() {
    let s = Scratch::install(&dsn(), "m_qclaim");
    patch_insert_job(
        &s,
        &[(
            "VALUES (p_unique_key, v_result.job_id)",
            "VALUES (p_unique_key || convert_to(v_result.queue, 'UTF8'), v_result.job_id)",
        )],
    );
    assert_caught(
        &s,
        "sql::uniqueness::",
        &["sql::uniqueness::same_key_other_queue_collides"],
    );
}

// ---- released validation (23514) ----

fn mutant_priority_5_accepted() {
    let s = Scratch::install(&dsn(), "m_prio");
    patch_insert_job(
        &s,
        &[
            (
                "p_priority NOT BETWEEN 1 AND 4",
                "p_priority NOT BETWEEN 1 AND 5",
            ),
            ("p_priority > 4 THEN", "p_priority > 5 THEN"),
        ],
    );
    assert_caught(&s, "sql::rejection::", &["sql::rejection::priority_5"]);
}

fn mutant_kind_length_unchecked() {
    let s = Scratch::install(&dsn(), "m_kind");
    patch_insert_job(&s, &[("IF length(p_kind) > 200 THEN", "IF false THEN")]);
    assert_caught(
        &s,
        "sql::rejection::",
        &[
            "sql::rejection::kind_too_long",
            "sql::rejection::kind_too_long_counts_characters",
            "sql::rejection::released_order_kind_before_queue",
        ],
    );
}

fn mutant_validation_order_swapped() {
    let s = Scratch::install(&dsn(), "m_order");
    let priority = "        IF p_priority < 1 OR p_priority > 4 THEN\n            \
                    RAISE EXCEPTION 'priority must be between 1 and 4' USING ERRCODE = '23514';\n        \
                    END IF;\n";
    let attempts = "        IF p_max_attempts < 1 OR p_max_attempts > 1000 THEN\n            \
                    RAISE EXCEPTION 'max_attempts must be between 1 and 1000' USING ERRCODE = '23514';\n        \
                    END IF;\n";
    patch_insert_job(
        &s,
        &[(
            &format!("{priority}{attempts}"),
            &format!("{attempts}{priority}"),
        )],
    );
    assert_caught(
        &s,
        "sql::rejection::",
        &["sql::rejection::released_order_priority_before_max_attempts"],
    );
}

// ---- contract errors ZA003 / ZA004 / ZA005 ----

fn mutant_key_length_unchecked() {
    let s = Scratch::install(&dsn(), "m_za003");
    patch_insert_job(
        &s,
        &[(
            "IF octet_length(p_ordering_key) > 4096 THEN",
            "IF false THEN",
        )],
    );
    assert_caught(
        &s,
        "sql::rejection::",
        &["sql::rejection::ordering_key_too_long"],
    );
}

fn mutant_width_helper_accepts_0_and_65() {
    let s = Scratch::install(&dsn(), "m_za004");
    patch(
        &s,
        "concurrency_shard(bytea, integer)",
        "IF p_width < 1 OR p_width > 64 THEN",
        "IF p_width < 0 OR p_width > 65 THEN",
    );
    assert_caught(&s, "sql::rejection::", &["sql::rejection::invalid_width"]);
}

fn mutant_float_shard_expectation_accepted() {
    let s = Scratch::install(&dsn(), "m_za005");
    patch_insert_job(
        &s,
        &[(
            "jsonb_typeof(v_opt) = 'number' AND (v_opt #>> '{}') ~ '^-?[0-9]+$'",
            "jsonb_typeof(v_opt) = 'number'",
        )],
    );
    assert_caught(
        &s,
        "sql::rejection::",
        &["sql::rejection::invalid_opts_value_shard_float"],
    );
}

// ---- catalog / job_routing ----

fn mutant_job_routing_unhardened() {
    let s = Scratch::install(&dsn(), "m_jrpub");
    s.sql(
        "GRANT EXECUTE ON FUNCTION @S@.job_routing(bigint) TO PUBLIC; \
         ALTER FUNCTION @S@.job_routing(bigint) SECURITY INVOKER; \
         ALTER FUNCTION @S@.job_routing(bigint) RESET search_path",
    );
    assert_caught(
        &s,
        "sql::catalog::",
        &[
            "sql::catalog::job_routing_no_public_execute",
            "sql::catalog::job_routing_security_definer",
            "sql::catalog::job_routing_search_path",
        ],
    );
}

fn mutant_job_routing_reads_wrong_shard() {
    let s = Scratch::install(&dsn(), "m_jrshard");
    patch(
        &s,
        "job_routing(bigint)",
        "j.enqueue_shard, j.route_source",
        "((j.enqueue_shard + 1) % 64)::smallint, j.route_source",
    );
    assert_caught(
        &s,
        "sql::function::",
        &[
            "sql::function::cd-",
            "sql::function::cs-",
            "sql::function::os-",
            "sql::function::rp-",
        ],
    );
}

// ---- function: unique_key and result vs stored ----

fn mutant_unique_key_stored_altered() {
    let s = Scratch::install(&dsn(), "m_ukstore");
    patch_insert_job(
        &s,
        &[(
            "COALESCE(p_tags, '{}'::text[]), p_unique_key,",
            "COALESCE(p_tags, '{}'::text[]), substring(p_unique_key from 2),",
        )],
    );
    assert_caught(&s, "sql::function::uk-", &["sql::function::uk-"]);
}

fn mutant_result_shard_differs_from_stored() {
    let s = Scratch::install(&dsn(), "m_result");
    patch_insert_job(
        &s,
        &[(
            "RETURNING id, queue, state, priority, enqueue_shard, route_source",
            "RETURNING id, queue, state, priority, ((enqueue_shard + 1) % 64)::smallint, \
             route_source",
        )],
    );
    assert_caught(
        &s,
        "sql::function::",
        &[
            "sql::function::cd-",
            "sql::function::cs-",
            "sql::function::os-",
            "sql::function::rp-",
        ],
    );
}

// ---- least privilege ----

/// Run the privilege suite and expect `no_excess_privileges` to fail naming `needle`.
fn assert_excess(s: &Scratch, needle: &str) {
    let (out, report) = run_with_report(s, &["sql::privilege::no_excess_privileges"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let case = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sql::privilege::no_excess_privileges")
        .unwrap()
        .clone();
    assert_eq!(case["status"], "failed", "{case}");
    assert!(case["actual"].to_string().contains(needle), "{case}");
}

fn mutant_producer_can_insert_into_queue_meta() {
    let s = Scratch::install(&dsn(), "m_privtab");
    s.sql("GRANT INSERT ON @S@.queue_meta TO awa_producer; GRANT USAGE ON SEQUENCE @S@.contract_jobs_id_seq TO awa_producer");
    assert_excess(&s, "INSERT on table queue_meta");
    assert_excess(&s, "USAGE on sequence contract_jobs_id_seq");
    s.sql("REVOKE ALL ON @S@.queue_meta FROM awa_producer; REVOKE ALL ON SEQUENCE @S@.contract_jobs_id_seq FROM awa_producer");
}

fn mutant_producer_can_create_in_schema() {
    let s = Scratch::install(&dsn(), "m_privcreate");
    s.sql("GRANT CREATE ON SCHEMA @S@ TO awa_producer");
    assert_excess(&s, "CREATE on schema");
    s.sql("REVOKE CREATE ON SCHEMA @S@ FROM awa_producer");
}

fn mutant_extra_security_definer_function() {
    let s = Scratch::install(&dsn(), "m_privfn");
    // A definer function left executable by PUBLIC (the default for a new function).
    s.sql(
        "CREATE FUNCTION @S@.purge_jobs() RETURNS bigint LANGUAGE sql SECURITY DEFINER \
         AS 'SELECT count(*) FROM @S@.contract_jobs'",
    );
    assert_excess(&s, "purge_jobs()");
}

// ---- lifecycle (contract §9) ----

fn mutant_job_routing_rereads_the_width() {
    let s = Scratch::install(&dsn(), "m_lcwidth");
    // The stored shard re-resolved against today's width instead of kept as stored.
    patch(
        &s,
        "job_routing(bigint)",
        "j.enqueue_shard, j.route_source",
        "(j.enqueue_shard % COALESCE((SELECT m.enqueue_shards FROM @S@.queue_meta AS m \
         WHERE m.queue = j.queue), 1))::smallint, j.route_source",
    );
    assert_caught(&s, "sql::lifecycle::", &["sql::lifecycle::lower_width"]);
}

fn mutant_move_shard_falls_back_to_the_rotor() {
    let s = Scratch::install(&dsn(), "m_lcrotor");
    patch(
        &s,
        "move_shard(integer, integer)",
        "RETURN p_retained % p_dest_width;",
        "RETURN pg_backend_pid() % p_dest_width;",
    );
    assert_caught(
        &s,
        "sql::lifecycle::",
        &["sql::lifecycle::priority_move_keeps_shard"],
    );
}

fn mutant_move_shard_clamps_instead_of_modulo() {
    let s = Scratch::install(&dsn(), "m_lcclamp");
    patch(
        &s,
        "move_shard(integer, integer)",
        "RETURN p_retained % p_dest_width;",
        "RETURN LEAST(p_retained, p_dest_width - 1);",
    );
    assert_caught(
        &s,
        "sql::lifecycle::",
        &["sql::lifecycle::cross_queue_move_retained_mod_dest"],
    );
}

// ---- contract v1.1 ----

fn mutant_unique_states_length_unchecked() {
    let s = Scratch::install(&dsn(), "m_v11states");
    // Without the check, a 4-bit value still fails at the bit(8) column, but with
    // PostgreSQL's bare 22026: no contract DETAIL, no HINT, and only after other checks.
    patch_insert_job(
        &s,
        &[
            ("OR length(v_unique_states) <> 8 THEN", "THEN"),
            ("IF length(v_unique_states) <> 8 THEN", "IF false THEN"),
        ],
    );
    assert_caught(
        &s,
        "sql::v1_1::unique_states_",
        &[
            "sql::v1_1::unique_states_4_bits_refused",
            "sql::v1_1::unique_states_9_bits_refused",
            "sql::v1_1::unique_states_empty_refused",
            "sql::v1_1::unique_states_checked_first",
        ],
    );
}

fn mutant_rotor_expectation_compared_with_the_pick() {
    let s = Scratch::install(&dsn(), "m_v11rotor");
    patch_insert_job(
        &s,
        &[(
            "IF v_exp_shard IS NOT NULL AND v_source = 'rotor' THEN",
            "IF false THEN",
        )],
    );
    assert_caught(
        &s,
        "sql::v1_1::rotor_",
        &["sql::v1_1::rotor_expected_shard_refused"],
    );
}

fn mutant_initial_state_from_the_clock() {
    let s = Scratch::install(&dsn(), "m_v11state");
    // Contract v1.0's rule: scheduled only when run_at is in the future.
    patch_insert_job(
        &s,
        &[(
            "CASE WHEN p_run_at IS NOT NULL THEN 'scheduled'",
            "CASE WHEN p_run_at > v_now THEN 'scheduled'",
        )],
    );
    assert_caught(
        &s,
        "sql::v1_1::initial_state",
        &["sql::v1_1::initial_state_run_at_given_is_scheduled"],
    );
}

fn mutant_job_routing_unscoped() {
    let s = Scratch::install(&dsn(), "m_v11scope");
    patch(
        &s,
        "job_routing(bigint)",
        "AND (j.enqueued_by = session_user OR pg_has_role(session_user, current_user, 'MEMBER'))",
        "",
    );
    assert_caught(
        &s,
        "sql::v1_1::job_routing",
        &["sql::v1_1::job_routing_scoped_to_session_user"],
    );
}

fn mutant_queue_enqueue_shards_null_for_a_missing_row() {
    let s = Scratch::install(&dsn(), "m_v11width");
    patch(
        &s,
        "queue_enqueue_shards(text)",
        "1::smallint)",
        "NULL::smallint)",
    );
    assert_caught(
        &s,
        "sql::v1_1::queue_enqueue_shards",
        &["sql::v1_1::queue_enqueue_shards_widths"],
    );
}

fn mutant_producer_cannot_read_widths() {
    let s = Scratch::install(&dsn(), "m_v11grant");
    s.sql("REVOKE EXECUTE ON FUNCTION @S@.queue_enqueue_shards(text) FROM awa_producer");
    assert_caught(
        &s,
        "sql::v1_1::queue_enqueue_shards",
        &["sql::v1_1::queue_enqueue_shards_producer_execute"],
    );
    s.sql("GRANT EXECUTE ON FUNCTION @S@.queue_enqueue_shards(text) TO awa_producer");
}

fn main() {
    main_with(vec![
        (
            "mutant_digest_without_nul_in_tag",
            Gate::Dsn,
            mutant_digest_without_nul_in_tag,
        ),
        (
            "mutant_ordering_hash_is_fnv1a",
            Gate::Dsn,
            mutant_ordering_hash_is_fnv1a,
        ),
        (
            "mutant_ignores_the_ordering_key_fallback",
            Gate::Dsn,
            mutant_ignores_the_ordering_key_fallback,
        ),
        (
            "mutant_ignores_unknown_opts_keys",
            Gate::Dsn,
            mutant_ignores_unknown_opts_keys,
        ),
        (
            "mutant_concurrency_shard_reads_wrong_bytes",
            Gate::Dsn,
            mutant_concurrency_shard_reads_wrong_bytes,
        ),
        (
            "mutant_concurrency_key_takes_precedence",
            Gate::Dsn,
            mutant_concurrency_key_takes_precedence,
        ),
        (
            "mutant_claims_regardless_of_state_mask",
            Gate::Dsn,
            mutant_claims_regardless_of_state_mask,
        ),
        (
            "mutant_security_invoker_and_public_execute",
            Gate::Dsn,
            mutant_security_invoker_and_public_execute,
        ),
        (
            "mutant_rotor_returns_the_width",
            Gate::Dsn,
            mutant_rotor_returns_the_width,
        ),
        (
            "mutant_race_without_unique_index",
            Gate::Dsn,
            mutant_race_without_unique_index,
        ),
        (
            "mutant_null_states_key_enforced",
            Gate::Dsn,
            mutant_null_states_key_enforced,
        ),
        (
            "mutant_empty_key_not_enforced",
            Gate::Dsn,
            mutant_empty_key_not_enforced,
        ),
        (
            "mutant_queue_is_part_of_the_claim",
            Gate::Dsn,
            mutant_queue_is_part_of_the_claim,
        ),
        (
            "mutant_priority_5_accepted",
            Gate::Dsn,
            mutant_priority_5_accepted,
        ),
        (
            "mutant_kind_length_unchecked",
            Gate::Dsn,
            mutant_kind_length_unchecked,
        ),
        (
            "mutant_validation_order_swapped",
            Gate::Dsn,
            mutant_validation_order_swapped,
        ),
        (
            "mutant_key_length_unchecked",
            Gate::Dsn,
            mutant_key_length_unchecked,
        ),
        (
            "mutant_width_helper_accepts_0_and_65",
            Gate::Dsn,
            mutant_width_helper_accepts_0_and_65,
        ),
        (
            "mutant_float_shard_expectation_accepted",
            Gate::Dsn,
            mutant_float_shard_expectation_accepted,
        ),
        (
            "mutant_job_routing_unhardened",
            Gate::Dsn,
            mutant_job_routing_unhardened,
        ),
        (
            "mutant_job_routing_reads_wrong_shard",
            Gate::Dsn,
            mutant_job_routing_reads_wrong_shard,
        ),
        (
            "mutant_unique_key_stored_altered",
            Gate::Dsn,
            mutant_unique_key_stored_altered,
        ),
        (
            "mutant_result_shard_differs_from_stored",
            Gate::Dsn,
            mutant_result_shard_differs_from_stored,
        ),
        (
            "mutant_producer_can_insert_into_queue_meta",
            Gate::Dsn,
            mutant_producer_can_insert_into_queue_meta,
        ),
        (
            "mutant_producer_can_create_in_schema",
            Gate::Dsn,
            mutant_producer_can_create_in_schema,
        ),
        (
            "mutant_extra_security_definer_function",
            Gate::Dsn,
            mutant_extra_security_definer_function,
        ),
        // lifecycle and contract v1.1
        (
            "mutant_job_routing_rereads_the_width",
            Gate::Dsn,
            mutant_job_routing_rereads_the_width,
        ),
        (
            "mutant_move_shard_falls_back_to_the_rotor",
            Gate::Dsn,
            mutant_move_shard_falls_back_to_the_rotor,
        ),
        (
            "mutant_move_shard_clamps_instead_of_modulo",
            Gate::Dsn,
            mutant_move_shard_clamps_instead_of_modulo,
        ),
        (
            "mutant_unique_states_length_unchecked",
            Gate::Dsn,
            mutant_unique_states_length_unchecked,
        ),
        (
            "mutant_rotor_expectation_compared_with_the_pick",
            Gate::Dsn,
            mutant_rotor_expectation_compared_with_the_pick,
        ),
        (
            "mutant_initial_state_from_the_clock",
            Gate::Dsn,
            mutant_initial_state_from_the_clock,
        ),
        (
            "mutant_job_routing_unscoped",
            Gate::Dsn,
            mutant_job_routing_unscoped,
        ),
        (
            "mutant_queue_enqueue_shards_null_for_a_missing_row",
            Gate::Dsn,
            mutant_queue_enqueue_shards_null_for_a_missing_row,
        ),
        (
            "mutant_producer_cannot_read_widths",
            Gate::Dsn,
            mutant_producer_cannot_read_widths,
        ),
    ]);
}
