//! A light progress line on stderr for long runs, shown only to a person at a terminal.
//!
//! It is on only when stderr is a terminal, the output format is not JSON, and libtest's own
//! per-trial lines are not already scrolling past on the same terminal (stdout redirected, or
//! `--format terse`). It redraws at most a few times a second and clears itself at the end,
//! so CI logs and pipes never see it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Minimum time between two redraws.
const REDRAW: Duration = Duration::from_millis(200);

/// Counts finished trials and redraws `awa-conformance: 1234/5678 cases, 0 failing`.
#[derive(Debug)]
pub struct Progress {
    total: u64,
    done: AtomicU64,
    failing: AtomicU64,
    last_draw: Mutex<Option<Instant>>,
}

impl Progress {
    /// A progress line for `total` selected trials, or `None` when it should stay quiet.
    pub fn for_terminal(total: u64, json_output: bool, terse_output: bool) -> Option<Self> {
        let stderr_tty = std::io::stderr().is_terminal();
        let stdout_tty = std::io::stdout().is_terminal();
        let libtest_lines_visible = stdout_tty && !terse_output;
        (stderr_tty && !json_output && !libtest_lines_visible && total > 0).then(|| Self {
            total,
            done: AtomicU64::new(0),
            failing: AtomicU64::new(0),
            last_draw: Mutex::new(None),
        })
    }

    /// Count one finished trial and redraw if enough time passed.
    pub fn tick(&self, failed: bool) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if failed {
            self.failing.fetch_add(1, Ordering::Relaxed);
        }
        let Ok(mut last) = self.last_draw.try_lock() else {
            return; // another thread is drawing; the next tick will show the new count
        };
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < REDRAW) && done != self.total {
            return;
        }
        *last = Some(now);
        let failing = self.failing.load(Ordering::Relaxed);
        let mut err = std::io::stderr().lock();
        // A failed progress write is harmless: the line is decoration, the reports are the record.
        let _ = write!(
            err,
            "\r\x1b[2Kawa-conformance: {done}/{} cases, {failing} failing",
            self.total
        );
        let _ = err.flush();
    }

    /// Erase the progress line.
    pub fn finish(&self) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}
