//! Stopping a run early: SIGINT, SIGTERM and a closed stdout become a [`StopReason`].
//!
//! A stopped run is not abandoned: cases in flight finish (each is bounded by
//! `--case-timeout`), the cases not yet started are recorded as not run, everything the run
//! created in the database is removed, and every requested report is written with verdict
//! `interrupted`. Only then does the process exit, with the code of the reason (ADR 0030).
//!
//! Signals are watched from a thread of their own with tokio's signal support (already the
//! runner's async runtime), installed once per process. From then on SIGINT and SIGTERM no
//! longer kill the process: they call the handler of the current run, and are ignored
//! between runs or after a run stopped (cleanup and reports are bounded, so a second Ctrl-C
//! need not cut them short).

use std::sync::{Mutex, OnceLock};

use crate::exit;

/// Why a run stopped before every selected case ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (a supervisor or CI cancelling the job).
    Terminate,
    /// stdout was closed (`| head -1`) or could not be written.
    StdoutClosed,
    /// The producer timed out on `--max-consecutive-timeouts` requests in a row: a harness
    /// error of the run (exit 6), not an interruption; the rest cannot be checked.
    ProducerUnresponsive,
}

impl StopReason {
    /// The process exit code for a run stopped for this reason.
    #[must_use]
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => exit::INTERRUPTED,
            Self::Terminate => exit::TERMINATED,
            Self::StdoutClosed => exit::STDOUT_CLOSED,
            Self::ProducerUnresponsive => exit::HARNESS,
        }
    }

    /// A phrase for messages: "the run was interrupted (SIGINT)".
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Interrupt => "the run was interrupted (SIGINT)",
            Self::Terminate => "the run was terminated (SIGTERM)",
            Self::StdoutClosed => "stdout was closed, so the run stopped",
            Self::ProducerUnresponsive => {
                "the producer stopped answering (--max-consecutive-timeouts), so the run stopped"
            }
        }
    }

    /// Whether the run was stopped from outside (signal, closed stdout), so its verdict is
    /// `interrupted`; otherwise the run stopped itself on a harness error (verdict `error`).
    #[must_use]
    pub fn is_interruption(self) -> bool {
        !matches!(self, Self::ProducerUnresponsive)
    }
}

/// What a run does when a signal arrives.
type Handler = Box<dyn Fn(StopReason) + Send>;

/// The handler of the run in progress, if any.
static CURRENT: Mutex<Option<Handler>> = Mutex::new(None);
/// Whether the watcher thread is installed (`Err` keeps why it could not be).
static WATCHER: OnceLock<Result<(), String>> = OnceLock::new();

/// Route SIGINT and SIGTERM to `handler` until [`clear`] (replacing any earlier handler).
///
/// # Errors
/// A message when the signal watcher cannot be installed (no runtime, no signal support).
pub fn on_signal(handler: impl Fn(StopReason) + Send + 'static) -> Result<(), String> {
    WATCHER.get_or_init(install).clone()?;
    *crate::sync::lock(&CURRENT) = Some(Box::new(handler));
    Ok(())
}

/// Stop routing signals to the current run (they are then ignored).
pub fn clear() {
    *crate::sync::lock(&CURRENT) = None;
}

fn deliver(reason: StopReason) {
    if let Some(handler) = crate::sync::lock(&CURRENT).as_ref() {
        handler(reason);
    }
}

/// Register both signals now (so no window remains in which they kill the process), then
/// wait for them on a thread of their own.
fn install() -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| format!("cannot start the signal watcher: {e}"))?;
    let (mut int, mut term) = rt
        .block_on(async {
            Ok::<_, std::io::Error>((
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ))
        })
        .map_err(|e| format!("cannot watch SIGINT/SIGTERM: {e}"))?;
    std::thread::Builder::new()
        .name("awa-signals".into())
        .spawn(move || {
            rt.block_on(async move {
                loop {
                    tokio::select! {
                        Some(()) = int.recv() => deliver(StopReason::Interrupt),
                        Some(()) = term.recv() => deliver(StopReason::Terminate),
                        else => break,
                    }
                }
            });
        })
        .map(drop)
        .map_err(|e| format!("cannot start the signal watcher thread: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_map_to_their_exit_codes() {
        assert_eq!(StopReason::Interrupt.exit_code(), 130);
        assert_eq!(StopReason::StdoutClosed.exit_code(), 141);
        assert_eq!(StopReason::Terminate.exit_code(), 143);
    }
}
