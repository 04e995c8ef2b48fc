//! Hostile adapters (runner/tests/hostile/): each one ends in bounded time with its documented
//! exit code, leaves no process behind, and still gets a report.
//!
//! Every run goes through `support::wait`, which kills the runner and fails the test when it
//! does not finish within its bound: a hang is a failure here, never a slow pass.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

mod support;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Output};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use awa_conformance_runner::exit::{HARNESS, NONCONFORMANT, SUCCESS};
use serde_json::Value;
use support::{code, spawn, text};

/// Generous: every wait of these runs is `--adapter-timeout 2`, so a bounded run ends in
/// seconds; only a hang reaches this.
const HANG_BOUND_SECS: u64 = 90;

fn hostile(script: &str, args: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile")
        .join(script);
    format!("sh {} {args}", path.display())
}

/// Run `--adapter CMD adapter::` with a 2 s adapter timeout; returns the output and report.
fn run_adapter(cmd: &str) -> (Output, Value) {
    run_adapter_with(cmd, "2")
}

fn run_adapter_with(cmd: &str, timeout: &str) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = wait(
        spawn(
            &[
                "--no-embedded",
                "--adapter",
                cmd,
                "--adapter-timeout",
                timeout,
                "--report-json",
                report.to_str().unwrap(),
                "-q",
                "adapter::",
            ],
            &[],
        ),
        HANG_BOUND_SECS,
    );
    let report = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out, report)
}

/// Read a pipe to its end on a thread; the result arrives on the returned channel.
fn drain(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// Wait for the runner, killing it (and failing) after `secs`. Its stdout and stderr must
/// close soon after it exits: an adapter process that survived the run would hold them
/// (the adapter inherits the runner's stderr), so that is a failure too, never a hang.
fn wait(mut child: Child, secs: u64) -> Output {
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("awa-conformance did not finish within {secs}s (hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let closed = |rx: mpsc::Receiver<Vec<u8>>, what: &str| {
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| {
                panic!("the runner's {what} stayed open after it exited: an adapter survived")
            })
    };
    Output {
        status,
        stdout: closed(out, "stdout"),
        stderr: closed(err, "stderr"),
    }
}

/// A marker unique to this test process, used as a `sleep` length to find leftovers.
fn marker(n: u32) -> String {
    format!("{n}.{:06}", std::process::id())
}

/// Processes whose command line contains `needle` (zombies have an empty one).
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(needle) && !cmdline.contains("awa-conformance") {
                found.push(format!(
                    "{}: {cmdline}",
                    entry.file_name().to_string_lossy()
                ));
            }
        }
    }
    found
}

/// No process carries `marker` any more (allowing a moment for the kernel to reap).
fn assert_no_leftovers(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the adapter's processes survived the run: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn run_errors(report: &Value) -> String {
    report["run_errors"].to_string()
}

fn assert_harness_error(out: &Output, report: &Value, needle: &str) {
    assert_eq!(
        code(out),
        HARNESS,
        "stderr: {}\nreport: {report}",
        text(&out.stderr)
    );
    let where_ = format!("{} {}", text(&out.stderr), run_errors(report));
    assert!(where_.contains(needle), "{needle:?} not in {where_}");
    // Reports are written on a harness error too.
    assert_eq!(report["exit_code"], 6, "{report}");
    assert_eq!(report["verdict"], "error", "{report}");
}

#[test]
fn no_hello() {
    let (out, report) = run_adapter(&hostile("no_hello.sh", ""));
    assert_harness_error(&out, &report, "sent no valid hello");
}

#[test]
fn silent_forever_is_cut_off_and_killed_as_a_group() {
    let m = marker(3601);
    let (out, report) = run_adapter(&hostile("silent.sh", &m));
    assert_harness_error(&out, &report, "no line within 2s");
    assert_no_leftovers(&m);
}

#[test]
fn garbage_after_hello() {
    let (out, report) = run_adapter(&hostile("garbage.sh", ""));
    assert_harness_error(&out, &report, "protocol violation");
}

#[test]
fn unknown_seq() {
    let (out, report) = run_adapter(&hostile("unknown_seq.sh", ""));
    assert_harness_error(&out, &report, "unknown seq 987654321");
}

#[test]
fn crash_halfway() {
    let (out, report) = run_adapter(&hostile("crash_halfway.sh", ""));
    assert_harness_error(&out, &report, "closed stdout");
    assert!(run_errors(&report).contains("exited with"), "{report}");
    let errored = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "errored")
        .count();
    assert!(errored > 0, "the unanswered vectors must be errored");
}

