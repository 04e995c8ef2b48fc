//! With no DSN the runner starts a throwaway cluster, installs the reference schema, runs the

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]
//! SQL suites against it, and removes the cluster afterwards.

mod support;

use support::{main_with, Gate};

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use support::{run, text};

fn binaries_present() -> bool {
    let via_pg_config = std::process::Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| {
            Path::new(String::from_utf8_lossy(&o.stdout).trim())
                .join("initdb")
                .is_file()
        });
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(Result::ok)
                .any(|e| e.path().join("bin/initdb").is_file())
        })
        .unwrap_or(false);
    via_pg_config || debian
}

fn embedded_cluster_runs_and_is_removed() {
    // The cluster's temp dir goes under TMPDIR; it must be traversable by the `postgres`
    // user when the runner is root.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = tmp.path().join("report.json");
    let tmpdir = tmp.path().to_str().unwrap().to_owned();
    let out = run(
        &["--report-json", report.to_str().unwrap(), "-q", "sql::"],
        &[("TMPDIR", &tmpdir)],
        300,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}\nstdout: {}",
        text(&out.stderr),
        text(&out.stdout)
    );
    // It says, even with -q, that the verdict is about the kit's own reference schema.
    assert!(
        text(&out.stderr).contains("checking the kit's own reference schema"),
        "{}",
        text(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    // The provenance line says what was started: the version and the binaries' directory,
    // the same version the server reports.
    let database = r["provenance"]["database"].as_str().unwrap();
    let server = r["provenance"]["server_version"].as_str().unwrap();
    let version = server.split_whitespace().next().unwrap();
    assert!(
        database.starts_with(&format!("embedded (PostgreSQL {version}, /")),
        "{database} (server {server})"
    );
    let passed = r["summary"]["passed"].as_u64().unwrap();
    assert!(passed > 150, "only {passed} SQL cases passed");
    assert_eq!(r["summary"]["ignored"], 0);
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("awa-conformance-pg-"))
        .collect();
    assert!(left.is_empty(), "cluster dir not removed: {left:?}");
}

/// The bin directory the default search would find (Debian's newest, else `pg_config`'s).
fn some_bindir() -> Option<String> {
    let mut dirs: Vec<_> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").is_file())
        .collect();
    dirs.sort();
    dirs.pop().map(|d| d.display().to_string())
}

fn pg_bin_picks_the_server_and_the_provenance_names_it() {
    let bindir = some_bindir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = tmp.path().join("report.json");
    let tmpdir = tmp.path().to_str().unwrap().to_owned();
    let out = run(
        &[
            "--report-json",
            report.to_str().unwrap(),
            "-q",
            "sql::width::",
        ],
        &[("TMPDIR", &tmpdir), ("AWA_PG_BIN", &bindir)],
        300,
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let database = r["provenance"]["database"].as_str().unwrap();
    assert!(database.ends_with(&format!(", {bindir})")), "{database}");
}

fn pg_bin_without_binaries_is_a_usage_error_naming_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap().to_owned();
    let out = run(&["--pg-bin", &dir, "-q", "sql::width::"], &[], 60);
    assert_eq!(out.status.code(), Some(3), "stderr: {}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("--pg-bin / AWA_PG_BIN"), "{err}");
    assert!(err.contains(&dir), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

fn main() {
    let present = binaries_present();
    main_with(vec![
        (
            "embedded_cluster_runs_and_is_removed",
            Gate::When(present, "no PostgreSQL server binaries are installed"),
            embedded_cluster_runs_and_is_removed,
        ),
        (
            "pg_bin_picks_the_server_and_the_provenance_names_it",
            Gate::When(
                some_bindir().is_some(),
                "no /usr/lib/postgresql/*/bin server binaries are installed",
            ),
            pg_bin_picks_the_server_and_the_provenance_names_it,
        ),
        (
            "pg_bin_without_binaries_is_a_usage_error_naming_the_option",
            Gate::None,
            pg_bin_without_binaries_is_a_usage_error_naming_the_option,
        ),
    ]);
}
