//! Mutation tests: the reference schema with one deliberate contract bug (a small textual
//! change) must make the SQL suites fail, and exactly the suites this table says.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]
//!
//! Every mutant runs the whole `sql::` set and must end with exit 1, no harness error, failed
//! cases in exactly the suites of `killed_by`, and a failed case for each `must_fail`
//! prefix. The table is also the source of docs/kill-matrix.md: `kill_matrix_doc_is_current`
//! fails when the document is stale (`AWA_BLESS=1` rewrites its generated part).

mod db_support;

use std::collections::BTreeSet;

use db_support::{cases_with, dsn, main_with_boxed, run_with_report, scalar, text, Gate, Scratch};

const INSERT_JOB: &str = "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, \
                          text[], bytea, bit varying, bytea, bytea, jsonb)";

/// The SQL suites, in the matrix's column order.
const SUITES: [&str; 12] = [
    "catalog",
    "function",
    "rejection",
    "uniqueness",
    "rotor",
    "width",
    "race",
    "privilege",
    "lifecycle",
    "v1_1",
    "bulk",
    "payload",
];

/// The staged bulk path's publish function (docs/contract.md §14).
const PUBLISH: &str = "publish_batch(uuid)";

/// One wrong implementation.
struct Mutant {
    /// Trial name (`mutant_<name>`) and matrix row.
    name: &'static str,
    /// The class of bug (issue 7's list), a matrix column.
    class: &'static str,
    /// What the mutant changes, in a few words.
    what: &'static str,
    /// Apply the change to a freshly installed reference schema.
    apply: fn(&Scratch),
    /// The suites with at least one failed case, exactly.
    killed_by: &'static [&'static str],
    /// Case-name prefixes that must be among the failures.
    must_fail: &'static [&'static str],
}

// ---- applying changes ----