#[test]
fn hang_after_hello_under_sh_c_leaves_no_child_behind() {
    let m = marker(3602);
    let (out, report) = run_adapter(&hostile("hang_after_hello.sh", &m));
    assert_harness_error(&out, &report, "silent for 2s");
    assert_no_leftovers(&m);
}

#[test]
fn never_exits_after_stop() {
    let m = marker(1);
    let (out, report) = run_adapter(&hostile("never_exits.sh", &m));
    assert_harness_error(&out, &report, "did not exit within 2s");
    assert_no_leftovers(&m);
}

#[test]
fn never_reads_stdin_does_not_block_the_writer() {
    let m = marker(3603);
    let (out, report) = run_adapter(&hostile("never_reads_stdin.sh", &m));
    assert_harness_error(&out, &report, "silent for 2s");
    assert_no_leftovers(&m);
}

#[test]
fn a_100_mb_line_is_a_harness_error() {
    let (out, report) = run_adapter(&hostile("huge_line.sh", ""));
    assert_harness_error(&out, &report, "longer than 1048576 bytes");
}

#[test]
fn a_misspelt_capability_lists_the_known_families() {
    let (out, report) = run_adapter(&hostile("misspelt_capability.sh", ""));
    assert_harness_error(&out, &report, "unknown capability routing");
    assert!(
        text(&out.stderr).contains("routing_precedence"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn an_adapter_that_declares_nothing_is_not_conformant() {
    let (out, report) = run_adapter(&hostile("declares_nothing.sh", ""));
    assert_eq!(code(&out), NONCONFORMANT, "{}", text(&out.stderr));
    let coverage = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "adapter::coverage")
        .unwrap();
    assert_eq!(coverage["status"], "failed");
    assert!(coverage["message"]
        .as_str()
        .unwrap()
        .contains("declares no family"));
}

#[test]
fn an_adapter_that_skips_everything_is_not_conformant() {
    let (out, report) = run_adapter(&hostile("skips_everything.sh", ""));
    assert_eq!(code(&out), NONCONFORMANT, "{}", text(&out.stderr));
    assert_eq!(report["summary"]["passed"], 0, "{report}");
    let coverage = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "adapter::coverage")
        .unwrap();
    assert!(coverage["message"]
        .as_str()
        .unwrap()
        .contains("skipped every vector of canonical_json"));
}

/// An adapter that skips part of a mandatory feature (every second concurrency_digest vector)
/// is nonconformant by the per-feature rule, naming the feature and the count; the honest
/// example adapter's run names the features it checked whole and not the core (an adapter
/// has no payload case).
#[test]
fn an_adapter_that_skips_part_of_a_core_feature_is_not_conformant() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let wrapper = root.join("tests/hostile/skips_half_a_core_feature.py");
    let (out, report) = run_adapter(&format!("python3 {}", wrapper.display()));
    assert_eq!(code(&out), NONCONFORMANT, "{}", text(&out.stderr));
    let features = &report["features"];
    let finding = features["finding"].as_str().unwrap_or_default();
    assert!(
        finding.contains("mandatory features: concurrency-key ("),
        "{features}"
    );
    assert!(
        text(&out.stderr).contains("concurrency-key not checked ("),
        "{}",
        text(&out.stderr)
    );
    let honest = root.join("../examples/adapters/python/adapter.py");
    let (out, report) = run_adapter(&format!("python3 {}", honest.display()));
    assert_eq!(code(&out), SUCCESS, "{}", text(&out.stderr));
    let checked = report["features"]["checked"].as_str().unwrap_or_default();
    assert!(
        checked.starts_with("ordering-key, concurrency-key, precedence")
            && checked.contains("payload not checked (no case)"),
        "{checked}"
    );
    assert!(report["features"].get("finding").is_none(), "{report}");
}

#[test]
fn slow_but_correct_passes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let adapter = root.join("../examples/adapters/python/adapter.py");
    let slow = root.join("tests/hostile/slow.py");
    // Pauses of 2 s before the hello and every 300 answers (about 10 s in all) under a 6 s
    // timeout: the bound is on silence, not on the total time. The 4 s margin keeps a loaded
    // CI machine from turning a pause into a timeout.
    let cmd = format!(
        "python3 {} | python3 {} 2",
        adapter.display(),
        slow.display()
    );
    let (out, report) = run_adapter_with(&cmd, "6");
    assert_eq!(
        code(&out),
        SUCCESS,
        "stderr: {}\nreport errors: {}",
        text(&out.stderr),
        run_errors(&report)
    );
    assert!(
        report["summary"]["passed"].as_u64().unwrap() > 900,
        "{report}"
    );
}
