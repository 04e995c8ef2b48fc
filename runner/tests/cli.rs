//! End-to-end tests of the `awa-conformance` binary that need no database.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use awa_conformance_runner::exit::{DATABASE_UNAVAILABLE, USAGE, VECTORS_INVALID};
use awa_conformance_vectors::{
    content_id, embedded, render_manifest, v1, Family, EMBEDDED, V1_FILES,
};
use serde_json::Value;

mod support;

use support::{
    assert_valid_report, code, offline as run, offline_command as bin, read_json, report_schema,
    stderr, stdout,
};

/// A temp dir holding a copy of the embedded v1 files.
fn copy_v1() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in V1_FILES {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// A temp dir holding a copy of every embedded release (`v1/`, `v1.1/`): a vectors root.
fn copy_all() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (label, files) in EMBEDDED {
        let release = dir.path().join(label.rsplit('/').next().unwrap());
        std::fs::create_dir(&release).unwrap();
        for (name, text) in files {
            std::fs::write(release.join(name), text).unwrap();
        }
    }
    dir
}

/// Run with a JSON report and return (output, report).
fn run_with_report(args: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let mut all: Vec<&str> = args.to_vec();
    let path_str = path.to_str().unwrap().to_owned();
    all.extend(["--report-json", &path_str]);
    let out = run(&all);
    let report = read_json(&path);
    (out, report)
}

fn cases_with_status<'a>(report: &'a Value, status: &str) -> Vec<&'a Value> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == status)
        .collect()
}

/// Make a copy of v1 whose first `concurrency_shard` vector expects a wrong shard at width
/// 7, with its ID and the manifest recomputed so the set passes every integrity check.
/// Returns the dir and the new vector ID.
fn mutant_set() -> (tempfile::TempDir, String) {
    let dir = copy_v1();
    let name = "concurrency_shard.json";
    let mut doc = read_json(&dir.path().join(name));
    let vector = &mut doc["vectors"][0];
    let shard = vector["expected"]["shards"][6].as_u64().unwrap();
    vector["expected"]["shards"][6] = Value::from((shard + 1) % 7);
    let id = content_id(
        Family::ConcurrencyShard,
        &vector["input"],
        &vector["expected"],
    )
    .unwrap();
    vector["id"] = Value::from(id.clone());
    let mut text = serde_json::to_string_pretty(&doc).unwrap();
    text.push('\n');
    std::fs::write(dir.path().join(name), &text).unwrap();
    let files: Vec<(String, String, usize)> = V1_FILES
        .iter()
        .filter(|(n, _)| *n != "manifest.json")
        .map(|(n, _)| {
            let t = std::fs::read_to_string(dir.path().join(n)).unwrap();
            let count = serde_json::from_str::<Value>(&t).unwrap()["vectors"]
                .as_array()
                .unwrap()
                .len();
            ((*n).to_owned(), t, count)
        })
        .collect();
    std::fs::write(dir.path().join("manifest.json"), render_manifest(&files)).unwrap();
    (dir, id)
}

#[test]
fn help_lists_every_exit_code() {
    for args in [&["--help"][..], &["run", "--help"][..]] {
        let out = run(args);
        assert_eq!(code(&out), 0);
        let text = stdout(&out);
        assert!(text.contains("Exit codes:"), "{text}");
        for line in [
            "0  all selected",
            "1  nonconformant",
            "2  vector set",
            "3  usage",
            "4  cannot connect",
            "5  contract schema",
            "6  harness",
        ] {
            assert!(text.contains(line), "missing {line:?} in help");
        }
    }
}

#[test]
fn usage_errors_exit_usage() {
    assert_eq!(code(&run(&["--no-such-flag"])), USAGE);
    assert_eq!(code(&run(&["--list", "--junit", "x.xml"])), USAGE);
    let out = run(&["--no-embedded", "--format", "json", "--markdown", "-"]);
    assert_eq!(code(&out), USAGE);
    assert!(stderr(&out).contains("--markdown -"), "{}", stderr(&out));
    let out = run(&["vectors", "list", "--family", "nope"]);
    assert_eq!(code(&out), USAGE);
    assert!(stderr(&out).contains("unique_key"), "{}", stderr(&out));
    // The schema name is checked where the command line is read, before any connection.
    let long = "s".repeat(64);
    for bad in ["", long.as_str()] {
        let out = run(&["--no-embedded", "--schema", bad, "sql::"]);
        assert_eq!(code(&out), USAGE, "{}", stderr(&out));
        assert!(stderr(&out).contains("--schema"), "{}", stderr(&out));
    }
}

