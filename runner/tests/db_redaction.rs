//! Passwords never leave a run: a producer that prints its DSN (`AWA_CONFORMANCE_DSN`) and
//! `PGPASSWORD` to stderr gets its stderr quoted in the case messages, and every copy of it
//! (JSON, JUnit and Markdown reports, the baseline, stdout, stderr) shows `***` instead.

// Test code: a panic is the failure report, so unwrap/index/panic are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use support::{dsn, main_with, run, text, Gate, Scratch};

use awa_conformance_runner::pg::conninfo::parse_text;

/// The test DSN as a key=value string with a password: the cluster's own when the DSN has
/// one (it must still log in), else a made-up one (the test cluster trusts loopback).
fn dsn_with_password() -> (String, String) {
    let mut pairs = parse_text(&dsn()).unwrap();
    let password = match pairs.iter().find(|(k, _)| k == "password") {
        Some((_, p)) => p.clone(),
        None => {
            pairs.push(("password".to_owned(), "dsn-Secret-7f3a".to_owned()));
            "dsn-Secret-7f3a".to_owned()
        }
    };
    let quote = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
    let text = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", quote(v)))
        .collect::<Vec<_>>()
        .join(" ");
    (text, password)
}

fn a_producer_printing_its_secrets_leaks_none_of_them() {
    let (dsn, password) = dsn_with_password();
    let s = Scratch::install(&dsn, "redact");
    let env_password = "pgpassword-Secret-9c1e";
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (json, junit, md, baseline) = (path("r.json"), path("r.xml"), path("r.md"), path("b.json"));
    // Dies before its hello, after printing what a careless producer would.
    let producer =
        "echo \"my dsn: $AWA_CONFORMANCE_DSN; PGPASSWORD=$PGPASSWORD; raw $PGPASSWORD\" \
                    >&2; exit 7";
    let out = run(
        &[
            s.args(),
            vec![
                "--producer",
                producer,
                "--report-json",
                &json,
                "--junit",
                &junit,
                "--markdown",
                &md,
                "--write-baseline",
                &baseline,
                "producer::unique_key::",
            ],
        ]
        .concat(),
        &[("PGPASSWORD", env_password)],
        300,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    let report = std::fs::read_to_string(&json).unwrap();
    // The producer's stderr did reach the report, masked.
    assert!(
        report.contains("raw ***"),
        "producer stderr not in the report: {report}"
    );
    for (what, body) in [
        ("JSON report", report),
        ("JUnit report", std::fs::read_to_string(&junit).unwrap()),
        ("Markdown report", std::fs::read_to_string(&md).unwrap()),
        (
            "baseline",
            std::fs::read_to_string(&baseline).unwrap_or_default(),
        ),
        ("stdout", text(&out.stdout)),
        ("stderr", stderr),
    ] {
        for secret in [password.as_str(), env_password] {
            assert!(!body.contains(secret), "{what} shows a password: {body}");
        }
    }
}

fn main() {
    main_with(vec![(
        "a_producer_printing_its_secrets_leaks_none_of_them",
        Gate::Dsn,
        a_producer_printing_its_secrets_leaks_none_of_them,
    )]);
}
