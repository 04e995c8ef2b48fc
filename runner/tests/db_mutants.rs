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

use db_support::{cases_with, dsn, run_with_report, scalar, text, Scratch};

const INSERT_JOB: &str = "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, \
                          text[], bytea, bit, bytea, bytea, jsonb)";

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

#[test]
fn mutant_digest_without_nul_in_tag() {
    let Some(dsn) = dsn() else { return };
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

#[test]
fn mutant_ordering_hash_is_fnv1a() {
    let Some(dsn) = dsn() else { return };
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

#[test]
fn mutant_ignores_the_ordering_key_fallback() {
    let Some(dsn) = dsn() else { return };
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

#[test]
fn mutant_ignores_unknown_opts_keys() {
    let Some(dsn) = dsn() else { return };
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

#[test]
fn mutant_concurrency_shard_reads_wrong_bytes() {
    let Some(dsn) = dsn() else { return };
    let s = Scratch::install(&dsn, "m_shard");
    patch(
        &s,
        INSERT_JOB,
        "encode(substr(v_digest, 1, 8), 'hex')",
        "encode(substr(v_digest, 25, 8), 'hex')",
    );
    assert_caught(&s, "sql::function::cs-", &["sql::function::cs-"]);
}

#[test]
fn mutant_concurrency_key_takes_precedence() {
    let Some(dsn) = dsn() else { return };
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

#[test]
fn mutant_claims_regardless_of_state_mask() {
    let Some(dsn) = dsn() else { return };
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

#[test]
fn mutant_security_invoker_and_public_execute() {
    let Some(dsn) = dsn() else { return };
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
            "sql::privilege::producer_role_only",
        ],
    );
}
