//! `awa-conformance fuzz`: a seeded fuzz of the reference finds nothing and leaves the database
//! as found; a wrong database or adapter is found, and the printed vector, fed back with
//! `--replay`, reproduces the disagreement on the wrong one and passes on the reference.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use std::time::{Duration, Instant};

use awa_conformance_runner::exit::{HARNESS, INTERRUPTED, NONCONFORMANT, SUCCESS, USAGE};
use serde_json::Value;
use support::{dsn, main_with, run, scalar, spawn, text, Gate, Scratch};

/// Every fuzz run here is a few seconds; only a hang reaches this.
const BOUND_SECS: u64 = 240;

fn example_adapter() -> String {
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/adapters/python/adapter.py");
    format!("python3 {}", p.display())
}

fn wrong_adapter() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/long_digest_wrong.py");
    format!("python3 {}", p.display())
}

fn fuzz(args: &[&str]) -> Output {
    let mut all = vec!["fuzz"];
    all.extend_from_slice(args);
    run(&all, &[], BOUND_SECS)
}

fn db_fuzz(s: &Scratch, args: &[&str]) -> Output {
    let mut all = s.args();
    all.extend_from_slice(args);
    fuzz(&all)
}

/// The findings printed on stdout (a stream of JSON documents).
fn findings(out: &Output) -> Vec<Value> {
    serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect()
}

fn save(dir: &Path, out: &Output) -> String {
    let p = dir.join("findings.json");
    std::fs::write(&p, &out.stdout).unwrap();
    p.to_str().unwrap().to_owned()
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstderr: {}\nstdout: {}",
        out.status.code(),
        text(&out.stderr),
        text(&out.stdout)
    )
}

/// Row counts of every table of the schema.
fn snapshot(s: &Scratch) -> Vec<(String, String)> {
    s.sql(&format!(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = '{}' AND c.relkind IN ('r', 'p') ORDER BY 1",
        s.schema
    ))
    .into_iter()
    .map(|r| {
        let t = r[0].clone().unwrap();
        let n = scalar(
            &s.dsn,
            &format!("SELECT count(*) FROM \"{}\".\"{t}\"", s.schema),
        );
        (t, n)
    })
    .collect()
}

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
        "mutant anchor {from:?} not in {function}"
    );
    s.sql(&def.replace(from, to));
}

/// Fed back: the saved findings `file` reproduce on the mutant `s` (returned), and the
/// reference schema agrees with their vectors.
fn replays_on_the_mutant_only(dsn: &str, s: &Scratch, file: &str) -> Output {
    let again = db_fuzz(s, &["--replay", file]);
    assert_eq!(
        code(&again),
        Some(i32::from(NONCONFORMANT)),
        "{}",
        show(&again)
    );
    let reference = Scratch::install(dsn, "fuzzref");
    let ok = db_fuzz(&reference, &["--replay", file]);
    assert_eq!(code(&ok), Some(i32::from(SUCCESS)), "{}", show(&ok));
    again
}