/// Replace `from` with `to` in a function's definition and re-create it.
fn patch(s: &Scratch, function: &str, edits: &[(&str, &str)]) {
    let def = scalar(
        &s.dsn,
        &format!(
            "SELECT pg_get_functiondef('\"{}\".{function}'::regprocedure)",
            s.schema
        ),
    );
    let mut out = def;
    for (from, to) in edits {
        assert!(
            out.contains(from),
            "mutant anchor {from:?} not found in {function}: update the test"
        );
        out = out.replace(from, to);
    }
    s.sql(&out);
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

/// Patch `insert_job`, dropping the job table's CHECKs first.
fn patch_insert_job(s: &Scratch, edits: &[(&str, &str)]) {
    drop_job_checks(s);
    patch(s, INSERT_JOB, edits);
}

fn set_capabilities(s: &Scratch, list: &str) {
    s.sql(&format!(
        "CREATE OR REPLACE FUNCTION @S@.contract_capabilities() RETURNS text[] LANGUAGE sql \
         AS $$ SELECT ARRAY[{list}]::text[] $$"
    ));
}

/// A role of this scratch schema only (roles are cluster-wide: never alter a shared one).
fn scratch_role(s: &Scratch) -> String {
    format!("{}_o", s.schema)
}

/// Make `role` (created by the caller) own the SECURITY DEFINER functions, with exactly the
/// table privileges the reference owner has, so only the owner's attributes differ.
fn own_by(s: &Scratch, role: &str) {
    s.sql(&format!(
        "GRANT USAGE ON SCHEMA @S@ TO \"{role}\"; \
         GRANT SELECT ON @S@.queue_meta TO \"{role}\"; \
         GRANT SELECT, INSERT ON @S@.contract_jobs TO \"{role}\"; \
         GRANT USAGE ON SEQUENCE @S@.contract_jobs_id_seq TO \"{role}\"; \
         GRANT INSERT ON @S@.job_unique_claims TO \"{role}\"; \
         ALTER FUNCTION @S@.{INSERT_JOB} OWNER TO \"{role}\"; \
         ALTER FUNCTION @S@.job_routing(bigint) OWNER TO \"{role}\""
    ));
}

/// Drop the scratch schema's own roles (after the run).
fn drop_scratch_roles(s: &Scratch) {
    let role = scratch_role(s);
    s.sql(&format!(
        "DO $$ BEGIN IF to_regrole('\"{role}\"') IS NOT NULL THEN \
           EXECUTE 'DROP OWNED BY \"{role}\"'; EXECUTE 'DROP ROLE \"{role}\"'; END IF; END $$"
    ));
}

// ---- the table ----

const ROUTING: &str = "routing";
const OPTS: &str = "opts and expectations";
const DETAIL: &str = "error DETAIL members";
const BOUNDARY: &str = "validation boundaries";
const STORED: &str = "stored state, priority, routing";
const UNIQUE: &str = "uniqueness";
const RACE: &str = "race (check-then-insert)";
const CAPS: &str = "capability gating";
const HELPERS: &str = "advertised helpers";
const WIDTH: &str = "widths (65, no queue_meta row)";
const HARDENING: &str = "hardening (search_path, owner, grants)";
const LIFECYCLE: &str = "lifecycle (width lowering, moves)";
const REVISION: &str = "revision 1.1 (scope, varbit, rotor expectations, widths read)";
const BULK: &str = "staged bulk path (publish_batch)";
const PAYLOAD: &str = "stored payload (revision 1.2)";

/// Every mutant.
#[expect(clippy::too_many_lines, reason = "one table; each row is short")]
fn mutants() -> Vec<Mutant> {
    vec![
        // ---- capability gating ----
        Mutant {
            name: "capabilities_empty",
            class: CAPS,
            what: "contract_capabilities() lists only contract_1_1 (an empty list stops in preflight, exit 5)",
            apply: |s| set_capabilities(s, "'contract_1_1'"),
            killed_by: &["catalog"],
            must_fail: &["sql::catalog::core_capabilities"],
        },
        Mutant {
            name: "capabilities_without_job_routing",
            class: CAPS,
            what: "job_routing left out of contract_capabilities()",
            apply: |s| {
                set_capabilities(
                    s,
                    "'concurrency_digest', 'concurrency_shard', 'contract_1_1', 'expectations', \
                     'move_shard', 'ordering_shard', 'routing_precedence', 'unique_key', \
                     'unique_states'",
                );
            },
            killed_by: &["catalog"],
            must_fail: &["sql::catalog::core_capabilities"],
        },
        Mutant {
            name: "capabilities_empty_and_wrong_digest_tag",
            class: CAPS,
            what: "contract_1_1-only capabilities hiding a digest tag without its NUL byte",
            apply: |s| {
                set_capabilities(s, "'contract_1_1'");
                patch(
                    s,
                    "concurrency_digest(bytea)",
                    &[(
                        "6177613a636f6e63757272656e63795f6b65793a763100",
                        "6177613a636f6e63757272656e63795f6b65793a7631",
                    )],
                );
            },
            killed_by: &["catalog", "function", "rejection", "width", "privilege", "v1_1"],
            must_fail: &["sql::function::cd-", "sql::function::rp-"],
        },
        // ---- routing ----
        Mutant {
            name: "digest_without_nul_in_tag",
            class: ROUTING,
            what: "digest tag without its trailing 0x00",
            apply: |s| {
                patch(
                    s,
                    "concurrency_digest(bytea)",
                    &[(
                        "6177613a636f6e63757272656e63795f6b65793a763100",
                        "6177613a636f6e63757272656e63795f6b65793a7631",
                    )],
                );
            },
            killed_by: &["function", "rejection", "width", "privilege", "v1_1", "bulk"],
            must_fail: &[
                "sql::function::cd-",
                "sql::function::cs-",
                "sql::function::rp-",
            ],
        },
        Mutant {
            name: "ordering_hash_is_fnv1a",
            class: ROUTING,
            what: "textbook FNV-1a instead of multiply-then-add",
            apply: |s| {
                s.sql(
                    "CREATE OR REPLACE FUNCTION @S@.ordering_key_hash64_i64(p_key bytea) \
                     RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT AS $$ \
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
            },
            killed_by: &["function", "width", "privilege", "lifecycle", "bulk"],
            must_fail: &["sql::function::os-", "sql::width::shard_helpers"],
        },
        Mutant {
            name: "ignores_the_ordering_key_fallback",
            class: ROUTING,
            what: "no digest of the ordering key when there is no concurrency key",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "COALESCE(p_concurrency_key, p_ordering_key)",
                        "p_concurrency_key",
                    )],
                );
            },
            killed_by: &["function", "rejection", "width", "privilege"],
            must_fail: &[
                "sql::function::os-",
                "sql::function::rp-",
                "sql::rejection::expected_digest_of_ordering_key",
                "sql::width::keyed_job_without_queue_meta_row",
            ],
        },
        Mutant {
            name: "concurrency_shard_reads_wrong_bytes",
            class: ROUTING,
            what: "shard from digest bytes 24..32 instead of 0..8",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "encode(substr(v_digest, 1, 8), 'hex')",
                        "encode(substr(v_digest, 25, 8), 'hex')",
                    )],
                );
            },
            killed_by: &["function", "rejection", "privilege"],
            must_fail: &["sql::function::cs-", "sql::function::cd-"],
        },
        Mutant {
            name: "concurrency_key_takes_precedence",
            class: ROUTING,
            what: "concurrency key overrides an explicit ordering key",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "IF p_ordering_key IS NOT NULL THEN",
                        "IF p_ordering_key IS NOT NULL AND p_concurrency_key IS NULL THEN",
                    )],
                );
            },
            killed_by: &["function", "rejection", "width", "privilege"],
            must_fail: &[
                "sql::function::rp-",
                "sql::rejection::expected_route_source_mismatch",
            ],
        },
        Mutant {
            name: "rotor_returns_the_width",
            class: ROUTING,
            what: "rotor shard = width (out of range)",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "WHEN v_h IS NULL THEN pg_backend_pid() % m.enqueue_shards",
                        "WHEN v_h IS NULL THEN m.enqueue_shards",
                    )],
                );
            },
            killed_by: &["function", "rotor", "privilege", "lifecycle"],
            must_fail: &["sql::rotor::unkeyed_width_"],
        },
        // ---- widths ----
        Mutant {
            name: "queue_meta_accepts_width_65",
            class: WIDTH,
            what: "queue_meta CHECK allows 1..=65",
            apply: |s| {
                s.sql(
                    "ALTER TABLE @S@.queue_meta DROP CONSTRAINT queue_meta_enqueue_shards_range; \
                     ALTER TABLE @S@.queue_meta ADD CONSTRAINT queue_meta_enqueue_shards_range \
                       CHECK (enqueue_shards BETWEEN 1 AND 65)",
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::queue_meta_refuses_0_and_65"],
        },
        Mutant {
            name: "missing_queue_meta_row_is_width_8",
            class: WIDTH,
            what: "a queue without a queue_meta row routes at width 8",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        ("            v_width := 1;", "            v_width := 8;"),
                        (
                            "WHERE m.queue = COALESCE(p_queue, 'default')), 0)",
                            "WHERE m.queue = COALESCE(p_queue, 'default')), \
                             CASE WHEN v_h IS NULL THEN 0 ELSE \
                             (((((v_h >> 32) & 4294967295) % 8) * (4294967296 % 8)) \
                              + ((v_h & 4294967295) % 8)) % 8 END)",
                        ),
                    ],
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::keyed_job_without_queue_meta_row_routes_at_width_1"],
        },
        Mutant {
            name: "width_lookup_case_insensitive",
            class: WIDTH,
            what: "insert_job looks the queue's width up case-insensitively",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "m.queue = COALESCE(p_queue, 'default')",
                        "lower(m.queue) = lower(COALESCE(p_queue, 'default'))",
                    )],
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::queue_names_are_byte_exact"],
        },
        Mutant {
            name: "width_lookup_normalised",
            class: WIDTH,
            what: "insert_job looks the queue's width up by its NFC form",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "m.queue = COALESCE(p_queue, 'default')",
                        "normalize(m.queue, NFC) = normalize(COALESCE(p_queue, 'default'), NFC)",
                    )],
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::queue_names_are_byte_exact"],
        },
        // ---- advertised helpers ----
        Mutant {
            name: "shard_helper_accepts_0_and_65",
            class: HELPERS,
            what: "concurrency_shard accepts widths 0..=65",
            apply: |s| {
                patch(
                    s,
                    "concurrency_shard(bytea, integer)",
                    &[(
                        "IF p_width < 1 OR p_width > 64 THEN",
                        "IF p_width < 0 OR p_width > 65 THEN",
                    )],
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::shard_helpers_at_widths_1_and_64"],
        },
        Mutant {
            name: "ordering_shard_signed_modulo",
            class: HELPERS,
            what: "ordering_shard takes the signed hash mod width",
            apply: |s| {
                patch(
                    s,
                    "ordering_shard(bytea, integer)",
                    &[(
                        "RETURN (((((v_h >> 32) & 4294967295) % p_width) * (4294967296 % p_width))\n            + ((v_h & 4294967295) % p_width)) % p_width;",
                        "RETURN abs(v_h % p_width);",
                    )],
                );
            },
            killed_by: &["width", "bulk"],
            must_fail: &["sql::width::shard_helpers_at_widths_1_and_64"],
        },
        Mutant {
            name: "move_shard_falls_back_to_zero",
            class: HELPERS,
            what: "move_shard gives 0 instead of retained mod width",
            apply: |s| {
                patch(
                    s,
                    "move_shard(integer, integer)",
                    &[(
                        "RETURN p_retained % p_dest_width;",
                        "RETURN CASE WHEN p_retained < p_dest_width THEN p_retained ELSE 0 END;",
                    )],
                );
            },
            killed_by: &["width", "lifecycle"],
            must_fail: &["sql::width::move_shard_helper"],
        },
        Mutant {
            name: "move_shard_accepts_width_65",
            class: HELPERS,
            what: "move_shard accepts destination width 65",
            apply: |s| {
                patch(
                    s,
                    "move_shard(integer, integer)",
                    &[("p_dest_width > 64", "p_dest_width > 65")],
                );
            },
            killed_by: &["width", "lifecycle"],
            must_fail: &["sql::width::move_shard_helper"],
        },
        Mutant {
            name: "move_shard_missing_but_advertised",
            class: HELPERS,
            what: "move_shard advertised, function dropped",
            apply: |s| {
                s.sql("DROP FUNCTION @S@.move_shard(integer, integer)");
            },
            killed_by: &["width", "lifecycle", "v1_1"],
            must_fail: &["sql::width::move_shard_helper"],
        },
        Mutant {
            name: "unique_states_bits_msb_first",
            class: HELPERS,
            what: "unique_states_bits writes the mask most-significant bit first",
            apply: |s| {
                patch(
                    s,
                    "unique_states_bits(integer)",
                    &[(
                        "RETURN (((p_mask & 1) << 7)",
                        "RETURN p_mask::bit(8); RETURN (((p_mask & 1) << 7)",
                    )],
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::unique_states_bits_helper"],
        },
        Mutant {
            name: "unique_states_bits_accepts_256",
            class: HELPERS,
            what: "unique_states_bits accepts mask 256",
            apply: |s| {
                patch(
                    s,
                    "unique_states_bits(integer)",
                    &[("p_mask > 255", "p_mask > 256")],
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::unique_states_bits_helper"],
        },
        // ---- opts and expectations ----
        Mutant {
            name: "ignores_unknown_opts_keys",
            class: OPTS,
            what: "unknown opts keys ignored",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[("IF v_bad_key IS NOT NULL THEN", "IF false THEN")],
                );
            },
            killed_by: &["rejection", "v1_1"],
            must_fail: &[
                "sql::rejection::unknown_opts_key",
                "sql::rejection::unknown_opts_key_beside_known",
            ],
        },
        Mutant {
            name: "opts_keys_case_insensitive",
            class: OPTS,
            what: "opts keys matched in any letter case",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[("WHERE k NOT IN (", "WHERE lower(k) NOT IN (")],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::unknown_opts_key_letter_case"],
        },
        Mutant {
            name: "shard_not_compared_when_digest_given",
            class: OPTS,
            what: "correct digest excuses a wrong shard",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "IF v_exp_shard IS NOT NULL AND",
                        "IF v_exp_shard IS NOT NULL AND v_exp_digest_set IS NOT TRUE AND",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::expected_correct_digest_and_source_wrong_shard"],
        },
        Mutant {
            name: "float_shard_expectation_accepted",
            class: OPTS,
            what: "any JSON number accepted as expected shard",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "jsonb_typeof(v_opt) = 'number' AND (v_opt #>> '{}') ~ '^-?[0-9]+$'",
                        "jsonb_typeof(v_opt) = 'number'",
                    )],
                );
            },
            killed_by: &["rejection", "v1_1"],
            must_fail: &[
                "sql::rejection::invalid_opts_value_shard_float",
                "sql::rejection::invalid_opts_value_shard_integral_float",
            ],
        },
        Mutant {
            name: "integral_float_shard_accepted",
            class: OPTS,
            what: "3.0 accepted as an integer shard",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[("~ '^-?[0-9]+$'", "~ '^-?[0-9]+(\\.0+)?$'")],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::invalid_opts_value_shard_integral_float"],
        },
        Mutant {
            name: "null_shard_expectation_skipped",
            class: OPTS,
            what: "expected_enqueue_shard null silently ignored",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "v_opt := v_opts -> 'expected_enqueue_shard';\n            IF v_opt IS NOT NULL THEN",
                        "v_opt := v_opts -> 'expected_enqueue_shard';\n            IF v_opt IS NOT NULL AND jsonb_typeof(v_opt) <> 'null' THEN",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::invalid_opts_value_shard_null"],
        },
        Mutant {
            name: "digest_pattern_unanchored",
            class: OPTS,
            what: "expected digest pattern without its end anchor",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[("~ '^[0-9a-f]{64}$'", "~ '^[0-9a-f]{64}'")],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::invalid_opts_value_digest_66_hex"],
        },
        Mutant {
            name: "expected_digest_compared_on_a_prefix",
            class: OPTS,
            what: "expected_concurrency_digest compared on its first 16 bytes only",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "v_exp_digest_set AND v_exp_digest IS DISTINCT FROM v_digest",
                        "v_exp_digest_set AND substring(v_exp_digest from 1 for 16) \
                         IS DISTINCT FROM substring(v_digest from 1 for 16)",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::expected_digest_differs_in_the_last_byte"],
        },
        Mutant {
            name: "route_source_case_insensitive",
            class: OPTS,
            what: "expected_route_source accepted in any letter case",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "AND (v_opt #>> '{}') IN ('ordering_key', 'concurrency_key', 'rotor')",
                        "AND lower(v_opt #>> '{}') IN ('ordering_key', 'concurrency_key', 'rotor')",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::invalid_opts_value_route_source_letter_case"],
        },
        // ---- error DETAIL members ----
        Mutant {
            name: "detail_key_too_long_without_field",
            class: DETAIL,
            what: "key_too_long DETAIL lacks field",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[
                        (
                            "'code', 'key_too_long', 'field', 'ordering_key',",
                            "'code', 'key_too_long',",
                        ),
                        (
                            "'code', 'key_too_long', 'field', 'concurrency_key',",
                            "'code', 'key_too_long',",
                        ),
                    ],
                );
            },
            killed_by: &["rejection", "v1_1"],
            must_fail: &["sql::rejection::ordering_key_too_long"],
        },
        Mutant {
            name: "detail_shard_mismatch_actual_is_expected",
            class: DETAIL,
            what: "shard mismatch DETAIL actual = the expectation",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "'expected', v_exp_shard, 'actual', v_shard)",
                        "'expected', v_exp_shard, 'actual', v_exp_shard)",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::expected_shard_mismatch"],
        },
        Mutant {
            name: "detail_unknown_key_without_allowed",
            class: DETAIL,
            what: "unknown_opts_key DETAIL names the list allowed_keys",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "'allowed', jsonb_build_array(",
                        "'allowed_keys', jsonb_build_array(",
                    )],
                );
            },
            killed_by: &["rejection", "v1_1"],
            must_fail: &["sql::rejection::unknown_opts_key"],
        },
        Mutant {
            name: "detail_unknown_key_lowercased",
            class: DETAIL,
            what: "unknown_opts_key DETAIL key lowercased",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "'code', 'unknown_opts_key', 'key', v_bad_key,",
                        "'code', 'unknown_opts_key', 'key', lower(v_bad_key),",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::unknown_opts_key_letter_case"],
        },
        Mutant {
            name: "detail_opts_not_object_without_actual_type",
            class: DETAIL,
            what: "opts_not_object DETAIL says type, not actual_type",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "'actual_type', jsonb_typeof(v_opts)",
                        "'type', jsonb_typeof(v_opts)",
                    )],
                );
            },
            killed_by: &["rejection", "v1_1"],
            must_fail: &["sql::rejection::opts_not_object_array"],
        },
        Mutant {
            name: "detail_invalid_value_wrong_key",
            class: DETAIL,
            what: "invalid route source DETAIL names expected_enqueue_shard",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "'code', 'invalid_opts_value', 'key', 'expected_route_source',",
                        "'code', 'invalid_opts_value', 'key', 'expected_enqueue_shard',",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::invalid_opts_value_route_source"],
        },
        Mutant {
            name: "detail_invalid_width_max_63",
            class: DETAIL,
            what: "invalid_width DETAIL max 63",
            apply: |s| {
                patch(
                    s,
                    "raise_invalid_width(bigint, text)",
                    &[("'min', 1, 'max', 64)", "'min', 1, 'max', 63)")],
                );
            },
            killed_by: &["width"],
            must_fail: &["sql::width::shard_helpers_at_widths_1_and_64"],
        },
        // ---- validation boundaries ----
        Mutant {
            name: "priority_5_accepted",
            class: BOUNDARY,
            what: "priority 5 accepted",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "p_priority NOT BETWEEN 1 AND 4",
                            "p_priority NOT BETWEEN 1 AND 5",
                        ),
                        ("p_priority > 4 THEN", "p_priority > 5 THEN"),
                    ],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::priority_5"],
        },
        Mutant {
            name: "priority_1_refused",
            class: BOUNDARY,
            what: "priority 1 refused",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "p_priority NOT BETWEEN 1 AND 4",
                            "p_priority NOT BETWEEN 2 AND 4",
                        ),
                        ("p_priority < 1 OR", "p_priority < 2 OR"),
                    ],
                );
            },
            killed_by: &["function", "rejection", "privilege"],
            must_fail: &["sql::rejection::accepts_priority_1_and_max_attempts_1"],
        },
        Mutant {
            name: "kind_length_unchecked",
            class: BOUNDARY,
            what: "kind length not checked",
            apply: |s| patch_insert_job(s, &[("IF length(p_kind) > 200 THEN", "IF false THEN")]),
            killed_by: &["rejection"],
            must_fail: &[
                "sql::rejection::kind_too_long",
                "sql::rejection::kind_too_long_counts_characters",
                "sql::rejection::released_order_kind_before_queue",
            ],
        },
        Mutant {
            name: "queue_length_counts_bytes",
            class: BOUNDARY,
            what: "queue length counted in bytes",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[("length(p_queue) > 200", "octet_length(p_queue) > 200")],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::accepts_queue_of_200_characters"],
        },
        Mutant {
            name: "validation_order_swapped",
            class: BOUNDARY,
            what: "max_attempts checked before priority",
            apply: |s| {
                let priority = "        IF p_priority < 1 OR p_priority > 4 THEN\n            \
                    RAISE EXCEPTION 'priority must be between 1 and 4' USING ERRCODE = '23514';\n        \
                    END IF;\n";
                let attempts = "        IF p_max_attempts < 1 OR p_max_attempts > 1000 THEN\n            \
                    RAISE EXCEPTION 'max_attempts must be between 1 and 1000' USING ERRCODE = '23514';\n        \
                    END IF;\n";
                patch_insert_job(
                    s,
                    &[(
                        &format!("{priority}{attempts}"),
                        &format!("{attempts}{priority}"),
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::released_order_priority_before_max_attempts"],
        },
        Mutant {
            name: "key_length_unchecked",
            class: BOUNDARY,
            what: "ordering key length not checked",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "IF octet_length(p_ordering_key) > 4096 THEN",
                        "IF false THEN",
                    )],
                );
            },
            killed_by: &["rejection", "v1_1"],
            must_fail: &["sql::rejection::ordering_key_too_long"],
        },
        Mutant {
            name: "key_of_4096_bytes_refused",
            class: BOUNDARY,
            what: "concurrency key limit off by one (4096 refused)",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "octet_length(p_concurrency_key) > 4096",
                        "octet_length(p_concurrency_key) >= 4096",
                    )],
                );
            },
            killed_by: &["function", "rejection", "privilege"],
            must_fail: &["sql::rejection::accepts_key_of_4096_bytes"],
        },
        Mutant {
            name: "only_routing_key_length_checked",
            class: BOUNDARY,
            what: "only the routing key's length is checked",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "IF octet_length(p_concurrency_key) > 4096 THEN",
                        "IF octet_length(COALESCE(p_ordering_key, p_concurrency_key)) > 4096 THEN",
                    )],
                );
            },
            killed_by: &["rejection"],
            must_fail: &["sql::rejection::concurrency_key_too_long_beside_ordering_key_at_limit"],
        },
        Mutant {
            name: "null_priority_defaults_to_1",
            class: BOUNDARY,
            what: "NULL priority means 1",
            apply: |s| {
                patch_insert_job(s, &[("COALESCE(p_priority, 2)", "COALESCE(p_priority, 1)")])
            },
            killed_by: &["rejection", "payload"],
            must_fail: &["sql::rejection::null_arguments_mean_defaults"],
        },
        Mutant {
            name: "null_opts_refused",
            class: BOUNDARY,
            what: "NULL opts treated as not an object",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "OR p_opts <> '{}'::jsonb",
                            "OR p_opts IS DISTINCT FROM '{}'::jsonb",
                        ),
                        (
                            "IF p_opts <> '{}'::jsonb THEN",
                            "IF p_opts IS DISTINCT FROM '{}'::jsonb THEN",
                        ),
                        (
                            "IF jsonb_typeof(v_opts) <> 'object' THEN",
                            "IF jsonb_typeof(v_opts) IS DISTINCT FROM 'object' THEN",
                        ),
                    ],
                );
            },
            killed_by: &["rejection", "payload"],
            must_fail: &["sql::rejection::null_arguments_mean_defaults"],
        },
        // ---- stored values ----
        Mutant {
            name: "job_routing_reads_wrong_shard",
            class: STORED,
            what: "job_routing returns shard + 1",
            apply: |s| {
                patch(
                    s,
                    "job_routing(bigint)",
                    &[(
                        "j.enqueue_shard, j.route_source",
                        "((j.enqueue_shard + 1) % 64)::smallint, j.route_source",
                    )],
                );
            },
            killed_by: &["function", "rotor", "width", "privilege", "lifecycle", "bulk"],
            must_fail: &[
                "sql::function::cd-",
                "sql::function::cs-",
                "sql::function::os-",
                "sql::function::rp-",
            ],
        },
        Mutant {
            name: "stores_each_job_twice",
            class: PAYLOAD,
            what: "insert_job stores a second copy of every job",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "    INTO v_result;\n",
                        "    INTO v_result;\n    INSERT INTO @S@.contract_jobs (kind, queue, args, \
                         state, priority, max_attempts, run_at, created_at, metadata, tags, \
                         unique_key, unique_states, ordering_key, concurrency_digest, \
                         enqueue_shard, route_source, enqueued_by) SELECT kind, queue, args, \
                         state, priority, max_attempts, run_at, created_at, metadata, tags, \
                         unique_key, unique_states, ordering_key, concurrency_digest, \
                         enqueue_shard, route_source, enqueued_by FROM @S@.contract_jobs \
                         WHERE id = v_result.job_id;\n",
                    )],
                );
            },
            killed_by: &["function", "rejection", "rotor", "width", "payload"],
            must_fail: &["sql::function::", "sql::payload::"],
        },
        Mutant {
            name: "tags_not_stored",
            class: PAYLOAD,
            what: "insert_job stores no tags",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "COALESCE(p_tags, '{}'::text[]), p_unique_key",
                            "'{}'::text[], p_unique_key",
                        )
                    ],
                );
            },
            killed_by: &["rejection", "payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "metadata_not_stored",
            class: PAYLOAD,
            what: "insert_job stores empty metadata",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "COALESCE(p_metadata, '{}'::jsonb), COALESCE(p_tags",
                            "'{}'::jsonb, COALESCE(p_tags",
                        )
                    ],
                );
            },
            killed_by: &["payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "max_attempts_ignored",
            class: PAYLOAD,
            what: "insert_job stores 25 attempts whatever is asked",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "COALESCE(p_max_attempts, 25)",
                            "25",
                        )
                    ],
                );
            },
            killed_by: &["rejection", "payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "args_nulls_stripped",
            class: PAYLOAD,
            what: "insert_job strips JSON nulls from args",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "COALESCE(p_args, '{}'::jsonb),",
                            "jsonb_strip_nulls(COALESCE(p_args, '{}'::jsonb)),",
                        )
                    ],
                );
            },
            killed_by: &["payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "run_at_truncated",
            class: PAYLOAD,
            what: "insert_job truncates run_at to whole seconds",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "COALESCE(p_run_at, v_now), v_now",
                            "date_trunc('second', COALESCE(p_run_at, v_now)), v_now",
                        )
                    ],
                );
            },
            killed_by: &["function", "rejection", "rotor", "width", "privilege", "payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "run_at_in_the_callers_zone",
            class: PAYLOAD,
            what: "insert_job stores run_at as UTC wall-clock time read in the caller's time zone",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "COALESCE(p_run_at, v_now), v_now",
                        "(COALESCE(p_run_at, v_now) AT TIME ZONE 'UTC')::timestamptz, v_now",
                    )],
                );
            },
            // Right only in a UTC session: the suites call under CALLER_SETTINGS (§12.4).
            killed_by: &["function", "rejection", "rotor", "width", "privilege", "payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "kind_case_folded",
            class: PAYLOAD,
            what: "insert_job stores the kind lower-cased",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "p_kind, COALESCE(p_queue, 'default'), COALESCE(p_args",
                            "lower(p_kind), COALESCE(p_queue, 'default'), COALESCE(p_args",
                        )
                    ],
                );
            },
            killed_by: &["payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "big_numbers_as_floats",
            class: PAYLOAD,
            what: "insert_job passes numbers in args through float8",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        (
                            "COALESCE(p_args, '{}'::jsonb),",
                            "COALESCE(CASE jsonb_typeof(p_args) WHEN 'number' THEN to_jsonb((p_args #>> '{}')::float8) WHEN 'object' THEN (SELECT COALESCE(jsonb_object_agg(e.k, CASE jsonb_typeof(e.v) WHEN 'number' THEN to_jsonb((e.v #>> '{}')::float8) ELSE e.v END), '{}'::jsonb) FROM jsonb_each(p_args) AS e(k, v)) ELSE p_args END, '{}'::jsonb),",
                        )
                    ],
                );
            },
            killed_by: &["payload"],
            must_fail: &["sql::payload::"],
        },
        Mutant {
            name: "job_routing_priority_constant",
            class: STORED,
            what: "job_routing returns priority 2 for every job",
            apply: |s| {
                patch(
                    s,
                    "job_routing(bigint)",
                    &[("j.state, j.priority,", "j.state, 2::smallint,")],
                );
            },
            killed_by: &["function", "rejection", "privilege", "bulk", "payload"],
            must_fail: &["sql::function::", "sql::rejection::accepts_priority_4"],
        },
        Mutant {
            name: "job_routing_state_constant",
            class: STORED,
            what: "job_routing returns state available for every job",
            apply: |s| {
                patch(
                    s,
                    "job_routing(bigint)",
                    &[("j.queue, j.state,", "j.queue, 'available'::text,")],
                );
            },
            killed_by: &["function", "rejection", "privilege", "bulk", "payload"],
            must_fail: &[
                "sql::function::",
                "sql::rejection::future_run_at_stores_scheduled",
            ],
        },
        Mutant {
            name: "unique_key_stored_altered",
            class: STORED,
            what: "unique_key stored without its first byte",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "COALESCE(p_tags, '{}'::text[]), p_unique_key,",
                        "COALESCE(p_tags, '{}'::text[]), substring(p_unique_key from 2),",
                    )],
                );
            },
            killed_by: &["function", "uniqueness", "privilege"],
            must_fail: &["sql::function::uk-"],
        },
        Mutant {
            name: "result_shard_differs_from_stored",
            class: STORED,
            what: "returned shard + 1, stored shard right",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "RETURNING id, queue, state, priority, enqueue_shard, route_source",
                        "RETURNING id, queue, state, priority, ((enqueue_shard + 1) % 64)::smallint, \
                         route_source",
                    )],
                );
            },
            killed_by: &["catalog", "function", "rotor", "width", "privilege", "lifecycle"],
            must_fail: &[
                "sql::function::cd-",
                "sql::function::cs-",
                "sql::function::os-",
                "sql::function::rp-",
            ],
        },
        // ---- uniqueness ----
        Mutant {
            name: "claims_regardless_of_state_mask",
            class: UNIQUE,
            what: "claim taken whatever the state bits",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "get_bit(v_unique_states,",
                        "1 + 0 * get_bit(v_unique_states,",
                    )],
                );
            },
            killed_by: &["uniqueness", "v1_1"],
            must_fail: &[
                "sql::uniqueness::mask_excluding_initial_state_takes_no_claim",
                "sql::uniqueness::scheduled_mask",
            ],
        },
        Mutant {
            name: "claim_ignores_scheduled_bit",
            class: UNIQUE,
            what: "claim always tests the available bit",
            apply: |s| {
                patch(
                    s,
                    INSERT_JOB,
                    &[(
                        "CASE v_result.state WHEN 'scheduled' THEN 0 ELSE 1 END",
                        "1",
                    )],
                );
            },
            killed_by: &["uniqueness", "v1_1"],
            must_fail: &["sql::uniqueness::scheduled_with_scheduled_bit_takes_claim"],
        },
        Mutant {
            name: "null_states_key_enforced",
            class: UNIQUE,
            what: "a key with NULL states is claimed",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        ("AND v_unique_states IS NOT NULL", "AND true"),
                        (
                            "get_bit(v_unique_states,",
                            "get_bit(COALESCE(v_unique_states, B'11111111'),",
                        ),
                    ],
                );
            },
            killed_by: &["uniqueness"],
            must_fail: &["sql::uniqueness::null_states_stored_not_enforced"],
        },
        Mutant {
            name: "empty_key_not_enforced",
            class: UNIQUE,
            what: "the empty key takes no claim",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "IF p_unique_key IS NOT NULL AND",
                        "IF p_unique_key IS NOT NULL AND p_unique_key <> ''::bytea AND",
                    )],
                );
            },
            killed_by: &["uniqueness"],
            must_fail: &["sql::uniqueness::empty_key_enforced"],
        },
        Mutant {
            name: "queue_is_part_of_the_claim",
            class: UNIQUE,
            what: "claims per queue",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "VALUES (p_unique_key, v_result.job_id)",
                        "VALUES (p_unique_key || convert_to(v_result.queue, 'UTF8'), v_result.job_id)",
                    )],
                );
            },
            killed_by: &["uniqueness", "bulk"],
            must_fail: &["sql::uniqueness::same_key_other_queue_collides"],
        },
        // ---- race ----
        Mutant {
            name: "no_unique_index",
            class: RACE,
            what: "claim table without its unique index",
            apply: |s| {
                s.sql("DROP INDEX @S@.idx_awa_jobs_unique");
            },
            killed_by: &["uniqueness", "race", "v1_1", "bulk"],
            must_fail: &["sql::race::", "sql::uniqueness::duplicate_key_rejected"],
        },
        Mutant {
            name: "check_then_insert_claim",
            class: RACE,
            what: "claim by SELECT-then-INSERT, no unique index",
            apply: apply_check_then_insert,
            killed_by: &["race", "bulk"],
            must_fail: &["sql::race::second_claim_waits_for_holder_then_23505"],
        },
        // ---- hardening ----
        Mutant {
            name: "security_invoker_and_public_execute",
            class: HARDENING,
            what: "insert_job SECURITY INVOKER, PUBLIC EXECUTE, caller-first search_path",
            apply: |s| {
                s.sql(&format!(
                    "ALTER FUNCTION @S@.{INSERT_JOB} SECURITY INVOKER; \
                     GRANT EXECUTE ON FUNCTION @S@.{INSERT_JOB} TO PUBLIC; \
                     ALTER FUNCTION @S@.{INSERT_JOB} SET search_path = @S@, pg_catalog"
                ));
            },
            killed_by: &["catalog", "privilege", "v1_1"],
            must_fail: &[
                "sql::catalog::insert_job_security_definer",
                "sql::catalog::insert_job_no_public_execute",
                "sql::catalog::insert_job_search_path",
                // As an invoker function the producer role cannot write the tables.
                "sql::privilege::function::",
            ],
        },
        Mutant {
            name: "search_path_with_public",
            class: HARDENING,
            what: "search_path = pg_catalog, public, <schema>, pg_temp",
            apply: |s| {
                s.sql(&format!(
                    "ALTER FUNCTION @S@.{INSERT_JOB} SET search_path = pg_catalog, public, @S@, pg_temp"
                ));
            },
            killed_by: &["catalog"],
            must_fail: &["sql::catalog::insert_job_search_path"],
        },
        Mutant {
            name: "job_routing_unhardened",
            class: HARDENING,
            what: "job_routing PUBLIC, SECURITY INVOKER, no search_path",
            apply: |s| {
                s.sql(
                    "GRANT EXECUTE ON FUNCTION @S@.job_routing(bigint) TO PUBLIC; \
                     ALTER FUNCTION @S@.job_routing(bigint) SECURITY INVOKER; \
                     ALTER FUNCTION @S@.job_routing(bigint) RESET search_path",
                );
            },
            killed_by: &["catalog", "privilege", "v1_1", "bulk"],
            must_fail: &[
                "sql::catalog::job_routing_no_public_execute",
                "sql::catalog::job_routing_security_definer",
                "sql::catalog::job_routing_search_path",
            ],
        },
        Mutant {
            name: "owned_by_the_installer",
            class: HARDENING,
            what: "functions owned by the (superuser) installer",
            apply: |s| {
                s.sql(&format!(
                    "ALTER FUNCTION @S@.{INSERT_JOB} OWNER TO CURRENT_USER; \
                     ALTER FUNCTION @S@.job_routing(bigint) OWNER TO CURRENT_USER"
                ));
            },
            killed_by: &["catalog"],
            must_fail: &[
                "sql::catalog::insert_job_owner_bounded",
                "sql::catalog::job_routing_owner_bounded",
            ],
        },
        Mutant {
            name: "owner_can_log_in",
            class: HARDENING,
            what: "owner role has LOGIN",
            apply: |s| {
                let role = scratch_role(s);
                s.sql(&format!("CREATE ROLE \"{role}\" LOGIN NOINHERIT"));
                own_by(s, &role);
            },
            killed_by: &["catalog"],
            must_fail: &["sql::catalog::insert_job_owner_bounded"],
        },
        Mutant {
            name: "owner_member_of_a_role",
            class: HARDENING,
            what: "owner role is a member of pg_write_all_data",
            apply: |s| {
                let role = scratch_role(s);
                s.sql(&format!(
                    "CREATE ROLE \"{role}\" NOLOGIN NOINHERIT; GRANT pg_write_all_data TO \"{role}\""
                ));
                own_by(s, &role);
            },
            killed_by: &["catalog"],
            must_fail: &["sql::catalog::insert_job_owner_bounded"],
        },
        Mutant {
            name: "producer_can_insert_into_queue_meta",
            class: HARDENING,
            what: "producer role granted INSERT on queue_meta and the job sequence",
            apply: |s| {
                s.sql(
                    "GRANT INSERT ON @S@.queue_meta TO awa_producer; \
                     GRANT USAGE ON SEQUENCE @S@.contract_jobs_id_seq TO awa_producer",
                );
            },
            killed_by: &["privilege"],
            must_fail: &["sql::privilege::no_excess_privileges"],
        },
        Mutant {
            name: "producer_can_create_in_schema",
            class: HARDENING,
            what: "producer role granted CREATE on the schema",
            apply: |s| {
                s.sql("GRANT CREATE ON SCHEMA @S@ TO awa_producer");
            },
            killed_by: &["privilege"],
            must_fail: &["sql::privilege::no_excess_privileges"],
        },
        Mutant {
            name: "extra_security_definer_function",
            class: HARDENING,
            what: "an extra PUBLIC SECURITY DEFINER function",
            apply: |s| {
                s.sql(
                    "CREATE FUNCTION @S@.purge_jobs() RETURNS bigint LANGUAGE sql SECURITY DEFINER \
                     AS 'SELECT count(*) FROM @S@.contract_jobs'",
                );
            },
            killed_by: &["privilege"],
            must_fail: &["sql::privilege::no_excess_privileges"],
        },
        // ---- lifecycle (contract §9) ----
        Mutant {
            name: "job_routing_rereads_the_width",
            class: LIFECYCLE,
            what: "stored shard re-resolved against today's width",
            apply: |s| {
                patch(
                    s,
                    "job_routing(bigint)",
                    &[(
                        "j.enqueue_shard, j.route_source",
                        "(j.enqueue_shard % COALESCE((SELECT m.enqueue_shards FROM @S@.queue_meta AS m \
                         WHERE m.queue = j.queue), 1))::smallint, j.route_source",
                    )],
                );
            },
            killed_by: &["lifecycle"],
            must_fail: &["sql::lifecycle::lower_width"],
        },
        Mutant {
            name: "move_shard_falls_back_to_the_rotor",
            class: LIFECYCLE,
            what: "move_shard answers a rotor pick",
            apply: |s| {
                patch(
                    s,
                    "move_shard(integer, integer)",
                    &[(
                        "RETURN p_retained % p_dest_width;",
                        "RETURN pg_backend_pid() % p_dest_width;",
                    )],
                );
            },
            killed_by: &["lifecycle", "width"],
            must_fail: &["sql::lifecycle::priority_move_keeps_shard"],
        },
        Mutant {
            name: "move_shard_clamps_instead_of_modulo",
            class: LIFECYCLE,
            what: "move_shard clamps to the last shard",
            apply: |s| {
                patch(
                    s,
                    "move_shard(integer, integer)",
                    &[(
                        "RETURN p_retained % p_dest_width;",
                        "RETURN LEAST(p_retained, p_dest_width - 1);",
                    )],
                );
            },
            killed_by: &["lifecycle", "width"],
            must_fail: &["sql::lifecycle::cross_queue_move_retained_mod_dest"],
        },
        // ---- revision 1.1 ----
        Mutant {
            name: "unique_states_length_unchecked",
            class: REVISION,
            what: "no 8-bit check on unique_states",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[
                        ("OR length(v_unique_states) <> 8 THEN", "THEN"),
                        ("IF length(v_unique_states) <> 8 THEN", "IF false THEN"),
                    ],
                );
            },
            killed_by: &["v1_1"],
            must_fail: &[
                "sql::v1_1::unique_states_4_bits_refused",
                "sql::v1_1::unique_states_9_bits_refused",
                "sql::v1_1::unique_states_empty_refused",
                "sql::v1_1::unique_states_checked_first",
            ],
        },
        Mutant {
            name: "rotor_expectation_compared_with_the_pick",
            class: REVISION,
            what: "rotor + expected shard compared with the rotor's pick",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "IF v_exp_shard IS NOT NULL AND v_source = 'rotor' THEN",
                        "IF false THEN",
                    )],
                );
            },
            killed_by: &["v1_1"],
            must_fail: &["sql::v1_1::rotor_expected_shard_refused"],
        },
        Mutant {
            name: "initial_state_from_the_clock",
            class: REVISION,
            what: "scheduled only for a future run_at (the v1.0 rule)",
            apply: |s| {
                patch_insert_job(
                    s,
                    &[(
                        "CASE WHEN p_run_at IS NOT NULL THEN 'scheduled'",
                        "CASE WHEN p_run_at > v_now THEN 'scheduled'",
                    )],
                );
            },
            killed_by: &["function", "rejection", "privilege", "v1_1"],
            must_fail: &[
                "sql::v1_1::initial_state_run_at_given_is_scheduled",
                "sql::rejection::past_run_at_stores_scheduled",
            ],
        },
        Mutant {
            name: "job_routing_unscoped",
            class: REVISION,
            what: "job_routing returns every producer's jobs",
            apply: |s| {
                patch(
                    s,
                    "job_routing(bigint)",
                    &[(
                        "AND (j.enqueued_by = session_user OR pg_has_role(session_user, current_user, 'MEMBER'))",
                        "",
                    )],
                );
            },
            killed_by: &["v1_1"],
            must_fail: &["sql::v1_1::job_routing_scoped_to_session_user"],
        },
        Mutant {
            name: "queue_enqueue_shards_null_for_a_missing_row",
            class: REVISION,
            what: "queue_enqueue_shards gives NULL without a queue_meta row",
            apply: |s| {
                patch(
                    s,
                    "queue_enqueue_shards(text)",
                    &[("1::smallint)", "NULL::smallint)")],
                )
            },
            killed_by: &["v1_1"],
            must_fail: &["sql::v1_1::queue_enqueue_shards_widths"],
        },
        Mutant {
            name: "producer_cannot_read_widths",
            class: REVISION,
            what: "EXECUTE on queue_enqueue_shards revoked from the producer",
            apply: |s| {
                s.sql(
                    "REVOKE EXECUTE ON FUNCTION @S@.queue_enqueue_shards(text) FROM awa_producer",
                );
            },
            killed_by: &["v1_1"],
            must_fail: &["sql::v1_1::queue_enqueue_shards_producer_execute"],
        },
        // ---- the staged bulk path ----
        Mutant {
            name: "publish_skips_digest_check",
            class: BULK,
            what: "publish_batch never compares the staged digest",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[(
                        "WHEN c.concurrency_digest IS DISTINCT FROM c.c_digest THEN",
                        "WHEN false THEN",
                    )],
                );
            },
            killed_by: &["bulk"],
            must_fail: &[
                "sql::bulk::digest_mismatch_rejected",
                "sql::bulk::fallback_digest_required",
            ],
        },
        Mutant {
            name: "publish_accepts_off_by_one_shard",
            class: BULK,
            what: "a staged shard one above the computed one passes",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[(
                        "WHEN c.enqueue_shard IS DISTINCT FROM c.c_shard THEN",
                        "WHEN c.enqueue_shard IS DISTINCT FROM c.c_shard \
                         AND c.enqueue_shard IS DISTINCT FROM (c.c_shard + 1) % c.width THEN",
                    )],
                );
            },
            killed_by: &["bulk"],
            must_fail: &[
                "sql::bulk::one_bad_row_publishes_nothing",
                "sql::bulk::shard_off_by_one_rejected",
            ],
        },
        Mutant {
            name: "publish_ignores_route_source",
            class: BULK,
            what: "publish_batch never compares the staged route source",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[(
                        "WHEN c.route_source IS DISTINCT FROM c.c_source THEN",
                        "WHEN false THEN",
                    )],
                );
            },
            killed_by: &["bulk"],
            must_fail: &[
                "sql::bulk::concurrency_key_route_source_required",
                "sql::bulk::rotor_row_as_keyed_rejected",
                "sql::bulk::first_bad_row_named",
            ],
        },
        Mutant {
            name: "partial_publish",
            class: BULK,
            what: "the first bad row is dropped and the rest published",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[(
                        "    IF FOUND THEN\n        RAISE EXCEPTION",
                        "    IF FOUND THEN\n        DELETE FROM bulk_staging AS b \
                         WHERE b.staged_by = session_user AND b.batch_id = p_batch \
                         AND b.row_no = v_bad.row_no;\n    END IF;\n    IF false THEN\n        \
                         RAISE EXCEPTION",
                    )],
                );
            },
            killed_by: &["bulk"],
            must_fail: &[
                "sql::bulk::one_bad_row_publishes_nothing",
                "sql::bulk::digest_mismatch_rejected",
            ],
        },
        Mutant {
            name: "staging_rows_left",
            class: BULK,
            what: "publish_batch copies the staged rows without deleting them",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[
                        ("DELETE FROM ", "SELECT b.* FROM "),
                        ("            RETURNING b.*\n", "\n"),
                    ],
                );
            },
            killed_by: &["bulk"],
            must_fail: &["sql::bulk::publish_all_rows_route_as_computed"],
        },
        Mutant {
            name: "staged_rows_commit",
            class: BULK,
            what: "no deferred check: staged rows commit unpublished",
            apply: |s| {
                s.sql("DROP TRIGGER bulk_staging_published_before_commit ON @S@.bulk_staging");
            },
            killed_by: &["bulk"],
            must_fail: &["sql::bulk::staged_rows_never_commit"],
        },
        Mutant {
            name: "last_bad_row_named",
            class: BULK,
            what: "the largest bad row_no is reported",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[("    ORDER BY v.row_no\n", "    ORDER BY v.row_no DESC\n")],
                );
            },
            killed_by: &["bulk"],
            must_fail: &["sql::bulk::first_bad_row_named"],
        },
        Mutant {
            name: "publish_skips_released_validation",
            class: BULK,
            what: "publish_batch accepts priority 5 and 21 tags",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[
                        ("WHEN c.priority NOT BETWEEN 1 AND 4 THEN", "WHEN false THEN"),
                        ("WHEN cardinality(c.tags) > 20 THEN", "WHEN false THEN"),
                    ],
                );
            },
            killed_by: &["bulk"],
            must_fail: &[
                "sql::bulk::priority_5_rejected",
                "sql::bulk::tags_21_rejected",
            ],
        },
        Mutant {
            name: "publish_checks_routing_before_key_length",
            class: BULK,
            what: "an over-long key is reported as a routing mismatch",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[
                        ("WHEN octet_length(c.ordering_key) > 4096 THEN", "WHEN false THEN"),
                        ("WHEN octet_length(c.concurrency_key) > 4096 THEN", "WHEN false THEN"),
                    ],
                );
            },
            killed_by: &["bulk"],
            must_fail: &[
                "sql::bulk::ordering_key_4097_rejected",
                "sql::bulk::concurrency_key_4097_rejected",
            ],
        },
        Mutant {
            name: "within_batch_duplicates_unnamed",
            class: BULK,
            what: "no within-batch claim check (the insert's collision names no earlier row)",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[(
                        "WHEN c.claiming AND c.first_claim <> c.row_no THEN",
                        "WHEN false THEN",
                    )],
                );
            },
            killed_by: &["bulk"],
            must_fail: &["sql::bulk::unique_within_batch_rejected"],
        },
        Mutant {
            name: "existing_claim_raw_23505",
            class: BULK,
            what: "a claim held outside the batch surfaces as a bare 23505",
            apply: |s| {
                patch(
                    s,
                    PUBLISH,
                    &[("            IF v_count = 0 THEN\n                RAISE EXCEPTION 'awa.insert_job: bulk batch % rejected at row %: a job outside",
                       "            IF false THEN\n                RAISE EXCEPTION 'awa.insert_job: bulk batch % rejected at row %: a job outside")],
                );
            },
            killed_by: &["bulk"],
            must_fail: &[
                "sql::bulk::unique_against_existing_rejected",
                "sql::bulk::unique_across_batches_rejected",
            ],
        },
        Mutant {
            name: "publish_batch_unhardened",
            class: BULK,
            what: "publish_batch PUBLIC, SECURITY INVOKER, no search_path",
            apply: |s| {
                s.sql(&format!(
                    "GRANT EXECUTE ON FUNCTION @S@.{PUBLISH} TO PUBLIC; \
                     ALTER FUNCTION @S@.{PUBLISH} SECURITY INVOKER; \
                     ALTER FUNCTION @S@.{PUBLISH} RESET search_path"
                ));
            },
            killed_by: &["catalog", "bulk"],
            must_fail: &[
                "sql::catalog::publish_batch_security_definer",
                "sql::catalog::publish_batch_no_public_execute",
                "sql::catalog::publish_batch_search_path",
                "sql::bulk::producer_stages_and_publishes",
            ],
        },
        Mutant {
            name: "producer_can_write_staged_by",
            class: BULK,
            what: "the producer may INSERT staged_by (and so stage as someone else)",
            apply: |s| {
                s.sql("GRANT INSERT (staged_by) ON @S@.bulk_staging TO awa_producer");
            },
            killed_by: &["privilege"],
            must_fail: &["sql::privilege::no_excess_privileges"],
        },
    ]
}

