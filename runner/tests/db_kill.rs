//! A runner connection killed mid-run (`pg_terminate_backend`) must end the run quickly with
//! the harness exit code (6), never hang and never count as a conformance finding.
//!
//! Own test binary: it terminates every backend named `awa-conformance`, so no other runner
//! may be active in this process (cargo runs test binaries one after another).

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod support;

use support::{main_with, Gate};

use std::time::{Duration, Instant};

use support::{dsn, spawn, sql, text, wait, Scratch};

fn killed_connection_is_a_harness_error_not_a_hang() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "kill");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let child = spawn(
        &[
            s.args(),
            vec!["--report-json", report.to_str().unwrap(), "-q", "sql::"],
        ]
        .concat(),
        &[],
    );
    // Kill runner backends once a case is running (an insert_job call is in flight or a
    // case transaction is open), i.e. after preflight. Only those: `query` keeps the last
    // statement of an idle pooled connection too, and killing one of those is harmless (the
    // pool drops it and the run rightly passes), which made this test flaky under load.
    let started = Instant::now();
    let mut killed = 0usize;
    while started.elapsed() < Duration::from_secs(60) && killed == 0 {
        // Only this test's own database: other tests' runs may be going on beside it.
        let rows = sql(
            &s.dsn,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = 'awa-conformance' AND pid <> pg_backend_pid() \
               AND datname = current_database() \
               AND (state = 'idle in transaction' \
                    OR (state = 'active' AND query LIKE '%insert_job($1%'))",
        );
        killed = rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(killed > 0, "never saw a runner backend to kill");
    let out = wait(child, 120);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(6),
        "a killed connection must give the harness exit code; stderr: {stderr}\nstdout: {}",
        text(&out.stdout)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["status"] == "errored"),
        "no errored case recorded"
    );
}

fn main() {
    main_with(vec![(
        "killed_connection_is_a_harness_error_not_a_hang",
        Gate::Dsn,
        killed_connection_is_a_harness_error_not_a_hang,
    )]);
}
