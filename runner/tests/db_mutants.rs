//! Mutation tests: the reference schema with one deliberate contract bug (a small textual
//! change) must make the SQL suites fail, and exactly the suites its row says.
//!
//! The mutants are data: tests/mutants/sql.json, one row each (name, class, what, the steps
//! that make the change, `killed_by`, `must_fail`), in the same spirit as the example
//! producers' patches beside it. Two modes (`AWA_MUTANTS`):
//! - `exact` (the default; scripts/test.sh full, and its db tier when a change touches the
//!   schema, the kit's SQL, the suites or the contract layer): every mutant runs the whole
//!   `sql::` set and must end with exit 1, no harness error, failed cases in exactly the suites
//!   of `killed_by`, and a failed case for each `must_fail` prefix;
//! - `caught` (the db tier otherwise): every mutant runs only the suites of its `killed_by`,
//!   and each of them must fail it, with the same `must_fail` and harness-error checks. It
//!   proves every mutant killed by the suites its row names; only `exact` proves that no other
//!   suite fails on it.
//!
//! The table is also the source of docs/kill-matrix.md:
//! `kill_matrix_doc_is_current` fails when the document is stale (`AWA_BLESS=1` rewrites its
//! generated part).

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod support;

use std::collections::BTreeSet;

use serde::Deserialize;
use support::{cases_with, dsn, main_with_boxed, run_with_report, scalar, text, Gate, Scratch};

const INSERT_JOB: &str = "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, \
                          text[], bytea, bit varying, bytea, bytea, jsonb)";

/// The SQL suites, in the matrix's column order.
const SUITES: [&str; 13] = [
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
    "field",
];

/// The table of mutants.
const TABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/mutants/sql.json");

#[derive(Deserialize)]
struct Table {
    version: u32,
    mutants: Vec<Mutant>,
}

/// One wrong implementation (a row of tests/mutants/sql.json).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Mutant {
    /// Trial name (`mutant_<name>`) and matrix row.
    name: String,
    /// The class of bug, a matrix column.
    class: String,
    /// What the mutant changes, in a few words.
    what: String,
    /// The change, applied in order to a freshly installed reference schema.
    steps: Vec<Step>,
    /// The suites with at least one failed case, exactly.
    killed_by: Vec<String>,
    /// Case-name prefixes that must be among the failures.
    must_fail: Vec<String>,
}

/// One step of a mutant's change.
#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum Step {
    /// Drop the job table's CHECK constraints: they would catch some mutants at insert time,
    /// and the runner is what must notice (a third-party schema has no such CHECKs).
    DropJobChecks { drop_job_checks: bool },
    /// Replace each `[from, to]` in the function's definition and re-create it.
    Patch {
        patch: String,
        edits: Vec<[String; 2]>,
    },
    /// Run statements (`@S@` = the quoted scratch schema, `@P@` its producer role, `@O@` the
    /// function owner).
    Sql { sql: String },
    /// Make `contract_capabilities()` return this list (SQL array elements).
    Capabilities { capabilities: String },
    /// A change written below, by name.
    Custom { custom: String },
}

fn table() -> Vec<Mutant> {
    let text = std::fs::read_to_string(TABLE).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
    let t: Table = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
    assert_eq!(t.version, 1, "{TABLE}: unknown version");
    t.mutants
}

// ---- applying changes ----

fn apply(m: &Mutant, s: &Scratch) {
    for step in &m.steps {
        match step {
            Step::DropJobChecks { drop_job_checks } => {
                if *drop_job_checks {
                    drop_job_checks_of(s);
                }
            }
            Step::Patch {
                patch: function,
                edits,
            } => patch(s, function, edits),
            Step::Sql { sql } => {
                s.sql(sql);
            }
            Step::Capabilities { capabilities } => set_capabilities(s, capabilities),
            Step::Custom { custom } => match custom.as_str() {
                "owner_can_log_in" => owner_can_log_in(s),
                "owner_member_of_a_role" => owner_member_of_a_role(s),
                "check_then_insert_claim" => apply_check_then_insert(s),
                other => panic!("{TABLE}: mutant {}: no custom change {other}", m.name),
            },
        }
    }
}