fn reference_schema_fuzz_finds_nothing_and_leaves_the_database_as_found() {
    let s = Scratch::install(&dsn(), "fuzzok");
    s.sql("INSERT INTO @S@.queue_meta (queue, enqueue_shards) VALUES ('pre_existing', 8)");
    let before = snapshot(&s);
    let out = db_fuzz(&s, &["--seed", "1", "--cases", "60"]);
    assert_eq!(code(&out), Some(i32::from(SUCCESS)), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(err.contains("no disagreement (exit 0)"), "{err}");
    for family in [
        "routing_precedence",
        "concurrency_digest",
        "concurrency_shard",
        "ordering_shard",
        "canonical_json",
    ] {
        assert!(
            err.contains(&format!("{family} ")),
            "{family} not checked: {err}"
        );
    }
    assert!(out.stdout.is_empty(), "{}", show(&out));
    assert_eq!(snapshot(&s), before, "fuzz changed the database");
}

/// concurrency_shard reads the digest's first 8 bytes as a signed number: wrong for about
/// half the digests at widths that are not powers of two.
fn broken_concurrency_shard_is_found_and_its_vector_replays() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "fuzzcs");
    patch(
        &s,
        "concurrency_shard(bytea, integer)",
        "RETURN (((((v_h >> 32) & 4294967295) % p_width) * (4294967296 % p_width))\n            + ((v_h & 4294967295) % p_width)) % p_width;",
        "RETURN abs(v_h % p_width);",
    );
    let out = db_fuzz(&s, &["--seed", "3", "--cases", "40", "--max-findings", "2"]);
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    let found = findings(&out);
    assert!(!found.is_empty() && found.len() <= 2, "{}", show(&out));
    for f in &found {
        assert_eq!(f["seed"], 3);
        let case = f["case"].as_u64().unwrap();
        assert_eq!(
            f["vector"]["description"],
            format!("found by fuzz seed 3 case {case}")
        );
        assert_eq!(f["family"], "concurrency_shard", "{f}");
        assert!(f["vector"]["id"].as_str().unwrap().starts_with("cs-"));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = save(dir.path(), &out);
    let again = replays_on_the_mutant_only(&dsn, &s, &file);
    assert_eq!(findings(&again)[0]["vector"], found[0]["vector"]);
    // The same seed and case regenerate the same vector.
    let case = found[0]["case"].as_u64().unwrap().to_string();
    let one = db_fuzz(&s, &["--seed", "3", "--start", &case, "--cases", "1"]);
    assert_eq!(
        findings(&one)[0]["vector"],
        found[0]["vector"],
        "{}",
        show(&one)
    );
}

/// ordering_shard reading the hash as signed, and a concurrency_digest with the wrong tag:
/// each is found in its own family.
fn each_helper_mutant_is_found_in_its_family() {
    let dsn = dsn();
    let os = Scratch::install(&dsn, "fuzzos");
    patch(
        &os,
        "ordering_shard(bytea, integer)",
        "RETURN (((((v_h >> 32) & 4294967295) % p_width) * (4294967296 % p_width))\n            + ((v_h & 4294967295) % p_width)) % p_width;",
        "RETURN abs(v_h % p_width);",
    );
    let cd = Scratch::install(&dsn, "fuzzcd");
    patch(
        &cd,
        "concurrency_digest(bytea)",
        "6177613a636f6e63757272656e63795f6b65793a763100",
        "6177613a636f6e63757272656e63795f6b65793a763200",
    );
    for (s, family) in [(&os, "ordering_shard"), (&cd, "concurrency_digest")] {
        let out = db_fuzz(
            s,
            &["--seed", "4", "--cases", "16", "--max-findings", "100"],
        );
        assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
        assert!(
            findings(&out).iter().any(|f| f["family"] == family),
            "no {family} finding: {}",
            show(&out)
        );
    }
}

/// insert_job takes the ordering key's digest when both keys are given: only routing cases
/// with both keys present show it.
fn swapped_digest_precedence_is_found() {
    let s = Scratch::install(&dsn(), "fuzzrp");
    patch(
        &s,
        "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], bytea, \
         bit varying, bytea, bytea, jsonb)",
        "COALESCE(p_concurrency_key, p_ordering_key)",
        "COALESCE(p_ordering_key, p_concurrency_key)",
    );
    let out = db_fuzz(&s, &["--seed", "5", "--cases", "60", "--max-findings", "1"]);
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    let f = &findings(&out)[0];
    assert_eq!(f["family"], "routing_precedence", "{f}");
    let input = &f["vector"]["input"];
    assert!(
        input["ordering_key_hex"].is_string() && input["concurrency_key_hex"].is_string(),
        "{f}"
    );
}

