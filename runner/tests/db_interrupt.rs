//! SIGINT, SIGTERM and a closed stdout stop a run cleanly: the documented exit code, every
//! requested report written with verdict `interrupted`, and the database and cluster exactly
//! as they were (row counts of every table of the schema, the roles of the test's world, the
//! database's schemas), even when the signal arrives while a case is blocked mid-query and
//! after the run created its login role and committed rows.
//!
//! A run that fails before its trials (exit 5 here; exit 4 is in tests/cli.rs, exit 6 in
//! tests/adapter_hostile.rs) still writes every requested report.
//!
//! Each test compares its own world (database and roles, support's `Scratch`), so they
//! run beside other tests.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use awa_conformance_runner::exit::{INTERRUPTED, STDOUT_CLOSED, TERMINATED};
use serde_json::Value;
use support::{dsn, main_with, scalar, spawn, sql, text, Gate, Held, Scratch};

/// Everything a run could leave behind: row counts of every table of the schema, the roles
/// of the test's world, every schema of its database.
fn snapshot(s: &Scratch) -> Vec<String> {
    let mut out: Vec<String> = s
        .sql(&format!(
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
            format!("table {t}: {n} rows")
        })
        .collect();
    assert!(out.len() >= 3, "expected the reference tables: {out:?}");
    out.push(format!("roles of the world: {}", s.roles().join(",")));
    out.push(format!(
        "schemas: {}",
        scalar(
            &s.dsn,
            "SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace"
        )
    ));
    out
}

/// Whether the run has created its login role and committed its queue widths.
fn run_objects_exist(s: &Scratch) -> bool {
    let login = s
        .roles()
        .iter()
        .any(|r| r.starts_with("awa_conformance_") && r.ends_with("_login"));
    let rows =
        s.sql("SELECT count(*)::text FROM @S@.queue_meta WHERE queue LIKE 'awa\\_conformance\\_%'");
    login && rows[0][0].as_deref() != Some("0")
}

fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(child: &Child, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_child(child);
    rustix::process::kill_process(pid, sig).unwrap();
}

/// Report paths of one run.
struct Reports {
    _dir: tempfile::TempDir,
    json: String,
    junit: String,
    markdown: String,
}

impl Reports {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
        let (json, junit, markdown) = (path("r.json"), path("r.xml"), path("r.md"));
        Self {
            _dir: dir,
            json,
            junit,
            markdown,
        }
    }

    fn args(&self) -> Vec<&str> {
        vec![
            "--report-json",
            &self.json,
            "--junit",
            &self.junit,
            "--markdown",
            &self.markdown,
        ]
    }

    /// Every report exists and says `interrupted`; returns the JSON report.
    fn assert_interrupted(&self, exit_code: u8) -> Value {
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(&self.json).unwrap()).unwrap();
        assert_eq!(report["verdict"], "interrupted", "{report}");
        assert_eq!(report["exit_code"], exit_code);
        let junit = std::fs::read_to_string(&self.junit).unwrap();
        assert!(
            junit.contains(r#"name="verdict" value="interrupted""#),
            "{junit}"
        );
        let md = std::fs::read_to_string(&self.markdown).unwrap();
        assert!(md.contains("awa-conformance: interrupted"), "{md}");
        report
    }
}

fn run_args<'a>(s: &'a Scratch, reports: &'a Reports, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = s.args();
    args.extend(["--test-threads", "1"]);
    args.extend(reports.args());
    args.extend_from_slice(extra);
    args
}