/// Replace `from` with `to` in a function's definition and re-create it.
fn patch(s: &Scratch, function: &str, edits: &[[String; 2]]) {
    let def = scalar(
        &s.dsn,
        &format!(
            "SELECT pg_get_functiondef('\"{}\".{function}'::regprocedure)",
            s.schema
        ),
    );
    let mut out = def;
    for [from, to] in edits {
        assert!(
            out.contains(from.as_str()),
            "mutant anchor {from:?} not found in {function}: update {TABLE}"
        );
        out = out.replace(from.as_str(), to);
    }
    s.sql(&out);
}

fn drop_job_checks_of(s: &Scratch) {
    s.sql(
        "DO $$ DECLARE c text; BEGIN \
           FOR c IN SELECT conname FROM pg_constraint \
                    WHERE conrelid = '@S@.contract_jobs'::regclass AND contype = 'c' LOOP \
             EXECUTE format('ALTER TABLE @S@.contract_jobs DROP CONSTRAINT %I', c); \
           END LOOP; END $$",
    );
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

/// The function owner can log in (a role of this scratch schema only).
fn owner_can_log_in(s: &Scratch) {
    let role = scratch_role(s);
    s.sql(&format!("CREATE ROLE \"{role}\" LOGIN NOINHERIT"));
    own_by(s, &role);
}

/// The function owner is a member of another role.
fn owner_member_of_a_role(s: &Scratch) {
    let role = scratch_role(s);
    s.sql(&format!(
        "CREATE ROLE \"{role}\" NOLOGIN NOINHERIT; GRANT pg_write_all_data TO \"{role}\""
    ));
    own_by(s, &role);
}

fn apply_check_then_insert(s: &Scratch) {
    s.sql(
        "DROP INDEX @S@.idx_awa_jobs_unique; \
         CREATE INDEX idx_awa_jobs_unique_plain ON @S@.job_unique_claims (unique_key); \
         GRANT SELECT ON @S@.job_unique_claims TO @O@",
    );
    patch(
        s,
        INSERT_JOB,
        &[[
            "CASE v_result.state WHEN 'scheduled' THEN 0 ELSE 1 END) = 1 THEN".to_owned(),
            "CASE v_result.state WHEN 'scheduled' THEN 0 ELSE 1 END) = 1 THEN \
             IF EXISTS (SELECT 1 FROM job_unique_claims AS c WHERE c.unique_key = p_unique_key) \
             THEN RAISE EXCEPTION 'duplicate key value violates unique constraint \"idx_awa_jobs_unique\"' \
             USING ERRCODE = '23505', CONSTRAINT = 'idx_awa_jobs_unique'; END IF;"
                .to_owned(),
        ]],
    );
}

/// `sql::<suite>::…` → `<suite>`.
fn suite_of(case: &str) -> Option<&str> {
    case.strip_prefix("sql::")?.split("::").next()
}

/// How much of the kill matrix a run proves (see the file's opening comment).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Exact,
    Caught,
}

fn mode() -> Mode {
    match std::env::var("AWA_MUTANTS").as_deref() {
        Err(_) | Ok("" | "exact") => Mode::Exact,
        Ok("caught") => Mode::Caught,
        Ok(other) => panic!("AWA_MUTANTS={other}: the modes are exact and caught"),
    }
}

