//! End-to-end tests of the reports (`--report-json`, `--junit`, `--markdown`) that need no
//! database: valid whatever the values, checked before the run, all written when one fails,
//! and a JSON exit code that is the process's.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use awa_conformance_runner::exit::{HARNESS, NONCONFORMANT, SUCCESS, USAGE};
use serde_json::Value;

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_awa-conformance"));
    // A stray DATABASE_URL / PG* must not change these tests; AWA_REQUIRE_DB (set in CI)
    // would turn the database-less runs below into errors.
    for (key, _) in std::env::vars() {
        if key == "DATABASE_URL" || key.starts_with("PG") || key == "AWA_REQUIRE_DB" {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn code(out: &Output) -> u8 {
    u8::try_from(out.status.code().unwrap()).unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_valid_report(report: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("report.schema.json");
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&read_json(&path))
        .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "report does not validate: {errors:?}");
}

/// What a JUnit consumer checks first: only XML 1.0 characters, and a document that parses.
fn assert_well_formed_junit(path: &Path) -> quick_junit::Report {
    let xml = std::fs::read_to_string(path).unwrap();
    let is_xml_char = |c: char| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
    if let Some((at, c)) = xml.char_indices().find(|(_, c)| !is_xml_char(*c)) {
        panic!(
            "U+{:04X} at byte {at} of {} is not XML 1.0",
            u32::from(c),
            path.display()
        );
    }
    quick_junit::Report::deserialize_from_str(&xml).unwrap()
}

/// The hostile adapter (tests/hostile/hostile_values.py), with its argument.
fn hostile_adapter(arg: &str) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/hostile_values.py");
    format!("python3 {} {arg}", script.display())
}

/// The name of one offline case that passes.
fn one_passing_case() -> String {
    let out = run(&["--list", "--no-embedded", "canonical_json::"]);
    let line = stdout(&out).lines().next().unwrap().to_owned();
    line.trim_end_matches(": test").to_owned()
}

#[test]
fn a_run_failing_every_family_with_hostile_values_writes_valid_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit, md) = (
        dir.path().join("r.json"),
        dir.path().join("j.xml"),
        dir.path().join("s.md"),
    );
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &hostile_adapter(""),
        "--report-json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "-q",
        "adapter::",
    ]);
    assert_eq!(code(&out), NONCONFORMANT, "{}", stderr(&out));
    let report = read_json(&json);
    assert_valid_report(&report);
    // Every vector case failed, and the JSON report keeps the values whole.
    let cases = report["cases"].as_array().unwrap();
    let vector_cases: Vec<&Value> = cases
        .iter()
        .filter(|c| c["name"] != "adapter::coverage")
        .collect();
    assert!(vector_cases.len() > 1000, "{}", vector_cases.len());
    assert!(vector_cases.iter().all(|c| c["status"] == "failed"));
    let text = report.to_string();
    assert!(
        text.contains('\u{FFFF}') && text.contains("\\u0000"),
        "JSON dropped a value"
    );
    assert!(
        cases.iter().any(|c| c["actual"]["big"]
            .as_str()
            .is_some_and(|s| s.len() > 1_000_000)),
        "the 1 MB value is not kept whole"
    );
    let parsed = assert_well_formed_junit(&junit);
    let failures = parsed
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .filter(|c| matches!(c.status, quick_junit::TestCaseStatus::NonSuccess { .. }))
        .count();
    assert!(failures >= vector_cases.len(), "{failures}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    // Values reach JUnit as JSON text (controls already escaped there), the adapter's name
    // as it said it (U+FFFF and U+0001): both shown, neither dropped.
    assert!(
        xml.contains("\\u{FFFF}") && xml.contains("hostile\\u{FFFF}\\u{0001}"),
        "not shown visibly"
    );
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .contains("nonconformant"));
}

#[test]
fn a_lone_surrogate_from_an_adapter_still_gives_well_formed_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("j.xml"));
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &hostile_adapter("lone-surrogate"),
        "--report-json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "-q",
        "adapter::",
    ]);
    // An answer that is not JSON is a harness error, reported with the line.
    assert_eq!(code(&out), HARNESS, "{}", stderr(&out));
    let report = read_json(&json);
    assert_valid_report(&report);
    assert_eq!(report["exit_code"], 6);
    assert!(report.to_string().contains("udc00"), "{report}");
    assert_well_formed_junit(&junit);
}