/// The check-then-insert claim: look for the key, raise a look-alike 23505 if found, else
/// insert, with the unique index replaced by a plain one (and the owner allowed to read the
/// claims). Correct one session at a time; two sessions both pass the check while neither has
/// committed.
fn apply_check_then_insert(s: &Scratch) {
    s.sql(
        "DROP INDEX @S@.idx_awa_jobs_unique; \
         CREATE INDEX idx_awa_jobs_unique_plain ON @S@.job_unique_claims (unique_key); \
         GRANT SELECT ON @S@.job_unique_claims TO awa_owner",
    );
    patch(
        s,
        INSERT_JOB,
        &[(
            "CASE v_result.state WHEN 'scheduled' THEN 0 ELSE 1 END) = 1 THEN",
            "CASE v_result.state WHEN 'scheduled' THEN 0 ELSE 1 END) = 1 THEN \
             IF EXISTS (SELECT 1 FROM job_unique_claims AS c WHERE c.unique_key = p_unique_key) \
             THEN RAISE EXCEPTION 'duplicate key value violates unique constraint \"idx_awa_jobs_unique\"' \
             USING ERRCODE = '23505', CONSTRAINT = 'idx_awa_jobs_unique'; END IF;",
        )],
    );
}

/// `sql::<suite>::…` → `<suite>`.
fn suite_of(case: &str) -> Option<&str> {
    case.strip_prefix("sql::")?.split("::").next()
}

