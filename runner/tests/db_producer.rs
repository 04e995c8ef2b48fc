//! The producer engine end to end (`--producer CMD`) on a real PostgreSQL: a correct producer
//! passes; each wrong one (mutants of the test producer) fails with the layer named; a crash,
//! a hang and garbage are harness errors of those cases only, the run goes on; every row a
//! run created is gone afterwards; the protocol's JSON Schemas accept the real traffic.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod db_support;

use std::path::PathBuf;

use db_support::{cases_with, dsn, main_with, run_with_report, text, Gate, Scratch};
use serde_json::Value as Json;

/// The test producer (an example of this package, built by `cargo test`), found beside the
/// test binary: `target/<profile>/examples/test_producer`.
fn producer() -> String {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let p: PathBuf = dir.join("examples").join("test_producer");
    assert!(
        p.exists(),
        "{} is missing: build it with `cargo test -p awa-conformance --example test_producer` \
         (cargo test builds examples)",
        p.display()
    );
    p.display().to_string()
}

fn with(env: &str) -> String {
    format!("{env} {}", producer())
}

fn messages(report: &Json, status: &str) -> Vec<(String, String)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == status)
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["message"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// No row of any run-scoped queue is left in the schema.
fn assert_clean(s: &Scratch) {
    for table in ["contract_jobs", "queue_meta"] {
        let n = db_support::scalar(
            &s.dsn,
            &format!(
                "SELECT count(*) FROM \"{}\".{table} WHERE queue LIKE 'awa\\_conformance\\_%'",
                s.schema
            ),
        );
        assert_eq!(n, "0", "{table} keeps rows of the run");
    }
}

fn correct_producer_passes_every_case() {
    let s = Scratch::install(&dsn(), "prod_ok");
    let cmd = with("AWA_TEST_PRODUCER_TRACE=1");
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{:?}",
        text(&out.stderr),
        messages(&report, "failed").first()
    );
    let passed = cases_with(&report, "passed");
    assert!(
        passed.len() >= 700,
        "only {} producer cases passed",
        passed.len()
    );
    for family in [
        "routing_precedence",
        "ordering_shard",
        "concurrency_shard",
        "concurrency_digest",
        "unique_key",
        "unique_states",
        "partition",
        "refusal",
    ] {
        assert!(
            passed
                .iter()
                .any(|n| n.starts_with(&format!("producer::{family}::"))),
            "no {family} case passed"
        );
    }
    assert!(passed.iter().any(|n| n.ends_with("::w64")));
    assert_eq!(report["provenance"]["extra"]["producer"], "test-producer ");
    assert_clean(&s);
}

/// Run a mutant on `filter`; every failure must name `layer`; returns the failed cases.
fn mutant_fails(mutant: &str, trace: bool, filter: &str, layer: &str) -> Vec<(String, String)> {
    let s = Scratch::install(&dsn(), "prod_mut");
    let cmd = with(&format!(
        "AWA_TEST_PRODUCER_MUTANT={mutant} AWA_TEST_PRODUCER_TRACE={}",
        u8::from(trace)
    ));
    let (out, report) = run_with_report(&s, &["--producer", &cmd, filter]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{mutant}: {}",
        text(&out.stderr)
    );
    let failed = messages(&report, "failed");
    assert!(!failed.is_empty(), "{mutant} passed");
    for (name, message) in &failed {
        assert!(
            message.contains(layer),
            "{mutant}: {name} does not name layer {layer:?}: {message}"
        );
    }
    assert!(messages(&report, "errored").is_empty(), "{mutant}");
    assert_clean(&s);
    failed
}

fn producer_that_never_sends_ordering_keys_fails() {
    let failed = mutant_fails(
        "no_ordering_key",
        false,
        "producer::ordering_shard::",
        "layer: SQL call encoding",
    );
    assert_eq!(
        failed.len(),
        30 * 5,
        "every ordering key case at every width"
    );
    assert!(
        failed[0].1.contains("ordering key was not sent"),
        "{}",
        failed[0].1
    );
}

fn producer_that_drops_the_concurrency_key_fails() {
    let failed = mutant_fails(
        "drop_concurrency_key",
        false,
        "producer::concurrency_shard::",
        "concurrency key did not arrive as requested",
    );
    assert_eq!(failed.len(), 30 * 5);
}

fn producer_that_hashes_json_with_spaces_fails_at_canonical_json() {
    // With a trace the layer is named exactly.
    let failed = mutant_fails(
        "json_separators",
        true,
        "producer::unique_key::",
        "layer: canonical JSON",
    );
    assert!(failed.len() >= 10, "{}", failed.len());
    assert!(
        failed.iter().all(|(_, m)| m.contains("vector uk-")),
        "descriptions shown"
    );
}

fn producer_that_drops_the_period_bucket_fails_at_the_preimage() {
    // Without a trace the near-miss key names the mistake.
    let failed = mutant_fails(
        "drop_period",
        false,
        "producer::unique_key::",
        "without the period bucket",
    );
    assert!(!failed.is_empty());
}

fn producer_that_pads_unique_states_fails() {
    let failed = mutant_fails(
        "pad_states",
        false,
        "producer::refusal::unique_states_4_bits",
        "padded",
    );
    assert_eq!(failed.len(), 1);
    assert!(failed[0].1.contains("11110000"), "{}", failed[0].1);
}