/// insert_job turns the numbers of its args into floats (big integers lose digits): the
/// generated payloads find it in canonical_json, and the finding replays.
fn float_args_are_found_in_the_payload() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "fuzzpl");
    patch(
        &s,
        "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], bytea, \
         bit varying, bytea, bytea, jsonb)",
        "COALESCE(p_args, '{}'::jsonb),",
        "COALESCE(CASE jsonb_typeof(p_args) WHEN 'number' THEN to_jsonb((p_args #>> '{}')::float8) \
         WHEN 'object' THEN (SELECT COALESCE(jsonb_object_agg(e.k, CASE jsonb_typeof(e.v) WHEN \
         'number' THEN to_jsonb((e.v #>> '{}')::float8) ELSE e.v END), '{}'::jsonb) FROM \
         jsonb_each(p_args) AS e(k, v)) ELSE p_args END, '{}'::jsonb),",
    );
    let out = db_fuzz(&s, &["--seed", "6", "--cases", "80", "--max-findings", "1"]);
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    let found = findings(&out);
    let f = &found[0];
    assert_eq!(f["family"], "canonical_json", "{f}");
    assert!(
        f["finding"].as_str().unwrap_or_default().contains("args"),
        "the finding names the field: {f}"
    );
    let dir = tempfile::tempdir().unwrap();
    replays_on_the_mutant_only(&dsn, &s, &save(dir.path(), &out));
}

/// The engine's test producer, right or as the named fake.
fn test_producer(fake: Option<&str>) -> String {
    fake.map_or_else(|| support::test_producer(""), |f| support::fake(f, ""))
}

/// `fuzz --producer` with seed 1 for `cases` cases, stopping after `max_findings` if given.
fn producer_fuzz(s: &Scratch, producer: &str, cases: &str, max_findings: Option<&str>) -> Output {
    let mut args = vec!["--producer", producer, "--seed", "1", "--cases", cases];
    if let Some(m) = max_findings {
        args.extend(["--max-findings", m]);
    }
    db_fuzz(s, &args)
}

/// Fed back: the saved findings of `out` reproduce on the `wrong` producer, and the right one
/// passes their vectors.
fn replays_on_the_wrong_producer_only(s: &Scratch, wrong: &str, out: &Output) {
    let dir = tempfile::tempdir().unwrap();
    let file = save(dir.path(), out);
    let again = db_fuzz(s, &["--producer", wrong, "--replay", &file]);
    assert_eq!(
        code(&again),
        Some(i32::from(NONCONFORMANT)),
        "{}",
        show(&again)
    );
    let right = db_fuzz(s, &["--producer", &test_producer(None), "--replay", &file]);
    assert_eq!(code(&right), Some(i32::from(SUCCESS)), "{}", show(&right));
}

/// insert_job trims the kind: no generated args expose it, only the input class
/// kind.whitespace (docs/contract.md §16) that the fuzzer's payload cases draw in turn (the
/// third stored class travels with cases 2, 30, 58, …), so a finding shows it was applied.
fn a_class_only_mistake_is_found_through_the_drawn_class() {
    let s = Scratch::install(&dsn(), "fuzzcls");
    patch(
        &s,
        "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], bytea, \
         bit varying, bytea, bytea, jsonb)",
        "p_kind, COALESCE(p_queue, 'default'), COALESCE(p_args",
        "btrim(p_kind, E' \\t'), COALESCE(p_queue, 'default'), COALESCE(p_args",
    );
    let out = db_fuzz(&s, &["--seed", "1", "--cases", "64", "--max-findings", "1"]);
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    let found = findings(&out);
    let f = &found[0];
    assert_eq!(f["family"], "canonical_json", "{f}");
    assert!(
        f["finding"]
            .as_str()
            .unwrap_or_default()
            .contains("with input class kind.whitespace"),
        "the finding names the class: {f}"
    );
}

