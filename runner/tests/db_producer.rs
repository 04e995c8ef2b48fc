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

mod support;

use std::path::PathBuf;

use serde_json::Value as Json;
use support::{
    cases_with, dsn, fake, messages, run_with_report, test_producer, text, Gate, Held, Scratch,
};

/// No row of any run-scoped queue is left in the schema.
fn assert_clean(s: &Scratch) {
    for table in ["contract_jobs", "queue_meta"] {
        let n = support::scalar(
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
    let cmd = test_producer("AWA_TEST_PRODUCER_TRACE=1");
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
    assert!(passed.iter().any(|n| n == "producer::coverage"));
    assert_eq!(report["provenance"]["extra"]["producer"], "test-producer ");
    assert_clean(&s);
}

/// ADR 0047: every global-key case takes the one lock `(GLOBAL_KEY_LOCK, 0)`, whatever its
/// key. With that lock held elsewhere, the unique_key cases of a run queue up behind it (seen
/// in `pg_locks` as a waiter on exactly that lock), and once it is released they all pass.
fn global_key_cases_wait_for_the_one_lock() {
    use awa_conformance_runner::producer::steps::GLOBAL_KEY_LOCK;
    let s = Scratch::install(&dsn(), "prod_lock");
    let lock = format!("({GLOBAL_KEY_LOCK}, 0)");
    let held = Held::open(&s.dsn, &format!("SELECT pg_advisory_lock{lock}"));
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let child = support::spawn(
        &[
            s.args(),
            vec![
                "--producer",
                &test_producer(""),
                "--report-json",
                report.to_str().unwrap(),
                "-q",
                "producer::unique_key::",
            ],
        ]
        .concat(),
        &[],
    );
    let waiting = format!(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
           AND classid = {GLOBAL_KEY_LOCK}::oid AND objid = 0 AND objsubid = 2 \
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    );
    let started = std::time::Instant::now();
    while support::scalar(&s.dsn, &waiting) == "0" {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(25),
            "no case waited for the global-key lock (GLOBAL_KEY_LOCK, 0)"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    held.release(&format!("SELECT pg_advisory_unlock{lock}"));
    let out = support::wait(child, 120);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let summary = &report["summary"];
    assert!(
        summary["passed"].as_u64().unwrap() > 30 && summary["passed"] == summary["total"],
        "{summary} {:?}",
        messages(&report, "errored").first()
    );
    assert_clean(&s);
}

/// One row of runner/tests/producers/fakes.json with an `expect`: the fake run over its
/// `filter` exits 1; every failure names its layer (in the message and as the report's
/// `layer` field) and holds every `message_has` string and one of `message_has_one_of`;
/// `failed` bounds their count, `failed_cases` lists them exactly and `failed_include` names
/// some; nothing errors and no row of the run is left.
fn fake_fails(row: &Json) {
    let name = row["name"].as_str().unwrap();
    let expect = &row["expect"];
    let strings = |key: &str| -> Vec<String> {
        expect[key]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    };
    let s = Scratch::install(&dsn(), "prod_fake");
    let trace = if expect["trace"] == true {
        "AWA_TEST_PRODUCER_TRACE=1"
    } else {
        ""
    };
    let cmd = fake(name, trace);
    let filter = expect["filter"].as_str().unwrap();
    let (out, report) = run_with_report(&s, &["--producer", &cmd, filter]);
    assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stderr));
    let failed = messages(&report, "failed");
    assert!(!failed.is_empty(), "{name} passed");
    let (all, one_of) = (strings("message_has"), strings("message_has_one_of"));
    for (case, message) in &failed {
        for want in &all {
            assert!(
                message.contains(want.as_str()),
                "{name}: {case} does not say {want:?}: {message}"
            );
        }
        assert!(
            one_of.is_empty() || one_of.iter().any(|w| message.contains(w.as_str())),
            "{name}: {case} says none of {one_of:?}: {message}"
        );
    }
    // The layer is data in the report too, the one the message names.
    for case in report["cases"].as_array().unwrap() {
        if case["status"] == "failed" {
            let field = case["layer"].as_str().unwrap_or_default();
            let message = case["message"].as_str().unwrap_or_default();
            assert!(
                !field.is_empty() && message.starts_with(&format!("layer: {field}: ")),
                "{name}: {} has layer field {field:?}: {message}",
                case["name"]
            );
        }
    }
    if let Some(n) = expect["failed"]["exactly"].as_u64() {
        assert_eq!(failed.len() as u64, n, "{name}: {failed:?}");
    }
    if let Some(n) = expect["failed"]["at_least"].as_u64() {
        assert!(failed.len() as u64 >= n, "{name}: {} failed", failed.len());
    }
    let mut names: Vec<String> = failed.iter().map(|(n, _)| n.clone()).collect();
    names.sort_unstable();
    let exact = strings("failed_cases");
    assert!(exact.is_empty() || names == exact, "{name}: {names:?}");
    for want in strings("failed_include") {
        assert!(
            names.contains(&want),
            "{name}: {want} did not fail: {names:?}"
        );
    }
    assert!(messages(&report, "errored").is_empty(), "{name}");
    assert_clean(&s);
}

/// Every fake the tests name is a row of the table (the test producer refuses any other), a
/// row names a known parameter kind, and a row with no `expect` is named by some test here or
/// in another DB test, so no row is dead. The test producer's refusal is shown too.
fn every_fake_is_a_table_row_and_used() {
    let rows = support::fakes();
    let sources: String = ["db_producer.rs", "db_fuzz.rs", "db_env.rs", "db_shadow.rs"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(format!("{}/tests/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap()
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for row in &rows {
        let name = row["name"].as_str().unwrap();
        assert!(seen.insert(name), "fakes.json: {name} twice");
        assert!(
            matches!(row["takes"].as_str(), None | Some("case" | "number")),
            "fakes.json: {name} takes {}",
            row["takes"]
        );
        assert!(
            !row["what"].as_str().unwrap_or_default().is_empty(),
            "fakes.json: {name} says not what it does"
        );
        if row.get("expect").is_none() {
            let used =
                sources.contains(&format!("\"{name}\"")) || sources.contains(&format!("\"{name}="));
            assert!(
                used,
                "fakes.json: no test uses the fake {name} and it has no `expect`"
            );
        }
    }
    // A misspelt fake, a missing or an unwanted parameter: refused before anything is done.
    for (switch, says) in [
        ("drop_argz", "no fake named \"drop_argz\""),
        ("hang_on", "write hang_on=<case>"),
        ("crash_after=soon", "write crash_after=<number>"),
        ("twice=3", "takes no parameter"),
    ] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(fake(switch, ""))
            .env("AWA_CONFORMANCE_DSN", "postgres://nowhere.invalid/x")
            .env("AWA_CONFORMANCE_SCHEMA", "awa")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{switch}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{switch}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{switch}: said hello");
    }
}

/// The coverage rule (contract::judge::coverage): a producer that declares `enqueue` and
/// `errors` and then skips every case is not conformant, though no single case failed; with a
/// filter that leaves `producer::coverage` out, the same run only shows the skips.
fn producer_that_skips_what_it_declares_fails_coverage() {
    let s = Scratch::install(&dsn(), "prod_skip");
    let cmd = fake("skip_on=producer::", "");
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = messages(&report, "failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    let (name, message) = &failed[0];
    assert_eq!(name, "producer::coverage");
    assert!(
        message.contains("test-producer declares but skipped every case of enqueue (")
            && message.contains("errors ("),
        "{message}"
    );
    assert!(text(&out.stderr).contains("producer::coverage failed"));
    assert!(cases_with(&report, "not_applicable").len() >= 700);
    // Filtered out, the coverage case is not recorded: every case skipped is not a pass.
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::refusal::"]);
    assert!(!cases_with(&report, "not_applicable").is_empty());
    assert!(cases_with(&report, "passed").is_empty());
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Selected alone, no case ran: not applicable (never a pass), and nothing was checked (3).
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "--exact", "producer::coverage"]);
    assert_eq!(
        cases_with(&report, "not_applicable"),
        vec!["producer::coverage".to_owned()]
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_clean(&s);
}

/// The features rule (ADR 0062, contract::features): a producer that skips cases of a
/// mandatory feature fails the run (exit 1) with the feature and count named, though no case
/// failed; one that skips part of an optional feature passes, with that feature named as not
/// checked and the core claimed only when every core case ran. Reports and the verdict line
/// say the same.
fn skipped_features_are_named_and_a_skipped_core_feature_fails() {
    let s = Scratch::install(&dsn(), "prod_feat");
    let cmd = fake("skip_on=producer::concurrency_shard::", "");
    let dir = tempfile::tempdir().unwrap();
    let (junit, markdown) = (dir.path().join("j.xml"), dir.path().join("s.md"));
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &cmd,
            "--junit",
            junit.to_str().unwrap(),
            "--markdown",
            markdown.to_str().unwrap(),
            "producer::concurrency_shard::",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(messages(&report, "failed").is_empty(), "{stderr}");
    assert_eq!(report["verdict"], "nonconformant");
    let features = &report["features"];
    let finding = features["finding"].as_str().unwrap();
    let skipped = cases_with(&report, "not_applicable").len();
    assert!(skipped > 0);
    assert!(
        finding.contains(&format!(
            "mandatory features: concurrency-key ({skipped} of "
        )),
        "{finding}"
    );
    assert!(stderr.contains(finding), "{stderr}");
    assert_eq!(features["core"], false);
    let ck = features["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["feature"] == "concurrency-key")
        .unwrap();
    assert_eq!(ck["skipped"].as_u64(), Some(skipped as u64));
    assert!(ck["cases"].as_u64().unwrap() > ck["skipped"].as_u64().unwrap());
    assert!(
        report["cases"][0]["skipped"] == true
            && report["cases"][0]["features"][0] == "concurrency-key"
    );
    assert!(
        stderr.contains("awa-conformance: features checked: "),
        "{stderr}"
    );
    // JUnit carries the finding as a failed test case and the line as a property; Markdown
    // says both.
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(
        junit.contains("name=\"features\"") && junit.contains("features_checked"),
        "{junit}"
    );
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    assert!(
        markdown.contains("**Features checked:**")
            && markdown.contains(&format!("**Nonconformant:** {finding}"))
            && markdown.contains("| concurrency-key | yes |"),
        "{markdown}"
    );

    // One refusal case skipped of an optional feature: conformant, refusals not checked.
    let one = "producer::refusal::ordering_key_too_long";
    let cmd = fake(&format!("skip_on={one}"), "");
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let checked = report["features"]["checked"].as_str().unwrap();
    // The test producer declares no `bulk`: those cases are not applicable, not skipped.
    assert!(
        checked.starts_with("core, uniqueness, partitions; refusals not checked (1 of ")
            && checked.ends_with(" skipped), bulk not checked (13 of 13 not applicable)"),
        "{checked}"
    );
    assert_eq!(report["features"]["core"], true);
    assert!(report["features"].get("finding").is_none());
    assert!(
        stderr.contains(&format!("features checked: {checked}")),
        "{stderr}"
    );
    assert_clean(&s);
}

/// docs/contract.md §12.4: the producer's sessions start with non-default settings (a time
/// zone 5 h 45 min from UTC, day-first dates), so a producer whose stored `run_at` depends on
/// its session fails at the payload; the provenance names the settings. With
/// `--plain-sessions` the server's defaults stay, and (on a UTC server) the same
/// mistakes go unseen: the settings are what catch them.
fn session_dependent_run_at_fails_under_the_runs_session_settings() {
    let s = Scratch::install(&dsn(), "prod_tz");
    let utc_server = support::scalar(
        &s.dsn,
        "SELECT (EXTRACT(timezone FROM now()) = 0 AND current_setting('DateStyle') LIKE '%MDY')::text",
    ) == "true";
    for mutant in ["naive_run_at", "mdy_run_at"] {
        let cmd = fake(mutant, "");
        let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::payload::"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mutant}: {stderr}");
        let failed = messages(&report, "failed");
        assert!(
            failed
                .iter()
                .any(|(name, message)| name == "producer::payload::run_at_offset"
                    && message.contains("payload")),
            "{mutant}: {:?}",
            failed.first()
        );
        // Every failure is the run_at, nothing else the mutant stores.
        let other: Vec<_> = failed
            .iter()
            .filter(|(_, message)| !message.contains("stored run_at other than asked"))
            .take(3)
            .collect();
        assert!(other.is_empty(), "{mutant}: {other:?}");
        assert_eq!(
            report["provenance"]["extra"]["producer_session"],
            "TimeZone=Asia/Kathmandu; DateStyle=SQL, DMY; IntervalStyle=iso_8601"
        );
        let (out, report) = run_with_report(
            &s,
            &[
                "--producer",
                &cmd,
                "--plain-sessions",
                "producer::payload::",
            ],
        );
        assert!(report["provenance"]["extra"]["producer_session"]
            .as_str()
            .unwrap()
            .contains("--plain-sessions"));
        if utc_server {
            assert_eq!(
                out.status.code(),
                Some(0),
                "{mutant}: {}",
                text(&out.stderr)
            );
        }
    }
    // The correct producer passes under the same settings.
    let (out, _) = run_with_report(
        &s,
        &["--producer", &test_producer(""), "producer::payload::"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_clean(&s);
}

/// The producer gets its DSN twice: as written (`AWA_CONFORMANCE_DSN`) and as a URL
/// (`AWA_CONFORMANCE_DSN_URL`) for drivers that open URLs only; both log in as the run's
/// temporary role while the run lasts.
fn the_producer_gets_its_dsn_as_a_url_too() {
    let s = Scratch::install(&dsn(), "prod_url");
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    let cmd = format!(
        "printf '%s\\n%s\\n' \"$AWA_CONFORMANCE_DSN_URL\" \"$AWA_CONFORMANCE_DSN\" > {}; \
         exec {}",
        seen.display(),
        test_producer("")
    );
    let (out, _) = run_with_report(&s, &["--producer", &cmd, "producer::payload::defaults"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&seen).unwrap();
    let mut lines = written.lines();
    let (url, as_written) = (lines.next().unwrap(), lines.next().unwrap());
    assert!(url.starts_with("postgresql://"), "{url}");
    assert!(url.contains("_login:"), "the run's login role: {url}");
    assert_ne!(url, as_written);
    // Never printed: neither form reaches the run's output.
    assert!(!text(&out.stderr).contains(url) && !text(&out.stdout).contains(url));
    assert_clean(&s);
}

/// ADR 0053: a producer written for protocol 2 keeps working unchanged. It is never sent a
/// member or form its protocol does not define (the test producer fails any request that
/// carries one): the cases that need protocol 3 are not applicable with the reason, the rest
/// pass, the defaults of the fields it is not sent are judged, and the report says its
/// verdict covers metadata and max_attempts only as their defaults.
fn protocol_2_producer_keeps_working_and_is_told_what_it_lacks() {
    let s = Scratch::install(&dsn(), "prod_p2");
    let cmd = test_producer("AWA_TEST_PRODUCER_PROTOCOL=2");
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::payload::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let na = messages(&report, "not_applicable");
    let mut names: Vec<&str> = na.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "producer::payload::all",
            "producer::payload::max_attempts",
            "producer::payload::metadata",
            "producer::payload::run_at_offset"
        ],
        "{na:?}"
    );
    assert!(
        na.iter()
            .all(|(_, m)| m.contains("protocol 3 adds") && m.contains("says protocol 2")),
        "{na:?}"
    );
    assert!(cases_with(&report, "passed").len() >= 100);
    assert!(
        report["provenance"]["extra"]["producer_fields"]
            .as_str()
            .is_some_and(|f| f.starts_with("protocol 2:")
                && f.contains("metadata and max_attempts judged only as their defaults")),
        "{}",
        report["provenance"]
    );
    // The canned exchange speaks its protocol too.
    let (out, _) = run_with_report(
        &s,
        &[
            "--producer",
            &cmd,
            "--validate-producer",
            "producer::protocol",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The compact `nested` form is not sent to a protocol 2 program that does not declare it.
    let cmd = fake("nested_unknown", "");
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::unique_key::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let na = messages(&report, "not_applicable");
    assert_eq!(na.len(), 1, "{na:?}");
    assert_eq!(na[0].0, "producer::unique_key::uk-74f39082c369");
    assert!(na[0].1.contains("`nested`"), "{}", na[0].1);
    // Protocol 3 says so in the report too.
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &test_producer(""),
            "--exact",
            "producer::payload::all",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(report["provenance"]["extra"]["producer_fields"]
        .as_str()
        .is_some_and(|f| f.starts_with("protocol 3:") && f.contains("max_attempts")));
    assert_clean(&s);
}

fn crash_hang_and_garbage_are_harness_errors_and_the_run_goes_on() {
    let s = Scratch::install(&dsn(), "prod_fault");
    let started = std::time::Instant::now();
    for (mutant, filter, at_least_errored) in [
        ("crash_after=7", "producer::ordering_shard::", 10),
        ("garbage_on=::w7", "producer::concurrency_shard::", 30),
        ("hang_on=::w8", "producer::concurrency_digest::", 30),
    ] {
        let cmd = fake(mutant, "");
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

/// An answer that comes after the timeout must never be taken for the next case's: the
/// engine kills a producer after any failed request, so the late cases error by their own
/// timeout and no case is answered with another's answer (that would be a protocol error
/// "answered seq N, the outstanding request is seq M", or a wrong job: a failure).
/// The bound: the late cases answer after 2.5 s against a 1 s timeout, so they time out on
/// any machine. A case that is not late may time out too when the machine is loaded (the
/// restarted producer's start-up, its connection and prepare, then take over 1 s; seen beside
/// two full test runs): that is its own timeout, allowed, and named as such.
fn a_late_answer_never_serves_the_next_case() {
    let s = Scratch::install(&dsn(), "prod_late");
    let cmd = fake("late_on=::w7", "");
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &cmd,
            "--adapter-timeout",
            "1",
            // Timeouts in a row on a loaded machine must not stop the run: every case is asked.
            "--max-consecutive-timeouts",
            "1000",
            "producer::routing_precedence::",
        ],
    );
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let errored = messages(&report, "errored");
    assert!(
        errored.iter().any(|(n, _)| n.ends_with("::w7")),
        "no case was late: {errored:?}"
    );
    for (name, message) in &errored {
        assert!(
            message.contains("did not answer within 1s")
                || message.contains("not answered: the runner restarted"),
            "{name} errored other than by a timeout (a late answer served it?): {message}"
        );
    }
    assert!(
        messages(&report, "failed").is_empty(),
        "{:?}",
        messages(&report, "failed")
    );
    assert!(cases_with(&report, "passed").len() > errored.len());
    assert_clean(&s);
}

/// Wait (bounded) until the test producer wrote its pid file: the run has started.
fn wait_for(pidfile: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !pidfile.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the producer did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A run of the test producer under `mutant`, on the cases `filter`, in the background; it
/// writes its pid to `dir/pid` and the JSON report to `dir/r.json`.
fn background(
    s: &Scratch,
    dir: &std::path::Path,
    mutant: &str,
    filter: &str,
) -> std::process::Child {
    let cmd = fake(
        mutant,
        &format!("AWA_TEST_PRODUCER_PIDFILE={}", dir.join("pid").display()),
    );
    let report = dir.join("r.json");
    support::spawn(
        &[
            s.args(),
            vec![
                "--producer",
                &cmd,
                "--report-json",
                report.to_str().unwrap(),
                "-q",
                filter,
            ],
        ]
        .concat(),
        &[],
    )
}

/// The rows of queue `stray` (outside every run's queues): (enqueuing login, id).
fn stray_rows(s: &Scratch) -> Vec<Vec<Option<String>>> {
    s.sql("SELECT enqueued_by, id::text FROM @S@.contract_jobs WHERE queue = 'stray' ORDER BY id")
}

/// ADR 0049: what a producer commits outside the run's queues (here a job it never answers,
/// in the queue `stray`) is removed after its case, found by the run-scoped login the engine
/// gave the producer; a job another login commits into the same queue while the run goes on
/// is left alone. Before ADR 0049 the sweep went by queue name only and every stray job
/// stayed. The row-count rule sees each stray job (the run login wrote it), so every case
/// fails at the payload layer, and the clean-up is the same.
fn stray_writes_are_removed_and_other_logins_rows_kept() {
    let s = Scratch::install(&dsn(), "prod_stray");
    let dir = tempfile::tempdir().unwrap();
    let (pidfile, report) = (dir.path().join("pid"), dir.path().join("r.json"));
    let child = background(
        &s,
        dir.path(),
        "stray_on=routing_precedence",
        "producer::routing_precedence::",
    );
    wait_for(&pidfile);
    // Another login (the test's own) in the same queue, inside the run's time window.
    let other = s.sql("SELECT (@S@.insert_job('awa_conformance.probe', 'stray')).job_id::text");
    let out = support::wait(child, 300);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: Json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let failed = messages(&report, "failed");
    assert!(failed.len() > 5, "{failed:?}");
    assert!(
        failed
            .iter()
            .all(|(_, m)| m.contains("layer: payload: the producer left")),
        "{failed:?}"
    );
    let login = support::scalar(&s.dsn, "SELECT session_user::text");
    assert_eq!(
        stray_rows(&s),
        vec![vec![Some(login), other[0][0].clone()]],
        "exactly the other login's job is left in queue stray"
    );
    assert_clean(&s);
}

/// A case's verdict never depends on another case's rows (issue 20): one case leaves an extra
/// row, in its own queue (`twice_on`) or outside the run's queues (`stray_on`); that case
/// alone fails on the row count, every other case of the run passes, and nothing is left.
/// The correct run before them also shows `--timings`: a section that counts every case
/// and its producer phase, absent without the flag.
fn one_case_leaving_an_extra_row_fails_alone() {
    let s = Scratch::install(&dsn(), "prod_extra");
    let filter = "producer::routing_precedence::";
    let (out, report) =
        run_with_report(&s, &["--producer", &test_producer(""), "--timings", filter]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let passed: Vec<String> = cases_with(&report, "passed")
        .into_iter()
        .filter(|c| c != "producer::coverage")
        .collect();
    assert!(passed.len() >= 5, "{passed:?}");
    let timings = &report["timings"];
    assert_eq!(
        timings["cases"].as_u64(),
        Some(passed.len() as u64),
        "{timings}"
    );
    let phase = |name: &str| {
        timings["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == name)
            .and_then(|p| p["total_ms"].as_f64())
    };
    for name in [
        "set_up",
        "reference",
        "producer",
        "read_back",
        "judge",
        "sweep",
    ] {
        assert!(phase(name).is_some_and(|ms| ms > 0.0), "{name}: {timings}");
    }
    assert!(
        text(&out.stderr).contains("timings: "),
        "{}",
        text(&out.stderr)
    );
    let schema: Json = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("report.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let invalid: Vec<String> = jsonschema::draft202012::new(&schema)
        .unwrap()
        .iter_errors(&report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(invalid.is_empty(), "the timings report: {invalid:?}");
    let (_, plain) = run_with_report(&s, &["--producer", &test_producer(""), filter]);
    assert!(
        plain.get("timings").is_none(),
        "a section without --timings"
    );

    // A case in the middle, named whole: no other case's name contains it.
    let victim = &passed[passed.len() / 2];
    assert_eq!(
        passed
            .iter()
            .filter(|c| c.contains(victim.as_str()))
            .count(),
        1
    );
    for how in ["twice_on", "stray_on"] {
        let cmd = fake(&format!("{how}={victim}"), "");
        let (out, report) = run_with_report(&s, &["--producer", &cmd, filter]);
        assert_eq!(out.status.code(), Some(1), "{how}: {}", text(&out.stderr));
        let failed = messages(&report, "failed");
        assert_eq!(failed.len(), 1, "{how}: {failed:?}");
        assert_eq!(&failed[0].0, victim, "{how}");
        assert!(
            failed[0]
                .1
                .contains("layer: payload: the producer left 2 job rows"),
            "{how}: {}",
            failed[0].1
        );
        let others: Vec<String> = cases_with(&report, "passed")
            .into_iter()
            .filter(|c| c != "producer::coverage")
            .collect();
        assert_eq!(others.len(), passed.len() - 1, "{how}: {others:?}");
        assert!(messages(&report, "errored").is_empty(), "{how}");
        assert_clean(&s);
        assert!(
            stray_rows(&s).is_empty(),
            "{how}: the extra row outside the queues stayed"
        );
    }
}

/// ADR 0057: a producer declaring `max_in_flight` 4 is sent several requests at once (it held
/// more than one), and every verdict is the one a run sending one at a time gives
/// (`--test-threads 1`): all pass when it is right; when one case leaves an extra row, in its
/// own queue or outside the run's queues, that case alone fails with the same message, and
/// nothing is left; when it writes a job into another request's queue, the producer as a
/// whole fails; when it crashes, no case is judged nonconformant, the cases in flight error
/// naming the fault, and the run goes on.
fn several_in_flight_keep_every_verdict() {
    let s = Scratch::install(&dsn(), "prod_flight");
    let dir = tempfile::tempdir().unwrap();
    let peak = dir.path().join("peak");
    let filter = "producer::routing_precedence::";
    let four = format!(
        "AWA_TEST_PRODUCER_IN_FLIGHT=4 AWA_TEST_PRODUCER_PEAK={}",
        peak.display()
    );
    let (out, report) = run_with_report(&s, &["--producer", &test_producer(&four), filter]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let held: u64 = std::fs::read_to_string(&peak).unwrap().parse().unwrap();
    assert!(held > 1, "the producer never held more than {held} request");
    assert_eq!(
        report["provenance"]["extra"]["producer_in_flight"], "4 of max_in_flight 4",
        "{}",
        report["provenance"]
    );
    let (one_out, one) = run_with_report(
        &s,
        &[
            "--producer",
            &test_producer(&four),
            "--test-threads",
            "1",
            filter,
        ],
    );
    assert_eq!(one_out.status.code(), Some(0), "{}", text(&one_out.stderr));
    let held_alone: u64 = std::fs::read_to_string(&peak).unwrap().parse().unwrap();
    assert_eq!(
        held_alone, 1,
        "--test-threads 1 sends one request at a time"
    );
    assert_eq!(
        one["provenance"]["extra"]["producer_in_flight"],
        "1 of max_in_flight 4"
    );
    let passed = cases_with(&report, "passed");
    assert_eq!(passed, cases_with(&one, "passed"));
    assert!(passed.len() >= 20, "{passed:?}");
    // Each passed case keeps its own producer output, with four in flight too: the line the
    // test producer writes for its request names the case, and no other case's line is
    // there. Stderr and answers are two pipes, so a line may arrive after its case ended and
    // is then kept back: nearly every case has its own, none has another's.
    for r in [&report, &one] {
        let (mut cases, mut own) = (0_usize, 0_usize);
        for case in r["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            if case["status"] != "passed" || name == "producer::coverage" {
                continue;
            }
            let output = case["output"].as_str().unwrap_or_default();
            cases += 1;
            if output.contains(&format!(" for {name}")) {
                own += 1;
            }
            let others: Vec<&str> = output
                .lines()
                .filter(|l| l.contains(" for ") && !l.ends_with(&format!(" for {name}")))
                .collect();
            assert!(
                others.is_empty(),
                "{name}: lines of other cases: {others:?}"
            );
        }
        assert!(
            own * 10 >= cases * 9,
            "only {own} of {cases} cases kept their own line"
        );
    }
    assert_clean(&s);

    let victim = passed
        .iter()
        .filter(|c| *c != "producer::coverage")
        .nth(passed.len() / 2)
        .unwrap();
    for how in ["twice_on", "stray_on"] {
        let cmd = fake(&format!("{how}={victim}"), "AWA_TEST_PRODUCER_IN_FLIGHT=4");
        let (out, report) = run_with_report(&s, &["--producer", &cmd, filter]);
        assert_eq!(out.status.code(), Some(1), "{how}: {}", text(&out.stderr));
        let failed = messages(&report, "failed");
        assert_eq!(failed.len(), 1, "{how}: {failed:?}");
        assert_eq!(&failed[0].0, victim, "{how}");
        assert!(
            failed[0]
                .1
                .contains("layer: payload: the producer left 2 job rows"),
            "{how}: {}",
            failed[0].1
        );
        assert_eq!(
            cases_with(&report, "passed").len(),
            passed.len() - 1,
            "{how}: every other case passes"
        );
        assert!(messages(&report, "errored").is_empty(), "{how}");
        assert_clean(&s);
        assert!(stray_rows(&s).is_empty(), "{how}: the stray row stayed");
    }

    // A job written into the queue of another request in flight: the case it lands in fails
    // beside others and passes alone, and so does the writer; the producer as a whole fails
    // (producer::coverage) and names the case touched, with how to find the writer.
    let cmd = fake(
        &format!("cross_on={victim}"),
        "AWA_TEST_PRODUCER_IN_FLIGHT=4",
    );
    let (out, report) = run_with_report(&s, &["--producer", &cmd, "producer::"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = messages(&report, "failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "producer::coverage");
    assert!(
        failed[0]
            .1
            .contains("the request at fault could not be named")
            && failed[0]
                .1
                .contains("rerun the same selection with the same --test-threads")
            && failed[0]
                .1
                .contains("other request(s) in flight on 4 lanes"),
        "{}",
        failed[0].1
    );
    assert!(messages(&report, "errored").is_empty());
    assert_clean(&s);
    // producer::coverage not selected: a run error, never a silent pass.
    let (out, report) = run_with_report(&s, &["--producer", &cmd, filter]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert!(
        report["run_errors"]
            .to_string()
            .contains("the request at fault could not be named"),
        "{}",
        report["run_errors"]
    );
    assert_clean(&s);

    // A wrong answer beside others (the job stored in another queue, and answered) is the
    // case's own: it fails naming the requests in flight with it and how to reproduce it, and
    // every later case runs alone.
    let cmd = fake(
        &format!("misroute_on={victim}"),
        "AWA_TEST_PRODUCER_IN_FLIGHT=4",
    );
    let (out, report) = run_with_report(&s, &["--producer", &cmd, filter]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = messages(&report, "failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(&failed[0].0, victim);
    for part in [
        "stored in queue \"stray\"",
        "in flight on 4 lanes",
        "every later case ran alone",
        "with the same --test-threads",
    ] {
        assert!(
            failed[0].1.contains(part),
            "{part:?} missing: {}",
            failed[0].1
        );
    }
    assert_clean(&s);

    let cmd = fake("crash_after=7", "AWA_TEST_PRODUCER_IN_FLIGHT=4");
    let (out, report) = run_with_report(&s, &["--producer", &cmd, filter]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert!(
        messages(&report, "failed").is_empty(),
        "a crash is no finding"
    );
    let errored = messages(&report, "errored");
    assert!(!errored.is_empty());
    assert!(
        errored.iter().all(|(_, m)| m.contains("crashed")),
        "{errored:?}"
    );
    assert!(
        cases_with(&report, "passed").len() > passed.len() / 2,
        "the run went on after each restart"
    );
    assert_clean(&s);
}

/// ADR 0049, a producer given a DSN of its own (`--producer-dsn`): the engine knows its login
/// but not that only this run uses it, so it removes the jobs the producer answered that this
/// login enqueued (here misrouted into the queue `stray`; each such case fails on its queue),
/// and leaves the job the same login committed there before the run, and another login's.
fn answered_jobs_outside_the_run_are_removed_by_id_and_login() {
    let s = Scratch::install(&dsn(), "prod_misroute");
    let before = s.sql(
        "SELECT (@S@.insert_job('awa_conformance.probe', 'stray')).job_id::text; \
         INSERT INTO @S@.contract_jobs (kind, queue, args, state, priority, max_attempts, \
             run_at, created_at, metadata, tags, enqueue_shard, route_source, enqueued_by) \
         VALUES ('awa_conformance.probe', 'stray', '{}', 'available', 2, 25, now(), now(), \
             '{}', '{}', 0, 'rotor', 'another_login') RETURNING id::text",
    );
    let cmd = fake("misroute_on=rp-9e6748299535", "");
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &cmd,
            "--producer-dsn",
            &s.dsn,
            "producer::routing_precedence::",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = messages(&report, "failed");
    assert!(!failed.is_empty());
    assert!(
        failed
            .iter()
            .all(|(n, m)| n.contains("rp-9e6748299535") && m.contains("stored in queue \"stray\"")),
        "{failed:?}"
    );
    let login = support::scalar(&s.dsn, "SELECT session_user::text");
    assert_eq!(
        stray_rows(&s),
        vec![
            vec![Some(login), before[0][0].clone()],
            vec![Some("another_login".to_owned()), before[1][0].clone()],
        ],
        "only the answered jobs left queue stray"
    );
    assert_clean(&s);
}

/// A run deletes only what it created (README, "What a run leaves"): a producer answering the
/// id of a job that existed before the run, enqueued by the very login the producer was
/// given, fails its case, and the job and its unique claim are still there afterwards, with
/// the run's own login and with `--producer-dsn` (where the engine removes answered jobs of
/// that login written since the run began, ADR 0049).
fn an_answered_foreign_job_is_never_removed() {
    let s = Scratch::install(&dsn(), "prod_foreign");
    let key = "0123456789abcdef0123456789abcdef";
    let id = s.sql(&format!(
        "SELECT (@S@.insert_job('send_email', 'before_run', p_unique_key => '\\x{key}'::bytea, \
         p_unique_states => B'11111000'::varbit)).job_id::text"
    ))[0][0]
        .clone()
        .unwrap();
    let kept = || {
        s.sql(&format!(
            "SELECT (SELECT count(*) FROM @S@.contract_jobs WHERE id = {id} AND queue = 'before_run')::text, \
                    (SELECT count(*) FROM @S@.job_unique_claims WHERE job_id = {id})::text"
        ))
    };
    let cmd = fake(&format!("foreign_id={id}"), "");
    let filter = "producer::routing_precedence::rp-9e6748299535";
    for own_dsn in [false, true] {
        let mut args = vec!["--producer", cmd.as_str()];
        if own_dsn {
            args.extend(["--producer-dsn", s.dsn.as_str()]);
        }
        args.push(filter);
        let (out, report) = run_with_report(&s, &args);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let failed = messages(&report, "failed");
        assert!(
            !failed.is_empty() && failed.iter().all(|(n, _)| n.starts_with(filter)),
            "--producer-dsn {own_dsn}: {failed:?}"
        );
        assert_eq!(
            kept(),
            vec![vec![Some("1".to_owned()), Some("1".to_owned())]],
            "--producer-dsn {own_dsn}: the run removed a job (or its claim) it did not create"
        );
        assert_clean(&s);
    }
}

/// ADR 0049: a job of another login that holds the unique key a case needs (a leftover, in a
/// queue no run owns) is never removed by the run; the case errors naming the job, its queue,
/// the key and the enqueuing login, with a statement that removes it; after running exactly
/// that statement the case passes.
fn a_foreign_job_holding_the_key_is_named_with_its_removal() {
    let s = Scratch::install(&dsn(), "prod_block");
    // uk-12500e5131e3 ("kind only") is a global key: the claim ignores the queue.
    let key = "bee8bfbcd9d48e51f79059a523039018";
    let id = s.sql(&format!(
        "SELECT (@S@.insert_job('send_email', 'elsewhere', p_unique_key => '\\x{key}'::bytea, \
         p_unique_states => B'11111000'::varbit)).job_id::text"
    ))[0][0]
        .clone()
        .unwrap();
    let filter = "producer::unique_key::uk-12500e5131e3";
    let (out, report) = run_with_report(&s, &["--producer", &test_producer(""), filter]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let errored = messages(&report, "errored");
    assert_eq!(errored.len(), 1, "{errored:?}");
    let message = &errored[0].1;
    let login = support::scalar(&s.dsn, "SELECT session_user::text");
    for part in [
        format!("job {id} in queue 'elsewhere'"),
        format!("unique key {key}"),
        format!("enqueued by login '{login}'"),
    ] {
        assert!(message.contains(&part), "{part:?} missing from: {message}");
    }
    assert_eq!(
        s.sql("SELECT count(*)::text FROM @S@.contract_jobs WHERE queue = 'elsewhere'"),
        vec![vec![Some("1".to_owned())]],
        "the run removed a job that is not its own"
    );
    let statement = message
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("WITH claim AS (DELETE"))
        .unwrap_or_else(|| panic!("no removal statement in: {message}"));
    support::sql(&s.dsn, statement);
    let (out, report) = run_with_report(&s, &["--producer", &test_producer(""), filter]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(cases_with(&report, "passed"), vec![filter.to_owned()]);
    assert_clean(&s);
}

/// A producer that stops answering does not cost a timeout per case: after
/// `--max-consecutive-timeouts` timeouts in a row the run stops as a harness error (exit 6,
/// verdict error) naming the count, every other case is recorded as not run (or, if it was
/// already waiting for the producer, as not asked), the report is written and no row is left.
/// A row per number of requests in flight: with several (ADR 0057) a timeout's restart cuts
/// the other requests in flight off, and those are no answers, so the count of timeouts in a
/// row still reaches the limit and the run stops within a few cycles of that many requests.
const HANGING: [(&str, &str, u64); 2] = [
    // (name, the producer's environment, at most this many cases errored)
    ("one_in_flight", "", 2 + 4),
    ("four_in_flight", "AWA_TEST_PRODUCER_IN_FLIGHT=4", 3 * 4 + 4),
];

fn a_hanging_producer_stops_the_run(env: &str, max_errored: u64) {
    let s = Scratch::install(&dsn(), "prod_hang");
    let cmd = fake("hang_on=producer::", env);
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &cmd,
            "--adapter-timeout",
            "1",
            "--max-consecutive-timeouts",
            "2",
            "producer::routing_precedence::",
        ],
    );
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert_eq!(report["verdict"], "error");
    let timed_out = messages(&report, "errored")
        .into_iter()
        .filter(|(_, m)| m.contains("did not answer within 1s"))
        .count();
    assert!(timed_out >= 2, "{timed_out}");
    let errors = report["run_errors"].to_string();
    assert!(
        errors.contains("on 2 requests in a row") && errors.contains("--max-consecutive-timeouts"),
        "{errors}"
    );
    let summary = &report["summary"];
    let (total, ignored, errored) = (
        summary["total"].as_u64().unwrap(),
        summary["ignored"].as_u64().unwrap(),
        summary["errored"].as_u64().unwrap(),
    );
    assert!(total > 100, "{summary}");
    assert_eq!(ignored + errored, total, "{summary}");
    assert!(
        errored <= max_errored,
        "only cases already waiting are not asked: {summary}"
    );
    assert!(messages(&report, "ignored")
        .iter()
        .all(|(_, m)| m.contains("not run: the producer stopped answering")));
    assert_clean(&s);
}

/// A request in flight when the runner restarts the producer for another request's timeout is
/// cut off: it errors saying so, naming the other request's fault, never "the producer
/// crashed" (it did not), and the run goes on.
fn a_request_cut_off_by_another_timeout_says_so() {
    let s = Scratch::install(&dsn(), "prod_cutoff");
    // Every other answer takes 300 ms, so when the hanging request's 2 s bound passes the
    // other lanes' requests are in flight (between two requests a lane spends microseconds).
    let cmd = fake(
        "hang_on=rp-9e6748299535",
        "AWA_TEST_PRODUCER_IN_FLIGHT=4 AWA_TEST_PRODUCER_DELAY_MS=300",
    );
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &cmd,
            "--adapter-timeout",
            "2",
            "producer::routing_precedence::",
        ],
    );
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let errored = messages(&report, "errored");
    assert!(
        errored
            .iter()
            .any(|(n, m)| n.contains("rp-9e6748299535") && m.contains("did not answer within")),
        "{errored:?}"
    );
    let cut_off = errored
        .iter()
        .filter(|(n, _)| !n.contains("rp-9e6748299535"))
        .count();
    assert!(cut_off > 0, "no request was cut off: {errored:?}");
    for (name, message) in &errored {
        assert!(!message.contains("crashed"), "{name}: {message}");
        if !name.contains("rp-9e6748299535") {
            assert!(
                message.contains("cut this request off")
                    && message.contains("did not answer within"),
                "{name}: {message}"
            );
        }
    }
    assert!(cases_with(&report, "passed").len() > 20, "the run went on");
    assert_clean(&s);
}

fn list_does_not_start_the_producer() {
    let out = support::run(
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
        test_producer(""),
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

/// The library entry: `producer::check` with the subprocess producer, expected failures
/// applied by the one matcher (a listed failure is xfail, a listed pass is unexpected_pass).
fn library_check_applies_expected_failures() {
    use awa_conformance_runner::expected::{Entry, ExpectedFailures};
    use awa_conformance_runner::outcome::Status;
    use awa_conformance_runner::producer::{self, process, CheckOptions};
    use std::sync::Arc;

    let s = Scratch::install(&dsn(), "prod_lib");
    let db = producer::connect(&s.dsn, &s.schema, &s.producer).unwrap();
    let p = process::SubprocessProducer::new(
        &fake("pad_states", ""),
        vec![
            (producer::DSN_ENV.to_owned(), s.dsn.clone()),
            (producer::SCHEMA_ENV.to_owned(), s.schema.clone()),
        ],
        process::ProcessLimits::default(),
    );
    let entry = |id: &str| Entry {
        id: id.to_owned(),
        reason: "test".to_owned(),
    };
    let expected = ExpectedFailures::from_entries(vec![
        entry("refusal::unique_states_4_bits"),
        entry("producer::refusal::duplicate"),
    ]);
    let options = CheckOptions {
        filter: Some(Arc::new(|n: &str| n.starts_with("producer::refusal::"))),
        ..CheckOptions::default()
    };
    let set = awa_conformance_vectors::embedded().unwrap();
    let results = producer::check(Box::new(p), &db, &set, expected, &options).unwrap();
    let status = |n: &str| {
        results
            .iter()
            .find(|r| r.name == format!("producer::refusal::{n}"))
            .map(|r| r.status)
            .unwrap_or_else(|| panic!("no result for {n}: {results:?}"))
    };
    assert_eq!(status("unique_states_4_bits"), Status::ExpectedFailure);
    assert_eq!(status("duplicate"), Status::UnexpectedPass);
    assert_eq!(status("unique_states_9_bits"), Status::Failed);
    assert_eq!(status("ordering_key_too_long"), Status::Passed);
    assert!(
        results.iter().all(|r| r.name != "producer::stop"),
        "stopped cleanly"
    );
    db.cleanup().unwrap();
    assert_clean(&s);
}

fn validate_producer_checks_the_protocol_alone() {
    let s = Scratch::install(&dsn(), "prod_val");
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &test_producer(""),
            "--validate-producer",
            "producer::",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        cases_with(&report, "passed").len(),
        5,
        "{:?}",
        cases_with(&report, "passed")
    );
    let (out, report) = run_with_report(
        &s,
        &[
            "--producer",
            &fake("pad_states", ""),
            "--validate-producer",
            "producer::",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        cases_with(&report, "failed"),
        ["producer::protocol::refusal"]
    );
    let (out, _) = run_with_report(
        &s,
        &[
            "--producer",
            "echo nope",
            "--validate-producer",
            "producer::",
        ],
    );
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert_clean(&s);
}

/// The function-adapter messages too: real requests and stop from the runner, real answers
/// from a shell adapter that skips every vector.
fn function_schemas_accept_the_real_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let sent = dir.path().join("sent.jsonl");
    let got = dir.path().join("got.jsonl");
    let cmd = format!(
        "echo '{{\"type\":\"hello\",\"protocol\":1,\"capabilities\":[\"move_shard\",\"errors\"]}}' \
         | tee {got}; tee {sent} | sed -n 's/.*\"seq\":\\([0-9]*\\).*/{{\"seq\":\\1,\"skipped\":true,\"reason\":\"x\"}}/p' \
         | tee -a {got}",
        got = got.display(),
        sent = sent.display()
    );
    let out = support::run(
        &["--no-embedded", "--adapter", &cmd, "adapter::", "-q"],
        &[],
        120,
    );
    // Every vector skipped: adapter::coverage fails, as it must.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol");
    let schema = |name: &str| {
        let s: Json =
            serde_json::from_str(&std::fs::read_to_string(format!("{root}/{name}")).unwrap())
                .unwrap();
        jsonschema::validator_for(&s).unwrap()
    };
    let lines = |p: &PathBuf| -> Vec<Json> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (sent, got) = (lines(&sent), lines(&got));
    assert!(sent.len() > 600, "{}", sent.len());
    let (request, answer, stop, hello) = (
        schema("function-request.schema.json"),
        schema("function-answer.schema.json"),
        schema("stop.schema.json"),
        schema("hello.schema.json"),
    );
    assert!(hello.is_valid(&got[0]));
    assert!(stop.is_valid(sent.last().unwrap()));
    for r in &sent[..sent.len() - 1] {
        assert!(request.is_valid(r), "{r}");
    }
    for a in &got[1..] {
        assert!(answer.is_valid(a), "{a}");
    }
    assert!(!answer.is_valid(&serde_json::json!({"seq": 1, "output": {}, "error": "x"})));
}

/// SIGINT while the producer hangs: the run stops within a bound (exit 130), the producer's
/// process is gone, and no row of the run is left.
fn sigint_while_the_producer_hangs_stops_cleanly() {
    let s = Scratch::install(&dsn(), "prod_int");
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let cmd = fake(
        "hang_on=::w64",
        &format!("AWA_TEST_PRODUCER_PIDFILE={}", pidfile.display()),
    );
    let child = support::spawn(
        &[
            s.args(),
            vec![
                "--producer",
                &cmd,
                "--adapter-timeout",
                "600",
                "-q",
                "producer::ordering_shard::",
            ],
        ]
        .concat(),
        &[],
    );
    // The first w64 case comes within a few cases of the start; then the producer sleeps.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !pidfile.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(3));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = support::wait(child, 60);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(started.elapsed().as_secs() < 30, "stopped within a bound");
    // Gone, or a zombie waiting for a parent that is not the runner (sh -c may fork; the
    // group is killed whole, and the orphan is reaped by whoever adopts it).
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|st| {
            st.rsplit(") ")
                .next()
                .map(|r| r.chars().next().unwrap_or('?'))
        });
    assert!(
        matches!(state, None | Some('Z' | 'X')),
        "the producer process {pid} still runs (state {state:?})"
    );
    assert_clean(&s);
}

/// SIGINT while a request is outstanding: the case in flight gets its (late, correct) answer
/// and is judged, passed, as ADR 0030 says; only the cases not started are not run.
fn sigint_lets_the_producer_case_in_flight_finish() {
    let s = Scratch::install(&dsn(), "prod_fin");
    let dir = tempfile::tempdir().unwrap();
    // Every case answers after 2.5 s: a signal 1 s after the start meets a request in flight.
    let child = background(
        &s,
        dir.path(),
        "late_on=producer::",
        "producer::ordering_shard::",
    );
    wait_for(&dir.path().join("pid"));
    std::thread::sleep(std::time::Duration::from_secs(1));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = support::wait(child, 60);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let report = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    let report: Json = serde_json::from_str(&report).unwrap();
    let errored = cases_with(&report, "errored");
    assert!(
        errored.is_empty(),
        "the case in flight was recorded errored instead of finishing: {errored:?}"
    );
    assert!(
        !cases_with(&report, "passed").is_empty(),
        "the case in flight was not judged: {report}"
    );
    assert_clean(&s);
}

fn main() {
    let named: Vec<(&'static str, Gate, fn())> = vec![
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
            "producer_that_skips_what_it_declares_fails_coverage",
            Gate::Dsn,
            producer_that_skips_what_it_declares_fails_coverage,
        ),
        (
            "skipped_features_are_named_and_a_skipped_core_feature_fails",
            Gate::Dsn,
            skipped_features_are_named_and_a_skipped_core_feature_fails,
        ),
        (
            "session_dependent_run_at_fails_under_the_runs_session_settings",
            Gate::Dsn,
            session_dependent_run_at_fails_under_the_runs_session_settings,
        ),
        (
            "the_producer_gets_its_dsn_as_a_url_too",
            Gate::Dsn,
            the_producer_gets_its_dsn_as_a_url_too,
        ),
        (
            "a_request_cut_off_by_another_timeout_says_so",
            Gate::Dsn,
            a_request_cut_off_by_another_timeout_says_so,
        ),
        (
            "an_answered_foreign_job_is_never_removed",
            Gate::Dsn,
            an_answered_foreign_job_is_never_removed,
        ),
        (
            "one_case_leaving_an_extra_row_fails_alone",
            Gate::Dsn,
            one_case_leaving_an_extra_row_fails_alone,
        ),
        (
            "several_in_flight_keep_every_verdict",
            Gate::Dsn,
            several_in_flight_keep_every_verdict,
        ),
        (
            "protocol_2_producer_keeps_working_and_is_told_what_it_lacks",
            Gate::Dsn,
            protocol_2_producer_keeps_working_and_is_told_what_it_lacks,
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
        (
            "function_schemas_accept_the_real_traffic",
            Gate::None,
            function_schemas_accept_the_real_traffic,
        ),
        (
            "sigint_lets_the_producer_case_in_flight_finish",
            Gate::Dsn,
            sigint_lets_the_producer_case_in_flight_finish,
        ),
        (
            "sigint_while_the_producer_hangs_stops_cleanly",
            Gate::Dsn,
            sigint_while_the_producer_hangs_stops_cleanly,
        ),
        (
            "library_check_applies_expected_failures",
            Gate::Dsn,
            library_check_applies_expected_failures,
        ),
        (
            "a_late_answer_never_serves_the_next_case",
            Gate::Dsn,
            a_late_answer_never_serves_the_next_case,
        ),
        (
            "global_key_cases_wait_for_the_one_lock",
            Gate::Dsn,
            global_key_cases_wait_for_the_one_lock,
        ),
        (
            "validate_producer_checks_the_protocol_alone",
            Gate::Dsn,
            validate_producer_checks_the_protocol_alone,
        ),
        (
            "stray_writes_are_removed_and_other_logins_rows_kept",
            Gate::Dsn,
            stray_writes_are_removed_and_other_logins_rows_kept,
        ),
        (
            "answered_jobs_outside_the_run_are_removed_by_id_and_login",
            Gate::Dsn,
            answered_jobs_outside_the_run_are_removed_by_id_and_login,
        ),
        (
            "a_foreign_job_holding_the_key_is_named_with_its_removal",
            Gate::Dsn,
            a_foreign_job_holding_the_key_is_named_with_its_removal,
        ),
        (
            "every_fake_is_a_table_row_and_used",
            Gate::None,
            every_fake_is_a_table_row_and_used,
        ),
    ];
    let mut tests: Vec<(String, Gate, support::TestFn)> = named
        .into_iter()
        .map(|(name, gate, f)| (name.to_owned(), gate, Box::new(f) as support::TestFn))
        .collect();
    for (name, env, max_errored) in HANGING {
        tests.push((
            format!("a_hanging_producer_stops_the_run::{name}"),
            Gate::Dsn,
            Box::new(move || a_hanging_producer_stops_the_run(env, max_errored)),
        ));
    }
    // One trial per fake with an `expect` (runner/tests/producers/fakes.json): fake::NAME.
    for row in support::fakes()
        .into_iter()
        .filter(|r| r.get("expect").is_some())
    {
        let name = format!("fake::{}", row["name"].as_str().unwrap());
        tests.push((name, Gate::Dsn, Box::new(move || fake_fails(&row))));
    }
    support::main_with_boxed(tests)
}