fn check(m: &Mutant) {
    let s = Scratch::install(&dsn(), "mut");
    apply(m, &s);
    // The runner takes one filter: caught mode runs once per suite of the row.
    let filters: Vec<String> = match mode() {
        Mode::Exact => vec!["sql::".to_owned()],
        Mode::Caught => m.killed_by.iter().map(|k| format!("sql::{k}::")).collect(),
    };
    let mut failed = Vec::new();
    for filter in &filters {
        let (out, report) = run_with_report(&s, &[filter.as_str()]);
        let failed_here = cases_with(&report, "failed");
        let errored = cases_with(&report, "errored");
        assert!(
            errored.is_empty(),
            "mutant {} ({filter}): a mutant is a finding, not a harness error: {errored:?}\n\
             stderr: {}",
            m.name,
            text(&out.stderr)
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "mutant {} not caught by {filter} (exit code); failed: {failed_here:?}\nstderr: {}",
            m.name,
            text(&out.stderr)
        );
        failed.extend(failed_here);
    }
    drop_scratch_roles(&s);
    let got: BTreeSet<&str> = failed.iter().filter_map(|n| suite_of(n)).collect();
    let want: BTreeSet<&str> = m.killed_by.iter().map(String::as_str).collect();
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
    for prefix in &m.must_fail {
        assert!(
            failed.iter().any(|n| n.starts_with(prefix.as_str())),
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
            out.push_str(if m.killed_by.iter().any(|k| k == suite) {
                " ✗ |"
            } else {
                " |"
            });
        }
        out.push('\n');
    }
    let classes: BTreeSet<&str> = ms.iter().map(|m| m.class.as_str()).collect();
    out.push_str(&format!(
        "\n{} mutants in {} classes; every mutant is killed (✗ = the suite has a failed case \
         on it).\n\n{END}",
        ms.len(),
        classes.len()
    ));
    out
}

fn kill_matrix_doc_is_current() {
    let ms = table();
    let mut names = BTreeSet::new();
    for m in &ms {
        assert!(names.insert(m.name.as_str()), "duplicate mutant {}", m.name);
        assert!(
            !m.killed_by.is_empty(),
            "mutant {} is killed by nothing",
            m.name
        );
        assert!(!m.steps.is_empty(), "mutant {} changes nothing", m.name);
        for s in &m.killed_by {
            assert!(
                SUITES.contains(&s.as_str()),
                "mutant {}: unknown suite {s}",
                m.name
            );
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

/// docs/contract.md §12.4: the suites call the functions under test with the callers'
/// settings, and those settings are what catch an `insert_job` whose stored `run_at` depends
/// on the caller's time zone: with `--plain-sessions` (on a server whose default zone is UTC)
/// the same mutant passes. The provenance names the settings either way.
fn callers_settings_catch_a_zone_dependent_run_at() {
    let m = table()
        .into_iter()
        .find(|m| m.name == "run_at_in_the_callers_zone")
        .expect("the mutant run_at_in_the_callers_zone is in the table");
    let s = Scratch::install(&dsn(), "tz");
    let utc_server = scalar(&s.dsn, "SELECT (EXTRACT(timezone FROM now()) = 0)::text") == "true";
    apply(&m, &s);
    let (out, report) = run_with_report(&s, &["sql::payload::"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        report["provenance"]["extra"]["caller_session"],
        "TimeZone=Asia/Kathmandu; DateStyle=SQL, DMY; IntervalStyle=iso_8601"
    );
    let (out, report) = run_with_report(&s, &["--plain-sessions", "sql::payload::"]);
    assert!(report["provenance"]["extra"]["caller_session"]
        .as_str()
        .unwrap()
        .contains("--plain-sessions"));
    if utc_server {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
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
    let ms: &'static [Mutant] = Box::leak(table().into_boxed_slice());
    let mut tests: Vec<(String, Gate, support::TestFn)> = vec![(
        "kill_matrix_doc_is_current".to_owned(),
        Gate::None,
        Box::new(kill_matrix_doc_is_current),
    )];
    tests.push((
        "callers_settings_catch_a_zone_dependent_run_at".to_owned(),
        Gate::Dsn,
        Box::new(callers_settings_catch_a_zone_dependent_run_at),
    ));
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