fn check(m: &Mutant) {
    let s = Scratch::install(&dsn(), "mut");
    (m.apply)(&s);
    let (out, report) = run_with_report(&s, &["sql::"]);
    drop_scratch_roles(&s);
    let failed = cases_with(&report, "failed");
    let errored = cases_with(&report, "errored");
    assert!(
        errored.is_empty(),
        "mutant {}: a mutant is a finding, not a harness error: {errored:?}\nstderr: {}",
        m.name,
        text(&out.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "mutant {} not caught (exit code); failed: {failed:?}\nstderr: {}",
        m.name,
        text(&out.stderr)
    );
    let got: BTreeSet<&str> = failed.iter().filter_map(|n| suite_of(n)).collect();
    let want: BTreeSet<&str> = m.killed_by.iter().copied().collect();
    // One failed case per suite is enough to read (a routing mutant fails hundreds).
    let mut sample: Vec<&String> = Vec::new();
    for suite in &got {
        sample.extend(failed.iter().filter(|n| suite_of(n) == Some(suite)).take(2));
    }
    assert_eq!(
        got,
        want,
        "mutant {}: suites with failures differ from the kill matrix; {} failed, e.g. {sample:?}",
        m.name,
        failed.len()
    );
    for prefix in m.must_fail {
        assert!(
            failed.iter().any(|n| n.starts_with(prefix)),
            "mutant {}: no failed case starting with {prefix}; failed: {failed:?}",
            m.name
        );
    }
}

// ---- the published matrix ----

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/kill-matrix.md");
const BEGIN: &str = "<!-- BEGIN GENERATED by runner/tests/db_mutants.rs -->";
const END: &str = "<!-- END GENERATED -->";

/// The generated part of docs/kill-matrix.md.
fn render(ms: &[Mutant]) -> String {
    let mut out = format!("{BEGIN}\n\n");
    out.push_str("| class | mutant | change |");
    for suite in SUITES {
        out.push_str(&format!(" {suite} |"));
    }
    out.push_str("\n|---|---|---|");
    out.push_str(&"---|".repeat(SUITES.len()));
    out.push('\n');
    for m in ms {
        out.push_str(&format!("| {} | `{}` | {} |", m.class, m.name, m.what));
        for suite in SUITES {
            out.push_str(if m.killed_by.contains(&suite) {
                " ✗ |"
            } else {
                " |"
            });
        }
        out.push('\n');
    }
    let classes: BTreeSet<&str> = ms.iter().map(|m| m.class).collect();
    out.push_str(&format!(
        "\n{} mutants in {} classes; every mutant is killed (✗ = the suite has a failed case \
         on it).\n\n{END}",
        ms.len(),
        classes.len()
    ));
    out
}

fn kill_matrix_doc_is_current() {
    let ms = mutants();
    let mut names = BTreeSet::new();
    for m in &ms {
        assert!(names.insert(m.name), "duplicate mutant {}", m.name);
        assert!(
            !m.killed_by.is_empty(),
            "mutant {} is killed by nothing",
            m.name
        );
        for s in m.killed_by {
            assert!(SUITES.contains(s), "mutant {}: unknown suite {s}", m.name);
        }
    }
    let generated = render(&ms);
    let doc = std::fs::read_to_string(DOC).unwrap_or_default();
    let current = doc
        .find(BEGIN)
        .zip(doc.find(END))
        .map(|(b, e)| &doc[b..e + END.len()]);
    if current == Some(generated.as_str()) {
        return;
    }
    if std::env::var("AWA_BLESS").as_deref() == Ok("1") {
        let new = match current {
            Some(old) => doc.replace(old, &generated),
            None => format!("{doc}\n{generated}\n"),
        };
        std::fs::write(DOC, new).unwrap();
        return;
    }
    panic!(
        "docs/kill-matrix.md is stale: rerun with AWA_BLESS=1 \
         (cargo test -p awa-conformance --test db_mutants kill_matrix_doc_is_current)"
    );
}

/// The race case's full name.
const RACE_CASE: &str = "sql::race::second_claim_waits_for_holder_then_23505";

/// `AWA_RACE_RUNS=N` (a measurement, not part of the default run): N runner processes, each
/// running only the race case, against the check-then-insert mutant, and N/10 (at least 1)
/// against the reference; prints both counts and requires at least 999 in 1000 caught and no
/// false alarm.
fn race_kill_rate(runs: u32) {
    let mutant = Scratch::install(&dsn(), "racem");
    apply_check_then_insert(&mutant);
    let reference = Scratch::install(&dsn(), "racer");
    let reference_runs = (runs / 10).max(1);
    let (mut caught, mut false_alarms) = (0_u32, 0_u32);
    for i in 0..runs {
        let mut targets = vec![(&mutant, true)];
        if i < reference_runs {
            targets.push((&reference, false));
        }
        for (s, is_mutant) in targets {
            let out = s.run(&["-q", "--exact", RACE_CASE]);
            match (out.status.code(), is_mutant) {
                (Some(1), true) => caught += 1,
                (Some(0), _) => {}
                (Some(1), false) => false_alarms += 1,
                (code, _) => panic!("run {i}: exit {code:?}: {}", text(&out.stderr)),
            }
        }
    }
    eprintln!(
        "race kill rate: caught {caught} of {runs} runs of check_then_insert_claim; \
         {false_alarms} of {reference_runs} runs of the reference failed"
    );
    assert!(
        u64::from(caught) * 1000 >= u64::from(runs) * 999,
        "{caught}/{runs}"
    );
    assert_eq!(false_alarms, 0);
}

fn main() {
    // Leak the table so each trial can hold a `'static` mutant.
    let ms: &'static [Mutant] = Box::leak(mutants().into_boxed_slice());
    let mut tests: Vec<(String, Gate, db_support::TestFn)> = vec![(
        "kill_matrix_doc_is_current".to_owned(),
        Gate::None,
        Box::new(kill_matrix_doc_is_current),
    )];
    for m in ms {
        tests.push((
            format!("mutant_{}", m.name),
            Gate::Dsn,
            Box::new(move || check(m)),
        ));
    }
    // Only when asked: 1000 runs take minutes (docs/kill-matrix.md records the result).
    if let Some(runs) = std::env::var("AWA_RACE_RUNS")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
    {
        tests.push((
            "race_kill_rate".to_owned(),
            Gate::Dsn,
            Box::new(move || race_kill_rate(runs)),
        ));
    }
    main_with_boxed(tests);
}