fn crash_hang_and_garbage_are_harness_errors_and_the_run_goes_on() {
    let s = Scratch::install(&dsn(), "prod_fault");
    let started = std::time::Instant::now();
    for (mutant, filter, at_least_errored) in [
        ("crash_after=7", "producer::ordering_shard::", 10),
        ("garbage_on=::w7", "producer::concurrency_shard::", 30),
        ("hang_on=::w8", "producer::concurrency_digest::", 30),
    ] {
        let cmd = with(&format!("AWA_TEST_PRODUCER_MUTANT={mutant}"));
        let (out, report) =
            run_with_report(&s, &["--producer", &cmd, "--adapter-timeout", "1", filter]);
        let errored = messages(&report, "errored");
        let passed = cases_with(&report, "passed");
        assert_eq!(
            out.status.code(),
            Some(6),
            "{mutant}: {}",
            text(&out.stderr)
        );
        assert!(
            errored.len() >= at_least_errored,
            "{mutant}: {}",
            errored.len()
        );
        assert!(
            passed.len() >= 60,
            "{mutant}: the run went on: {}",
            passed.len()
        );
        assert!(
            errored.iter().all(|(_, m)| m.contains("restarted")),
            "{mutant}: {errored:?}"
        );
        if mutant.starts_with("crash") {
            assert!(
                errored[0].1.contains("crashing as asked"),
                "stderr attached: {}",
                errored[0].1
            );
        }
        assert!(messages(&report, "failed").is_empty(), "{mutant}");
        assert_clean(&s);
    }
    assert!(started.elapsed().as_secs() < 240, "faults are bounded");
}

fn list_does_not_start_the_producer() {
    let out = db_support::run(
        &[
            "--producer",
            "echo started >&2; exit 1",
            "--list",
            "producer::",
        ],
        &[],
        60,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    assert!(listed.contains("producer::routing_precedence::rp-"));
    assert!(listed.contains("::w64: test"));
    assert!(!text(&out.stderr).contains("started"));
}

fn schemas_accept_the_real_traffic() {
    let s = Scratch::install(&dsn(), "prod_schema");
    let dir = tempfile::tempdir().unwrap();
    let sent = dir.path().join("sent.jsonl");
    let got = dir.path().join("got.jsonl");
    let cmd = format!(
        "tee {} | AWA_TEST_PRODUCER_TRACE=1 {} | tee {}",
        sent.display(),
        producer(),
        got.display()
    );
    let (out, _) = run_with_report(&s, &["--producer", &cmd, "producer::unique_states::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol");
    let schema = |name: &str| {
        let s: Json =
            serde_json::from_str(&std::fs::read_to_string(format!("{root}/{name}")).unwrap())
                .unwrap();
        jsonschema::validator_for(&s).unwrap()
    };
    let (hello, request, answer, stop) = (
        schema("hello.schema.json"),
        schema("enqueue-request.schema.json"),
        schema("enqueue-answer.schema.json"),
        schema("stop.schema.json"),
    );
    let lines = |p: &PathBuf| -> Vec<Json> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let sent = lines(&sent);
    let got = lines(&got);
    assert!(sent.len() > 10 && got.len() > 10);
    assert!(hello.is_valid(&got[0]), "{}", got[0]);
    for a in &got[1..] {
        assert!(answer.is_valid(a), "{a}");
    }
    assert!(stop.is_valid(sent.last().unwrap()));
    for r in &sent[..sent.len() - 1] {
        assert!(request.is_valid(r), "{r}");
    }
    // The schemas are not vacuous.
    assert!(!answer.is_valid(&serde_json::json!({"seq": 1, "job_id": 2, "error": "x"})));
    assert!(!request.is_valid(&serde_json::json!({"type": "enqueue", "seq": 1})));
    assert!(!hello
        .is_valid(&serde_json::json!({"type":"hello","protocol":1,"capabilities":["enqueue"]})));
}

fn main() {
    main_with(vec![
        (
            "list_does_not_start_the_producer",
            Gate::None,
            list_does_not_start_the_producer,
        ),
        (
            "correct_producer_passes_every_case",
            Gate::Dsn,
            correct_producer_passes_every_case,
        ),
        (
            "producer_that_never_sends_ordering_keys_fails",
            Gate::Dsn,
            producer_that_never_sends_ordering_keys_fails,
        ),
        (
            "producer_that_drops_the_concurrency_key_fails",
            Gate::Dsn,
            producer_that_drops_the_concurrency_key_fails,
        ),
        (
            "producer_that_hashes_json_with_spaces_fails_at_canonical_json",
            Gate::Dsn,
            producer_that_hashes_json_with_spaces_fails_at_canonical_json,
        ),
        (
            "producer_that_drops_the_period_bucket_fails_at_the_preimage",
            Gate::Dsn,
            producer_that_drops_the_period_bucket_fails_at_the_preimage,
        ),
        (
            "producer_that_pads_unique_states_fails",
            Gate::Dsn,
            producer_that_pads_unique_states_fails,
        ),
        (
            "crash_hang_and_garbage_are_harness_errors_and_the_run_goes_on",
            Gate::Dsn,
            crash_hang_and_garbage_are_harness_errors_and_the_run_goes_on,
        ),
        (
            "schemas_accept_the_real_traffic",
            Gate::Dsn,
            schemas_accept_the_real_traffic,
        ),
    ])
}