#[test]
fn list_prints_one_family_id_per_vector() {
    let out = run(&["--list", "--no-embedded"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let set = embedded().unwrap();
    let offline: Vec<&str> = text.lines().filter(|l| !l.starts_with("sql::")).collect();
    assert_eq!(offline.len(), set.len());
    for (family, vector) in set.iter() {
        let line = format!("{family}::{}: test", vector.id);
        assert!(offline.contains(&line.as_str()), "missing {line}");
    }
    assert!(
        text.lines().any(|l| l.starts_with("sql::")),
        "DB cases must be listed too"
    );
}

#[test]
fn exact_runs_one_trial_and_filter_selects_a_family() {
    let set = embedded().unwrap();
    let (family, vector) = set.iter().nth(3).unwrap();
    let name = format!("{family}::{}", vector.id);
    let (out, report) = run_with_report(&["--no-embedded", "--exact", &name]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(report["summary"]["total"], 1);
    assert_eq!(report["summary"]["passed"], 1);
    assert_eq!(report["cases"][0]["name"], name.as_str());
    assert!(stdout(&out).contains("running 1 test"), "{}", stdout(&out));

    let (out, report) = run_with_report(&["--no-embedded", "unique_states::"]);
    assert_eq!(code(&out), 0);
    let want = set.file(Family::UniqueStates).unwrap().vectors.len();
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), want);
    assert!(cases
        .iter()
        .all(|c| c["name"].as_str().unwrap().starts_with("unique_states::")));
    assert!(report["summary"]["filtered_out"].as_u64().unwrap() > 0);
}

#[test]
fn without_a_database_sql_cases_are_ignored_never_passed() {
    let (out, report) = run_with_report(&["--no-embedded"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(report["summary"]["ignored"].as_u64().unwrap() > 0);
    let sql: Vec<&Value> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("sql::"))
        .collect();
    assert!(!sql.is_empty());
    assert!(
        sql.iter().all(|c| c["status"] == "ignored"),
        "a SQL case was not ignored"
    );
    assert!(sql[0]["message"].as_str().unwrap().contains("--dsn"));
    assert!(stderr(&out).contains("--dsn URL"), "{}", stderr(&out));
    assert_eq!(report["provenance"]["server_version"], "n/a");
    assert_eq!(report["provenance"]["contract_version"], "n/a");
    assert_eq!(
        report["provenance"]["vectors_root_sha256"],
        embedded().unwrap().manifest.root_sha256.as_str()
    );
    assert!(stdout(&out).contains(" ignored;"));
    assert_valid_report(&report);
    // The schema check can fail: a report with an unknown status or a leaked field is rejected.
    let mut bad = report.clone();
    bad["cases"][0]["status"] = Value::from("skipped");
    assert!(!report_schema().is_valid(&bad));
    let mut bad = report.clone();
    bad["provenance"]["dsn"] = Value::from("postgres://x");
    assert!(!report_schema().is_valid(&bad));
}

#[test]
fn a_filter_matching_nothing_is_a_usage_error_naming_it() {
    let out = run(&["--no-embedded", "no_such_case_anywhere_xyz", "-q"]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("\"no_such_case_anywhere_xyz\""), "{err}");
    assert!(err.contains("--list"), "{err}");
    let out = run(&["--no-embedded", "--exact", "unique_key::", "--skip", "x"]);
    assert_eq!(code(&out), USAGE);
    assert!(
        stderr(&out).contains("(--exact), --skip \"x\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_mistyped_subcommand_gets_a_hint() {
    for (word, hint) in [
        ("verify", "vectors verify"),
        ("version", "--version"),
        ("install", "schema install"),
    ] {
        let out = run(&["--no-embedded", word]);
        assert_eq!(code(&out), USAGE, "{word}");
        assert!(
            stderr(&out).contains(&format!("did you mean `awa-conformance {hint}`")),
            "{word}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn an_empty_dsn_is_a_usage_error_never_a_fallback() {
    let out = run(&["--dsn", "", "-q"]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(stderr(&out).contains("--dsn is empty"), "{}", stderr(&out));
    let out = bin().args(["-q"]).env("DATABASE_URL", "").output().unwrap();
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("DATABASE_URL is set but empty"),
        "{}",
        stderr(&out)
    );
    let out = bin()
        .args(["-q"])
        .env("DATABASE_URL", "  ")
        .output()
        .unwrap();
    assert_eq!(code(&out), USAGE);
}

#[test]
fn require_db_turns_no_database_into_an_error() {
    let out = run(&["--no-embedded", "--require-db", "-q"]);
    assert_eq!(code(&out), DATABASE_UNAVAILABLE, "{}", stderr(&out));
    assert!(stderr(&out).contains("--require-db"), "{}", stderr(&out));
    for (value, want) in [
        ("1", DATABASE_UNAVAILABLE),
        ("true", DATABASE_UNAVAILABLE),
        ("0", 0),
    ] {
        let out = bin()
            .args(["--no-embedded", "-q"])
            .env("AWA_REQUIRE_DB", value)
            .output()
            .unwrap();
        assert_eq!(code(&out), want, "AWA_REQUIRE_DB={value}: {}", stderr(&out));
    }
    // A selection without SQL cases needs no database.
    let out = run(&["--no-embedded", "--require-db", "-q", "unique_key::"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_selection_that_checks_nothing_is_not_a_pass() {
    // Every selected case needs a database and there is none.
    let (out, report) = run_with_report(&["--no-embedded", "-q", "sql::"]);
    assert_eq!(code(&out), DATABASE_UNAVAILABLE, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was checked"),
        "{}",
        stderr(&out)
    );
    assert_eq!(report["verdict"], "error");
    assert_valid_report(&report);
    // Every selected case is not applicable (a family the adapter does not declare).
    let skips = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/skips_everything.sh");
    let cmd = format!("sh {}", skips.display());
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &cmd,
        "-q",
        "adapter::move_shard::",
    ]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(stderr(&out).contains("not applicable"), "{}", stderr(&out));
}

#[test]
fn reports_are_written_when_the_database_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("s.md");
    let junit = dir.path().join("j.xml");
    let (out, report) = run_with_report(&[
        "--dsn",
        "postgres://alice@127.0.0.1:1/awa",
        "--markdown",
        md.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "-q",
        "sql::",
    ]);
    assert_eq!(code(&out), DATABASE_UNAVAILABLE, "{}", stderr(&out));
    assert_eq!(report["exit_code"], 4);
    assert_eq!(report["verdict"], "error");
    assert!(
        report["run_errors"][0]
            .as_str()
            .unwrap()
            .contains("cannot connect"),
        "{report}"
    );
    assert_valid_report(&report);
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .contains("error (exit 4"));
    assert!(std::fs::read_to_string(&junit)
        .unwrap()
        .contains("awa-conformance"));
}

#[test]
fn test_threads_zero_is_a_usage_error() {
    let out = run(&["--no-embedded", "--test-threads", "0", "-q"]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--test-threads 0"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn version_prints_kit_contract_and_root_hash() {
    for flag in ["--version", "-V"] {
        let out = run(&[flag]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains(&format!("awa-conformance {}", env!("CARGO_PKG_VERSION"))),
            "{text}"
        );
        assert!(text.contains("contract v1 (revision 1.2)"), "{text}");
        let v1_root = v1().unwrap().manifest.root_sha256;
        assert!(
            text.contains(&format!("vectors v1 root_sha256 {v1_root}")),
            "{text}"
        );
        let newest = embedded().unwrap().manifest.root_sha256;
        assert!(
            text.contains(&format!("vectors v1.1 root_sha256 {newest}")),
            "{text}"
        );
    }
}

#[test]
fn help_hides_libtest_flags_that_mean_nothing_here() {
    let text = stdout(&run(&["--help"]));
    for hidden in [
        "--nocapture",
        "--show-output",
        "--logfile",
        "--include-ignored",
        "--bench",
    ] {
        assert!(!text.contains(hidden), "{hidden} shown in --help");
    }
    for shown in [
        "--exact",
        "--skip",
        "--list",
        "--test-threads",
        "--case-timeout",
        "--require-db",
    ] {
        assert!(text.contains(shown), "{shown} missing from --help");
    }
    // Hidden, not removed: scripts written for libtest keep working.
    let out = run(&["--no-embedded", "--nocapture", "-q", "unique_key::"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn tampered_vector_dir_exits_2_naming_file_and_vector() {
    let dir = copy_v1();
    let path = dir.path().join("unique_key.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let vector = &doc["vectors"][2];
    let id = vector["id"].as_str().unwrap();
    let hex = vector["expected"]["unique_key_hex"].as_str().unwrap();
    let flipped_first = if hex.starts_with('0') { "1" } else { "0" };
    let flipped = format!("{flipped_first}{}", &hex[1..]);
    assert_eq!(
        text.matches(hex).count(),
        1,
        "the hex must be unique in the file"
    );
    std::fs::write(&path, text.replace(hex, &flipped)).unwrap();

    let dir_str = dir.path().to_str().unwrap();
    for args in [
        vec!["--no-embedded", "--vectors-dir", dir_str],
        vec!["vectors", "verify", "--dir", dir_str],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), VECTORS_INVALID, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("unique_key.json"), "{err}");
        assert!(err.contains(id), "{err}");
        assert_eq!(err.lines().count(), 1, "one clear line: {err}");
    }
}

#[test]
fn missing_vector_dir_exits_2() {
    let out = run(&["--no-embedded", "--vectors-dir", "/nonexistent/awa-vectors"]);
    assert_eq!(code(&out), VECTORS_INVALID);
    assert!(
        stderr(&out).contains("/nonexistent/awa-vectors"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn vectors_verify_and_regenerate_check_pass_on_the_committed_set() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let v1 = root.join("v1");
    let v11 = root.join("v1.1");
    let (root, v1, v11) = (
        root.to_str().unwrap(),
        v1.to_str().unwrap(),
        v11.to_str().unwrap(),
    );
    for args in [
        vec!["vectors", "verify"],
        vec!["vectors", "verify", "--dir", root],
        vec!["vectors", "verify", "--dir", v1],
        vec!["vectors", "verify", "--dir", v11],
        vec!["vectors", "regenerate", "--check"],
        vec!["vectors", "regenerate", "--check", "--dir", root],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    }
    let out = run(&["vectors", "verify"]);
    let text = stdout(&out);
    assert!(
        text.contains(&embedded().unwrap().manifest.root_sha256),
        "{text}"
    );
    assert!(
        text.contains(
            "v1 (root_sha256 ae61d3c909c9aa4f9770c386b6ec2a6d5b819a1dd14a35da1edb9359296efecb)"
        ),
        "{text}"
    );
    assert!(text.contains("2 errata"), "{text}");
    // One release's directory is not a vectors root for regenerate.
    let out = run(&["vectors", "regenerate", "--check", "--dir", v1]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
}

#[test]
fn regenerate_check_fails_on_a_modified_copy_and_regenerate_repairs_it() {
    let dir = copy_all();
    let path = dir.path().join("v1.1").join("move_shard.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen("\"description\": \"", "\"description\": \"edited ", 1),
    )
    .unwrap();
    let dir_str = dir.path().to_str().unwrap();
    let out = run(&["vectors", "regenerate", "--check", "--dir", dir_str]);
    assert_eq!(code(&out), VECTORS_INVALID);
    assert!(stderr(&out).contains("move_shard.json"), "{}", stderr(&out));

    let out = run(&["vectors", "regenerate", "--dir", dir_str]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run(&["vectors", "regenerate", "--check", "--dir", dir_str]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn vectors_list_text_and_json() {
    let set = embedded().unwrap();
    let out = run(&["vectors", "list", "--family", "move_shard"]);
    assert_eq!(code(&out), 0);
    let want = set.iter().filter(|(f, _)| *f == Family::MoveShard).count();
    assert!(want > set.file(Family::MoveShard).unwrap().vectors.len());
    assert_eq!(stdout(&out).lines().count(), want);
    assert!(stdout(&out)
        .lines()
        .all(|l| l.starts_with("move_shard::ms-")));

    let out = run(&["vectors", "list", "--format", "json"]);
    assert_eq!(code(&out), 0);
    let items: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(items.as_array().unwrap().len(), set.len());
    let items = items.as_array().unwrap();
    assert!(items.iter().any(|i| i["status"] == "informative"));
    assert!(items.iter().any(|i| i["expected_error"] == true));
    // The errata's corrected text is what is shown.
    let empty_kind = items.iter().find(|i| i["id"] == "uk-426a7aea6bba").unwrap();
    assert!(!empty_kind["description"]
        .as_str()
        .unwrap()
        .contains("23514"));
    assert!(empty_kind["erratum"].as_str().unwrap().contains("23514"));
}

#[test]
fn a_corrupted_expectation_with_valid_integrity_fails_its_trial() {
    let (dir, id) = mutant_set();
    let dir_str = dir.path().to_str().unwrap();
    let junit = tempfile::NamedTempFile::new().unwrap();
    let md = tempfile::NamedTempFile::new().unwrap();
    let (out, report) = run_with_report(&[
        "--no-embedded",
        "--vectors-dir",
        dir_str,
        "--junit",
        junit.path().to_str().unwrap(),
        "--markdown",
        md.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let name = format!("concurrency_shard::{id}");
    let text = stdout(&out);
    assert!(text.contains(&format!("---- {name} ----")), "{text}");
    assert!(text.contains("expected.shards[6]"), "{text}");
    let failed = cases_with_status(&report, "failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["name"], name.as_str());
    assert!(!failed[0]["expected"].is_null() && !failed[0]["actual"].is_null());
    assert_eq!(report["verdict"], "nonconformant");
    assert_eq!(report["exit_code"], 1);
    assert_valid_report(&report);

    // JUnit parses and carries the failure with expected/actual.
    let xml = std::fs::read_to_string(junit.path()).unwrap();
    let parsed = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(parsed.failures, 1);
    let offline = parsed
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "offline")
        .unwrap();
    let case = offline
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == name)
        .unwrap();
    match &case.status {
        quick_junit::TestCaseStatus::NonSuccess { message, .. } => {
            let message = message.as_ref().unwrap().as_str();
            assert!(
                message.contains("expected:") && message.contains("actual:"),
                "{message}"
            );
        }
        other => panic!("not a failure: {other:?}"),
    }
    let sql = parsed
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "sql")
        .unwrap();
    assert!(sql
        .test_cases
        .iter()
        .all(|c| matches!(c.status, quick_junit::TestCaseStatus::Skipped { .. })));

    let md = std::fs::read_to_string(md.path()).unwrap();
    assert!(md.contains("nonconformant") && md.contains(&name), "{md}");

    // verify treats the same set as invalid: the core does not reproduce the vector.
    let out = run(&["vectors", "verify", "--dir", dir_str]);
    assert_eq!(code(&out), VECTORS_INVALID);
    assert!(stderr(&out).contains(&id), "{}", stderr(&out));
}

fn write_xf(dir: &Path, body: &str) -> String {
    let path = dir.join("xf.json");
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn expected_failures_file_errors_exit_usage() {
    let dir = tempfile::tempdir().unwrap();
    let xf = write_xf(
        dir.path(),
        r#"{"version": 1, "expected_failures": [{"id": "unique_key::uk-000000000000", "reason": "x"}]}"#,
    );
    let out = run(&["--no-embedded", "--expected-failures", &xf]);
    assert_eq!(code(&out), USAGE);
    assert!(
        stderr(&out).contains("unique_key::uk-000000000000"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("xf.json"), "{}", stderr(&out));

    let set = v1().unwrap();
    let (family, vector) = set.iter().next().unwrap();
    let body = format!(
        r#"{{"version": 1, "expected_failures": [{{"id": "{family}::{}"}}]}}"#,
        vector.id
    );
    let xf = write_xf(dir.path(), &body);
    let out = run(&["--no-embedded", "--expected-failures", &xf]);
    assert_eq!(code(&out), USAGE);
    assert!(stderr(&out).contains("entry 0"), "{}", stderr(&out));
    assert!(stderr(&out).contains("reason"), "{}", stderr(&out));

    let xf = write_xf(dir.path(), "not json");
    assert_eq!(
        code(&run(&["--no-embedded", "--expected-failures", &xf])),
        USAGE
    );
}

#[test]
fn a_listed_case_that_passes_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let set = v1().unwrap();
    let (family, vector) = set.iter().next().unwrap();
    let name = format!("{family}::{}", vector.id);
    let body = format!(
        r#"{{"version": 1, "expected_failures": [{{"id": "{name}", "reason": "stale"}}]}}"#
    );
    let xf = write_xf(dir.path(), &body);
    let (out, report) = run_with_report(&["--no-embedded", "--expected-failures", &xf]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).contains(&format!("remove {name}")),
        "{}",
        stdout(&out)
    );
    let unexpected = cases_with_status(&report, "unexpected_pass");
    assert_eq!(unexpected.len(), 1);
    assert_eq!(unexpected[0]["name"], name.as_str());
    assert_valid_report(&report);
}

#[test]
fn baseline_round_trip_turns_failures_into_expected_failures() {
    let (dir, id) = mutant_set();
    let dir_str = dir.path().to_str().unwrap();
    let baseline = dir.path().join("baseline.json");
    let baseline_str = baseline.to_str().unwrap();
    let out = run(&[
        "--no-embedded",
        "--vectors-dir",
        dir_str,
        "--write-baseline",
        baseline_str,
    ]);
    assert_eq!(
        code(&out),
        1,
        "writing a baseline does not excuse the failures"
    );
    let written = read_json(&baseline);
    assert_eq!(written["version"], 1);
    let entries = written["expected_failures"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(
        entries[0]["id"],
        format!("concurrency_shard::{id}").as_str()
    );
    assert!(entries[0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("baseline: "));

    let (out, report) = run_with_report(&[
        "--no-embedded",
        "--vectors-dir",
        dir_str,
        "--expected-failures",
        baseline_str,
    ]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(cases_with_status(&report, "expected_failure").len(), 1);
    assert_eq!(report["verdict"], "conformant");
    assert_valid_report(&report);
    // An expected failure prints as xfail, never as ok.
    let name = format!("concurrency_shard::{id}");
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("test {name} ")))
        .unwrap_or_else(|| panic!("no line for {name}: {text}"));
    assert!(line.ends_with("... xfail"), "{line}");
    assert!(stderr(&out).contains(" 1 xfail,"), "{}", stderr(&out));
}

#[test]
fn markdown_appends_and_groups_failures() {
    let (dir, id) = mutant_set();
    let md = dir.path().join("summary.md");
    std::fs::write(&md, "## an earlier step\nkept").unwrap();
    let args = [
        "--no-embedded",
        "--vectors-dir",
        dir.path().to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "-q",
        "concurrency_shard::",
    ];
    assert_eq!(code(&run(&args)), 1);
    assert_eq!(code(&run(&args)), 1);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.starts_with("## an earlier step\nkept\n\n## awa-conformance: "),
        "{text}"
    );
    assert_eq!(
        text.matches("## awa-conformance: nonconformant").count(),
        2,
        "{text}"
    );
    assert!(
        text.contains("#### `concurrency_shard`: 1 failing"),
        "{text}"
    );
    assert!(
        text.contains(&format!("`concurrency_shard::{id}`")),
        "{text}"
    );
}

#[test]
fn long_byte_values_are_shortened_for_people_and_whole_in_json() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/long_answer.sh");
    let cmd = format!("sh {}", script.display());
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml");
    let md = dir.path().join("s.md");
    let (out, report) = run_with_report(&[
        "--no-embedded",
        "--adapter",
        &cmd,
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "adapter::canonical_json::",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let long = "ab".repeat(200);
    let failed = cases_with_status(&report, "failed");
    assert!(!failed.is_empty());
    assert_eq!(
        failed[0]["actual"]["canonical_hex"],
        long.as_str(),
        "JSON keeps the value"
    );
    for (what, text) in [
        ("terminal", stdout(&out)),
        ("junit", std::fs::read_to_string(&junit).unwrap()),
        ("markdown", std::fs::read_to_string(&md).unwrap()),
    ] {
        assert!(!text.contains(&long), "{what} shows the whole value");
        assert!(
            text.contains("abababababababababababababababab…abababababababababababababababab (200 bytes, sha256 "),
            "{what}: {text}"
        );
    }
}

#[test]
fn dsn_passwords_never_reach_reports_or_stderr() {
    let set = v1().unwrap();
    let (family, vector) = set.iter().next().unwrap();
    let name = format!("{family}::{}", vector.id);
    let dsn = "postgres://alice:hunter2@127.0.0.1:1/awa";
    // No SQL case selected: no connection, but the argv is recorded.
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml");
    let md = dir.path().join("s.md");
    let (out, report) = run_with_report(&[
        "--dsn",
        dsn,
        "--exact",
        &name,
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json = report.to_string();
    assert!(!json.contains("hunter2"), "{json}");
    assert!(json.contains("alice:***@127.0.0.1"), "{json}");
    assert!(!std::fs::read_to_string(&junit).unwrap().contains("hunter2"));
    assert!(!std::fs::read_to_string(&md).unwrap().contains("hunter2"));

    // A SQL case selected: the connection fails (exit 4) without printing the password.
    let out = run(&["--dsn", dsn, "sql::"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(!stderr(&out).contains("hunter2") && !stdout(&out).contains("hunter2"));
}

/// The reference Python adapter, run through `--adapter`.
fn reference_adapter() -> String {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/adapters/python/adapter.py");
    format!("python3 {}", script.display())
}

/// The reference Python adapter with one deliberate mistake: a patched copy made by
/// tests/mutants/materialise.py (the example itself has no mistake switch).
fn mutant_adapter(mutant: &str) -> String {
    let helper = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mutants/materialise.py");
    format!(
        "python3 {} --exec adapter-python {mutant}",
        helper.display()
    )
}

#[test]
fn adapter_cases_pass_for_the_reference_adapter() {
    let cmd = reference_adapter();
    let (out, report) = run_with_report(&["--no-embedded", "--adapter", &cmd, "adapter::"]);
    assert_eq!(code(&out), 0, "stderr: {}", stderr(&out));
    let passed = cases_with_status(&report, "passed");
    assert!(
        passed.iter().any(|c| c["name"]
            .as_str()
            .unwrap()
            .starts_with("adapter::ordering_shard::")),
        "no adapter ordering_shard case passed"
    );
    assert!(
        passed.len() > 900,
        "only {} adapter cases passed",
        passed.len()
    );
}

#[test]
fn a_wrong_adapter_fails_exactly_its_family() {
    let cmd = mutant_adapter("off_by_one_shard");
    let out = bin()
        .args(["--no-embedded", "--adapter", &cmd, "adapter::", "-q"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let failed: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("adapter::"))
        .collect();
    assert!(!failed.is_empty(), "no failure listed: {text}");
    assert!(
        failed
            .iter()
            .all(|l| l.starts_with("adapter::concurrency_shard::")),
        "unexpected failures: {failed:?}"
    );
}

#[test]
fn an_adapter_that_never_says_hello_is_a_harness_error() {
    let out = run(&["--no-embedded", "--adapter", "exit 0", "adapter::"]);
    assert_eq!(code(&out), 6, "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("hello"), "stderr: {}", stderr(&out));
}

/// Everything a run printed or wrote, for the password checks below.
fn all_text(out: &Output) -> String {
    format!("{}\n{}", stdout(out), stderr(out))
}

#[test]
fn a_dsn_of_any_shape_in_a_usage_error_shows_no_password() {
    // Scheme-less, another scheme, a URL where the filter goes, a DSN given to a number
    // option, and the password alone where clap quotes it (known from --dsn).
    for args in [
        &["--dsn", "alice:pw-Secret-1@db/x"][..],
        &["--dsn", "mysql://alice:pw-Secret-1@db/x"],
        &["--no-embedded", "postgres://alice:pw-Secret-1@db/x"],
        &["--no-embedded", "alice:pw-Secret-1@db"],
        &["--no-embedded", "--case-timeout", "alice:pw-Secret-1@db"],
        &["--no-embedded", "--format", "host=db password=pw-Secret-1"],
        &[
            "--dsn",
            "postgres://a:pw-Secret-1@127.0.0.1:1/x",
            "--case-timeout",
            "pw-Secret-1",
        ],
    ] {
        let out = run(args);
        assert_eq!(code(&out), USAGE, "{args:?}: {}", stderr(&out));
        let text = all_text(&out);
        assert!(!text.contains("pw-Secret-1"), "{args:?} leaked: {text}");
        assert!(text.contains("***"), "{args:?}: nothing masked: {text}");
    }
}

#[test]
fn pgpassword_never_reaches_an_error() {
    // The password alone, as an argument clap quotes back: known from the environment.
    let out = bin()
        .args(["--no-embedded", "--adapter-timeout", "env-Secret-2"])
        .env("PGPASSWORD", "env-Secret-2")
        .output()
        .unwrap();
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(!all_text(&out).contains("env-Secret-2"), "{}", stderr(&out));
}

#[test]
fn every_duration_option_refuses_an_out_of_range_value_as_usage() {
    for args in [
        &["--no-embedded", "--case-timeout", "18446744073709551615"][..],
        &["--no-embedded", "--adapter-timeout", "18446744073709551615"],
        &["run", "--no-embedded", "--case-timeout", "604801"],
        &["fuzz", "--seed", "1", "--seconds", "18446744073709551615"],
        &[
            "fuzz",
            "--seed",
            "1",
            "--cases",
            "1",
            "--adapter-timeout",
            "18446744073709551615",
        ],
    ] {
        let out = run(args);
        let err = stderr(&out);
        assert_eq!(code(&out), USAGE, "{args:?}: {err}");
        let option = args.iter().rev().nth(1).unwrap();
        assert!(
            err.contains(option),
            "{args:?} does not name {option}: {err}"
        );
        assert!(
            err.contains("604800"),
            "{args:?} does not name the maximum: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn options_before_a_subcommand_apply_to_it() {
    // Port 1 refuses at once: the options reached `schema status` when it tries to connect.
    let out = run(&[
        "--dsn",
        "postgres://nobody@127.0.0.1:1/x",
        "--schema",
        "s",
        "--producer-role",
        "r",
        "schema",
        "status",
    ]);
    let err = stderr(&out);
    assert_eq!(code(&out), DATABASE_UNAVAILABLE, "{err}");
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert!(!err.contains("cannot be used with"), "{err}");
    // An option `schema status` does not take is named as such.
    let out = run(&["--junit", "x.xml", "schema", "status"]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(stderr(&out).contains("'--junit'"), "{}", stderr(&out));
}

#[test]
fn vectors_dir_is_one_name_everywhere_and_dir_still_works() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let root = root.to_str().unwrap();
    for args in [
        ["vectors", "verify", "--vectors-dir", root],
        ["vectors", "verify", "--dir", root],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    }
    let out = run(&["vectors", "regenerate", "--check", "--vectors-dir", root]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The old spelling stays out of the help.
    let help = stdout(&run(&["vectors", "verify", "--help"]));
    assert!(help.contains("--vectors-dir"), "{help}");
    assert!(!help.contains("--dir "), "{help}");
}

#[test]
fn a_closed_stdout_ends_with_141_and_no_nothing_checked_message() {
    use std::io::{BufRead, BufReader};
    // Without a database every SQL case is ignored; more lines than a pipe holds, so the
    // runner is still writing when the reader goes away (`| head -1`).
    let mut child = bin()
        .args(["--no-embedded", "sql::"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(
        code(&out),
        awa_conformance_runner::exit::STDOUT_CLOSED,
        "{err}"
    );
    assert!(!err.contains("nothing was checked"), "{err}");
    assert!(err.contains("stdout was closed"), "{err}");
}

#[test]
fn an_expected_failures_file_with_a_byte_order_mark_loads() {
    let set = v1().unwrap();
    let (family, vector) = set.iter().next().unwrap();
    let name = format!("{family}::{}", vector.id);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("xf.json");
    std::fs::write(
        &path,
        format!(
            "\u{feff}{{\"version\": 1, \"expected_failures\": [{{\"id\": \"{}\", \"reason\": \"r\"}}]}}",
            vector.id
        ),
    )
    .unwrap();
    // The listed case passes, so the run fails (1): the file was read, not refused (3).
    let out = run(&[
        "--exact",
        &name,
        "--expected-failures",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
}

#[test]
fn a_silent_server_is_reported_with_the_bound_really_waited() {
    // Accepts the connection and never answers: only the runner's own bound ends the wait.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let holder = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            // Every connection is held (never answered) until the runner gave up; the loop
            // itself is bounded so a failing test cannot leave it behind.
            listener.set_nonblocking(true).unwrap();
            let mut sockets = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                && std::time::Instant::now() < deadline
            {
                if let Ok((socket, _)) = listener.accept() {
                    sockets.push(socket);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    let dsn = format!("host=127.0.0.1 port={port} connect_timeout=2 sslmode=disable");
    let out = run(&["--dsn", &dsn, "sql::"]);
    let err = stderr(&out);
    assert_eq!(code(&out), DATABASE_UNAVAILABLE, "{err}");
    assert!(
        err.contains("no answer within 4s (twice connect_timeout=2"),
        "{err}"
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    holder.join().unwrap();
}

/// `report html|badge|diff|compatibility` on a real run's report: the page, badge and table
/// are written; a file that is not a report is refused naming it (exit 3); the compatibility
/// check exits 1 on a stale file and 0 on a current one.
#[test]
fn report_commands_render_a_run_and_refuse_a_non_report_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let json_s = json.to_str().unwrap();
    let out = run(&[
        "--no-embedded",
        "-q",
        "unique_key::",
        "--report-json",
        json_s,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let page = dir.path().join("page");
    let out = run(&[
        "report",
        "html",
        "--out",
        page.to_str().unwrap(),
        &format!("mine={json_s}"),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(page.join("index.html")).unwrap();
    assert!(html.contains(">mine</div>"), "the label names the row");
    assert!(
        html.contains("data-count=\"44\">44 passed"),
        "the count of unique_key"
    );
    let out = run(&["report", "badge", "--out", page.to_str().unwrap(), json_s]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        page.join("awa-conformance.svg").is_file() && page.join("awa-conformance.json").is_file()
    );
    let diff = run(&["report", "diff", json_s, json_s]);
    assert_eq!(code(&diff), 0);
    assert!(
        stdout(&diff).contains("**Newly failing: 0**"),
        "{}",
        stdout(&diff)
    );
    let table = dir.path().join("compat.md");
    std::fs::write(&table, "stale").unwrap();
    let t = table.to_str().unwrap();
    let out = run(&["report", "compatibility", "--check", t, json_s]);
    assert_eq!(code(&out), 1, "a stale table fails the check");
    assert!(
        stderr(&out).contains("compat.md differs"),
        "{}",
        stderr(&out)
    );
    let fresh = run(&["report", "compatibility", json_s]);
    std::fs::write(&table, stdout(&fresh)).unwrap();
    assert_eq!(
        code(&run(&["report", "compatibility", "--check", t, json_s])),
        0
    );
    let bogus = dir.path().join("bogus.json");
    std::fs::write(&bogus, "{\"format\": \"something-else\"}").unwrap();
    let out = run(&[
        "report",
        "badge",
        "--out",
        page.to_str().unwrap(),
        bogus.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("bogus.json: not an awa-conformance JSON report"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).trim().lines().count(), 1, "{}", stderr(&out));
}