fn sigint_mid_case_cleans_up_and_reports_interrupted() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "sigint");
    let before = snapshot(&s);
    let reports = Reports::new();
    let child = spawn(&run_args(&s, &reports, &["-q", "sql::privilege::"]), &[]);
    wait_until("the run's login role and rows", 120, || {
        run_objects_exist(&s)
    });
    // Hold a case mid-query: the login role's inserts wait for this lock.
    let lock = Held::open(
        &s.dsn,
        &format!(
            "BEGIN; LOCK TABLE \"{}\".contract_jobs IN ACCESS EXCLUSIVE MODE",
            s.schema
        ),
    );
    wait_until("a runner backend waiting on the lock", 60, || {
        scalar(
            &s.dsn,
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'awa-conformance' \
             AND wait_event_type = 'Lock' AND datname = current_database()",
        ) != "0"
    });
    signal(&child, rustix::process::Signal::INT);
    std::thread::sleep(Duration::from_millis(300));
    lock.release("ROLLBACK");
    let out = support::wait(child, 180);
    assert_eq!(
        out.status.code(),
        Some(i32::from(INTERRUPTED)),
        "stderr: {}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("interrupted (SIGINT)"),
        "{}",
        text(&out.stderr)
    );
    let report = reports.assert_interrupted(INTERRUPTED);
    let not_run = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["message"]
                .as_str()
                .is_some_and(|m| m.contains("not run: the run was interrupted"))
        })
        .count();
    assert!(not_run > 0, "no case was recorded as not run: {report}");
    assert_eq!(snapshot(&s), before, "the run left the database changed");
}

fn sigterm_cleans_up_and_reports_interrupted() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "sigterm");
    let before = snapshot(&s);
    let reports = Reports::new();
    let child = spawn(&run_args(&s, &reports, &["-q", "sql::privilege::"]), &[]);
    wait_until("the run's login role and rows", 120, || {
        run_objects_exist(&s)
    });
    signal(&child, rustix::process::Signal::TERM);
    let out = support::wait(child, 180);
    assert_eq!(
        out.status.code(),
        Some(i32::from(TERMINATED)),
        "stderr: {}",
        text(&out.stderr)
    );
    reports.assert_interrupted(TERMINATED);
    assert_eq!(snapshot(&s), before, "the run left the database changed");
}

/// Wait for a child whose stdout the test already took (and closed).
fn wait_closed_stdout(mut child: Child, secs: u64) -> Output {
    let mut stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("awa-conformance did not finish within {secs}s after stdout closed (hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: Vec::new(),
        stderr: err.join().unwrap(),
    }
}

fn closed_stdout_stops_cleanly_with_141() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "pipe");
    let before = snapshot(&s);
    let reports = Reports::new();
    // Pretty output: one line per case, so the closed pipe is noticed at once.
    let mut child = spawn(&run_args(&s, &reports, &["sql::privilege::"]), &[]);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    wait_until("the run's login role and rows", 120, || {
        run_objects_exist(&s)
    });
    // `| head -1`: the reader goes away.
    drop(stdout);
    let out = wait_closed_stdout(child, 180);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(i32::from(STDOUT_CLOSED)),
        "stderr: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    reports.assert_interrupted(STDOUT_CLOSED);
    assert_eq!(snapshot(&s), before, "the run left the database changed");
    // The scratch schema's drop must not race a still-running runner: it has exited.
    let _ = sql(&dsn, "SELECT 1");
}

fn reports_are_written_when_the_schema_is_missing() {
    let dsn = dsn();
    let empty = Scratch::empty(&dsn, "noschema");
    let reports = Reports::new();
    let mut args = vec!["--dsn", &empty.dsn, "--schema", &empty.schema, "-q"];
    args.extend(reports.args());
    let out = support::run(&args, &[], 120);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&reports.json).unwrap()).unwrap();
    assert_eq!(report["exit_code"], 5);
    assert_eq!(report["verdict"], "error");
    assert!(
        report["run_errors"][0]
            .as_str()
            .unwrap()
            .contains("contract schema"),
        "{report}"
    );
    assert!(std::fs::read_to_string(&reports.junit)
        .unwrap()
        .contains(r#"name="verdict" value="error""#));
    assert!(std::fs::read_to_string(&reports.markdown)
        .unwrap()
        .contains("error (exit 5"));
}

fn main() {
    main_with(vec![
        (
            "reports_are_written_when_the_schema_is_missing",
            Gate::Dsn,
            reports_are_written_when_the_schema_is_missing,
        ),
        (
            "sigint_mid_case_cleans_up_and_reports_interrupted",
            Gate::Dsn,
            sigint_mid_case_cleans_up_and_reports_interrupted,
        ),
        (
            "sigterm_cleans_up_and_reports_interrupted",
            Gate::Dsn,
            sigterm_cleans_up_and_reports_interrupted,
        ),
        (
            "closed_stdout_stops_cleanly_with_141",
            Gate::Dsn,
            closed_stdout_stops_cleanly_with_141,
        ),
    ]);
}