/// The producer fuzzer draws the same classes: a producer that trims the kind fails a generated
/// payload carrying kind.whitespace, and the findings replay (the class is drawn again from
/// its case number) on it and not on a right producer.
fn the_producer_fuzzer_draws_input_classes() {
    let s = Scratch::install(&dsn(), "fuzzpcls");
    let wrong = test_producer(Some("trim_kind"));
    let out = producer_fuzz(&s, &wrong, "64", Some("64"));
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    // Generated kinds with surrounding whitespace (unique_key vectors) are found too.
    let found = findings(&out);
    assert!(
        found.iter().any(|f| {
            let finding = f["finding"].as_str().unwrap_or_default();
            finding.starts_with("producer::payload::")
                && finding.contains("with input class kind.whitespace")
        }),
        "{}",
        show(&out)
    );
    replays_on_the_wrong_producer_only(&s, &wrong, &out);
}

fn example_adapter_fuzz_finds_nothing() {
    let out = fuzz(&[
        "--adapter",
        &example_adapter(),
        "--seed",
        "1",
        "--cases",
        "40",
    ]);
    assert_eq!(code(&out), Some(i32::from(SUCCESS)), "{}", show(&out));
    let err = text(&out.stderr);
    // Every family the example declares (all nine) was checked.
    for family in ["canonical_json", "unique_key", "partition", "move_shard"] {
        assert!(err.contains(&format!("{family} ")), "{family}: {err}");
    }
}

fn wrong_adapter_is_found_and_its_vector_replays() {
    let out = fuzz(&[
        "--adapter",
        &wrong_adapter(),
        "--seed",
        "2",
        "--cases",
        "150",
        "--max-findings",
        "1",
    ]);
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    let f = &findings(&out)[0];
    assert_eq!(f["family"], "concurrency_digest", "{f}");
    assert!(f["vector"]["input"]["key_hex"].as_str().unwrap().len() > 2048);
    let dir = tempfile::tempdir().unwrap();
    let file = save(dir.path(), &out);
    let again = fuzz(&["--adapter", &wrong_adapter(), "--replay", &file]);
    assert_eq!(
        code(&again),
        Some(i32::from(NONCONFORMANT)),
        "{}",
        show(&again)
    );
    let ok = fuzz(&["--adapter", &example_adapter(), "--replay", &file]);
    assert_eq!(code(&ok), Some(i32::from(SUCCESS)), "{}", show(&ok));
}

/// The callers' settings as the header names them (docs/contract.md §12.4).
const SETTINGS: &str = "TimeZone=Asia/Kathmandu; DateStyle=SQL, DMY; IntervalStyle=iso_8601";

/// docs/contract.md §12.4: fuzz calls the functions under test as a run's SQL suites do, with
/// the callers' settings, so an `insert_job` whose stored args depend on the caller's time zone
/// is found; with `--plain-sessions` (on a server whose default zone is UTC) the same mutant
/// goes unseen: the settings are what find it. The header names the settings either way.
fn callers_settings_find_a_zone_dependent_payload() {
    let s = Scratch::install(&dsn(), "fuzztz");
    let utc_server = scalar(&s.dsn, "SELECT (EXTRACT(timezone FROM now()) = 0)::text") == "true";
    patch(
        &s,
        "insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], bytea, \
         bit varying, bytea, bytea, jsonb)",
        "COALESCE(p_args, '{}'::jsonb),",
        "CASE WHEN EXTRACT(timezone FROM now()) = 0 THEN COALESCE(p_args, '{}'::jsonb) \
         ELSE '{}'::jsonb END,",
    );
    let args = ["--seed", "6", "--cases", "40", "--max-findings", "1"];
    let out = db_fuzz(&s, &args);
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    assert!(
        text(&out.stderr).contains(&format!("called with {SETTINGS}")),
        "{}",
        show(&out)
    );
    assert_eq!(
        findings(&out)[0]["family"],
        "canonical_json",
        "{}",
        show(&out)
    );
    let mut plain = args.to_vec();
    plain.push("--plain-sessions");
    let out = db_fuzz(&s, &plain);
    assert!(
        text(&out.stderr).contains("called with the server's defaults (--plain-sessions)"),
        "{}",
        show(&out)
    );
    if utc_server {
        assert_eq!(code(&out), Some(i32::from(SUCCESS)), "{}", show(&out));
    }
}

