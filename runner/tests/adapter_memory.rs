//! A 100 MB line from an adapter costs the runner at most about the line limit in memory.
//!
//! Its own test binary with a single test, so that the process's peak resident set
//! (`VmHWM` in /proc/self/status) measures this exchange and nothing else.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use std::path::PathBuf;

use awa_conformance_runner::adapter::{exchange_with, Limits, MAX_LINE_BYTES};

/// Peak resident set size of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kib * 1024
}

#[test]
fn a_100_mb_line_does_not_grow_memory_past_the_line_limit() {
    let set = awa_conformance_vectors::v1().unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/huge_line.sh");
    let before = peak_rss();
    let limits = Limits {
        timeout: std::time::Duration::from_secs(5),
        ..Limits::default()
    };
    let session = exchange_with(&format!("sh {}", script.display()), None, &set, &limits).unwrap();
    let after = peak_rss();
    assert!(
        session.problems.iter().any(|p| p.contains("longer than")),
        "{:?}",
        session.problems
    );
    // The line limit, its buffer and some slack; reading the whole line would cost 100 MB+.
    let allowed = 8 * MAX_LINE_BYTES as u64 + 16 * 1024 * 1024;
    assert!(
        after.saturating_sub(before) < allowed,
        "peak RSS grew by {} bytes reading a 100 MB line (allowed {allowed})",
        after.saturating_sub(before)
    );
}