#[test]
fn a_report_path_that_cannot_be_written_is_a_usage_error_before_any_case_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let json = dir.path().join("r.json");
    let case = one_passing_case();
    for (option, path) in [
        ("--junit", dir.path().join("no-such-dir/j.xml")),
        ("--junit", dir.path().to_owned()),
        ("--markdown", file.join("s.md")),
        ("--report-json", dir.path().join("missing/r.json")),
    ] {
        let mut args = vec!["--exact", &case, option, path.to_str().unwrap()];
        let json_str = json.to_str().unwrap().to_owned();
        if option != "--report-json" {
            args.extend(["--report-json", &json_str]);
        }
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(code(&out), USAGE, "{option} {}: {err}", path.display());
        assert!(
            err.contains(&format!("{option} {}", path.display())),
            "names neither option nor path: {err}"
        );
        assert!(!err.contains("conformant"), "a verdict was printed: {err}");
        assert!(
            !stdout(&out).contains("running"),
            "a case ran: {}",
            stdout(&out)
        );
        assert!(
            !json.exists(),
            "a report was written for a run that did not happen"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    // The probe of a new file leaves nothing behind when the run then stops without reports
    // (here at the expected-failures file, read after the reports were checked).
    let fresh = dir.path().join("fresh.xml");
    let missing = dir.path().join("no-such-xfail.json");
    let out = run(&[
        "--exact",
        &case,
        "--junit",
        fresh.to_str().unwrap(),
        "--expected-failures",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(!fresh.exists(), "the probe left {}", fresh.display());
}

#[test]
fn two_reports_naming_the_same_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let existing = d.join("old.json");
    std::fs::write(&existing, "{}").unwrap();
    std::fs::hard_link(&existing, d.join("hard.xml")).unwrap();
    std::os::unix::fs::symlink(&existing, d.join("soft.xml")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let case = one_passing_case();
    let same = |a: &Path, b: &Path| [a.to_owned(), b.to_owned()];
    for [json, other] in [
        same(&d.join("new.json"), &d.join("sub/../new.json")),
        same(&existing, &d.join("soft.xml")),
        same(&existing, &d.join("hard.xml")),
        same(&d.join("r"), &d.join("./r")),
    ] {
        for option in ["--junit", "--markdown", "--write-baseline"] {
            let out = run(&[
                "--exact",
                &case,
                "--report-json",
                json.to_str().unwrap(),
                option,
                other.to_str().unwrap(),
            ]);
            let err = stderr(&out);
            assert_eq!(code(&out), USAGE, "{option} {}: {err}", other.display());
            assert!(
                err.contains("--report-json") && err.contains(option) && err.contains("same file"),
                "{err}"
            );
        }
    }
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "{}");
    assert!(!d.join("new.json").exists() && !d.join("r").exists());
    // Distinct files are fine, and all three are written.
    let out = run(&[
        "--exact",
        &case,
        "--report-json",
        d.join("a.json").to_str().unwrap(),
        "--junit",
        d.join("a.xml").to_str().unwrap(),
        "--markdown",
        d.join("a.md").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), SUCCESS, "{}", stderr(&out));
    for name in ["a.json", "a.xml", "a.md"] {
        assert!(d.join(name).is_file(), "{name}");
    }
}

#[test]
fn every_report_is_written_when_one_fails_and_the_json_states_the_exit_code() {
    // /dev/full accepts the up-front check (it opens) and fails every write (ENOSPC): the
    // failure comes at the end of a conformant run, when it is too late for a usage error.
    let case = one_passing_case();
    for failing in ["--junit", "--markdown"] {
        let dir = tempfile::tempdir().unwrap();
        let (json, junit, md) = (
            dir.path().join("r.json"),
            dir.path().join("j.xml"),
            dir.path().join("s.md"),
        );
        let path_of = |option: &str, own: &Path| {
            if option == failing {
                "/dev/full".to_owned()
            } else {
                own.to_str().unwrap().to_owned()
            }
        };
        let out = run(&[
            "--exact",
            &case,
            "--report-json",
            json.to_str().unwrap(),
            "--junit",
            &path_of("--junit", &junit),
            "--markdown",
            &path_of("--markdown", &md),
        ]);
        let err = stderr(&out);
        assert_eq!(code(&out), HARNESS, "{failing}: {err}");
        assert!(
            err.contains(&format!("{failing} /dev/full: the report was not written")),
            "{err}"
        );
        assert!(!err.contains("conformant (exit 0)"), "{err}");
        assert!(err.contains("error (exit 6)"), "{err}");
        let report = read_json(&json);
        assert_valid_report(&report);
        assert_eq!(report["exit_code"], 6, "{report}");
        assert_eq!(report["verdict"], "error", "{report}");
        assert!(
            report["run_errors"][0]
                .as_str()
                .unwrap()
                .contains("/dev/full"),
            "{report}"
        );
        // The other report was written too (the Markdown summary before the JUnit file, so
        // it cannot know that the JUnit write is going to fail; the JSON report comes last).
        if failing == "--junit" {
            assert!(std::fs::read_to_string(&md)
                .unwrap()
                .contains("## awa-conformance: "));
        } else {
            assert_well_formed_junit(&junit);
        }
    }
}

#[test]
fn markdown_on_stdout_comes_whole_after_the_trial_lines() {
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &hostile_adapter(""),
        "--markdown",
        "-",
        "adapter::",
    ]);
    assert_eq!(code(&out), NONCONFORMANT, "{}", stderr(&out));
    let text = stdout(&out);
    let start = text
        .find("## awa-conformance: ")
        .expect("no Markdown on stdout");
    let (trials, markdown) = text.split_at(start);
    assert!(trials.contains("\ntest result: FAILED."), "{trials}");
    assert!(
        !markdown
            .lines()
            .any(|l| l.starts_with("test ") || l.starts_with("failures:")),
        "trial output after the Markdown: {markdown}"
    );
    assert_eq!(text.matches("## awa-conformance: ").count(), 1);
}