/// --producer: the engine judges random enqueues; a correct producer passes and leaves the
/// database as found, one that drops the concurrency key is found, and its vector replays.
fn producer_fuzz_finds_a_wrong_producer_and_not_a_right_one() {
    let s = Scratch::install(&dsn(), "fuzzprod");
    let before = snapshot(&s);
    let roles_before = s.roles();
    let ok = producer_fuzz(&s, &test_producer(None), "8", None);
    assert_eq!(code(&ok), Some(i32::from(SUCCESS)), "{}", show(&ok));
    assert!(text(&ok.stderr).contains("unique_key "), "{}", show(&ok));
    // The producer logs in as a run's does: the run's temporary login, whose sessions start
    // with the callers' settings (named in the header), dropped at the end with its rows.
    assert!(
        text(&ok.stderr).contains(&format!("its sessions: {SETTINGS}")),
        "{}",
        show(&ok)
    );
    assert_eq!(snapshot(&s), before, "fuzz --producer changed the database");
    assert_eq!(s.roles(), roles_before, "fuzz --producer left a role");
    let wrong = test_producer(Some("drop_concurrency_key"));
    let out = producer_fuzz(&s, &wrong, "8", Some("1"));
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    let found = findings(&out);
    assert_eq!(found.len(), 1, "{}", show(&out));
    assert!(
        found[0]["finding"]
            .as_str()
            .unwrap()
            .starts_with("producer::"),
        "{}",
        found[0]
    );
    replays_on_the_wrong_producer_only(&s, &wrong, &out);
    // Generated payloads: canonical_json values become the args of payload cases, so a
    // producer that stores other args than asked is found there (ADR 0053).
    assert!(
        text(&ok.stderr).contains("canonical_json "),
        "{}",
        show(&ok)
    );
    let out = producer_fuzz(&s, &test_producer(Some("drop_args")), "8", Some("1"));
    assert_eq!(code(&out), Some(i32::from(NONCONFORMANT)), "{}", show(&out));
    let found = findings(&out);
    assert!(
        found[0]["finding"]
            .as_str()
            .is_some_and(|f| f.contains("layer: payload")),
        "{}",
        found[0]
    );
    assert_eq!(snapshot(&s), before, "fuzz --producer changed the database");
}

/// SIGINT mid-run: exit 130 and the database as found (nothing was ever committed).
fn sigint_stops_cleanly_and_leaves_the_database_as_found() {
    let s = Scratch::install(&dsn(), "fuzzint");
    let before = snapshot(&s);
    let child = spawn(
        &[
            vec!["fuzz"],
            s.args(),
            vec!["--seed", "9", "--seconds", "120"],
        ]
        .concat(),
        &[],
    );
    // Wait until the run holds a fuzz transaction open (the signal handler is in place by then).
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let open = scalar(
            &s.dsn,
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'awa-conformance' \
             AND xact_start IS NOT NULL AND datname = current_database()",
        );
        if open != "0" {
            break;
        }
        assert!(Instant::now() < deadline, "no fuzz transaction within 120s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = support::wait(child, BOUND_SECS);
    assert_eq!(code(&out), Some(i32::from(INTERRUPTED)), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("nothing was committed"),
        "{}",
        show(&out)
    );
    assert_eq!(snapshot(&s), before, "fuzz changed the database");
}

/// An adapter that dies on one kind of input: a harness error (exit 6), and the input that
/// kills it, retried alone, is printed like a finding.
fn adapter_crash_names_the_input() {
    let out = fuzz(&[
        "--adapter",
        &format!("{} crash", wrong_adapter()),
        "--seed",
        "2",
        "--cases",
        "150",
        "--adapter-timeout",
        "5",
    ]);
    assert_eq!(code(&out), Some(i32::from(HARNESS)), "{}", show(&out));
    let found = findings(&out);
    assert!(!found.is_empty(), "no culprit printed: {}", show(&out));
    for f in &found {
        assert_eq!(f["family"], "concurrency_digest", "{f}");
        assert!(f["vector"]["input"]["key_hex"].as_str().unwrap().len() > 2048);
    }
}

fn usage_errors() {
    // No budget, no target, and an adapter that checks nothing.
    let out = fuzz(&["--adapter", "true", "--seed", "1"]);
    assert_eq!(code(&out), Some(i32::from(USAGE)), "{}", show(&out));
    let out = run(&["fuzz", "--seed", "1", "--cases", "1"], &[], BOUND_SECS);
    assert_eq!(code(&out), Some(i32::from(USAGE)), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("needs a target"),
        "{}",
        show(&out)
    );
    let hello = r#"{"type":"hello","protocol":1,"capabilities":[]}"#;
    let out = fuzz(&[
        "--adapter",
        &format!("echo '{hello}'; cat >/dev/null"),
        "--seed",
        "1",
        "--cases",
        "3",
    ]);
    assert_eq!(code(&out), Some(i32::from(USAGE)), "{}", show(&out));
}

fn main() {
    let python = std::process::Command::new("python3")
        .arg("-c")
        .arg("import blake3")
        .output()
        .is_ok_and(|o| o.status.success());
    let py = || {
        Gate::When(
            python,
            "python3 with the blake3 package (scripts/install-deps.sh)",
        )
    };
    main_with(vec![
        (
            "callers_settings_find_a_zone_dependent_payload",
            Gate::Dsn,
            callers_settings_find_a_zone_dependent_payload,
        ),
        (
            "reference_schema_fuzz_finds_nothing_and_leaves_the_database_as_found",
            Gate::Dsn,
            reference_schema_fuzz_finds_nothing_and_leaves_the_database_as_found,
        ),
        (
            "broken_concurrency_shard_is_found_and_its_vector_replays",
            Gate::Dsn,
            broken_concurrency_shard_is_found_and_its_vector_replays,
        ),
        (
            "each_helper_mutant_is_found_in_its_family",
            Gate::Dsn,
            each_helper_mutant_is_found_in_its_family,
        ),
        (
            "swapped_digest_precedence_is_found",
            Gate::Dsn,
            swapped_digest_precedence_is_found,
        ),
        (
            "float_args_are_found_in_the_payload",
            Gate::Dsn,
            float_args_are_found_in_the_payload,
        ),
        (
            "a_class_only_mistake_is_found_through_the_drawn_class",
            Gate::Dsn,
            a_class_only_mistake_is_found_through_the_drawn_class,
        ),
        (
            "the_producer_fuzzer_draws_input_classes",
            Gate::Dsn,
            the_producer_fuzzer_draws_input_classes,
        ),
        (
            "example_adapter_fuzz_finds_nothing",
            py(),
            example_adapter_fuzz_finds_nothing,
        ),
        (
            "wrong_adapter_is_found_and_its_vector_replays",
            py(),
            wrong_adapter_is_found_and_its_vector_replays,
        ),
        (
            "sigint_stops_cleanly_and_leaves_the_database_as_found",
            Gate::Dsn,
            sigint_stops_cleanly_and_leaves_the_database_as_found,
        ),
        (
            "adapter_crash_names_the_input",
            py(),
            adapter_crash_names_the_input,
        ),
        (
            "producer_fuzz_finds_a_wrong_producer_and_not_a_right_one",
            Gate::Dsn,
            producer_fuzz_finds_a_wrong_producer_and_not_a_right_one,
        ),
        ("usage_errors", Gate::None, usage_errors),
    ]);
}
