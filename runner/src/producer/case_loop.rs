//! The one loop over a producer session: which cases go to the producer and which are never
//! sent (the capability rule), where each case runs (ahead on the lanes through the
//! [`Pipeline`] when the session has several, else here), the producer's own output while it
//! ran, when to stop (the run asked to, or the producer stopped answering), and the verdicts
//! that need every answer (`producer::coverage`, a finding of requests in flight that no case
//! carries, and how the producer stopped).
//!
//! Why one: the CLI's trials ([`super::trials`], libtest-mimic calling [`CaseLoop::run`] per
//! trial), the library's [`super::check`] (the Python bindings) and the producer fuzzer each
//! used to walk the session themselves, and each had its own idea of a case the producer cannot
//! answer, of an unresponsive producer and of the end of the session. They now call this loop,
//! so they cannot treat a case differently.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::cases::Case;
use super::engine::{Pipeline, Session, Stopped};
use crate::outcome::{CaseFailure, Verdict};

/// What one case came to.
#[derive(Debug)]
pub struct Outcome {
    /// The verdict: not applicable (never sent) when the producer cannot answer the case.
    pub verdict: Result<Verdict, CaseFailure>,
    /// The producer's own output while the case ran (bounded; `None` when it wrote none).
    pub output: Option<String>,
    /// How long the case took here, waiting for the lanes included (milliseconds).
    pub elapsed_ms: f64,
}

/// The verdicts that need every answer, after the last case.
#[derive(Debug, Default)]
pub struct Concluded {
    /// `producer::coverage`, when it was asked for.
    pub coverage: Option<Result<Verdict, CaseFailure>>,
    /// When coverage was not asked for: the finding of requests in flight that no case
    /// carries, so it is never a silent pass.
    pub unattributed: Option<String>,
    /// The producer did not stop cleanly: why.
    pub stop_problem: Option<String>,
}

/// The loop over one producer session.
pub struct CaseLoop {
    session: Arc<Session>,
    pipeline: Option<Arc<Pipeline>>,
    stopped: Stopped,
}

impl std::fmt::Debug for CaseLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaseLoop")
            .field("session", &self.session)
            .field("pipelined", &self.pipeline.is_some())
            .finish_non_exhaustive()
    }
}

impl CaseLoop {
    /// The loop over `session` for the cases of `all` that `selected` names. With several
    /// lanes the selected cases the producer can answer run ahead of their callers, that many
    /// in flight (ADR 0057); `stopped` ends the loop early (a signal, an unresponsive
    /// producer).
    pub fn new(
        session: Arc<Session>,
        all: &[Case],
        selected: &dyn Fn(&str) -> bool,
        stopped: Stopped,
    ) -> Self {
        let pipeline = (session.lanes() > 1).then(|| {
            session.watch_stop(Arc::clone(&stopped));
            let queued: VecDeque<Case> = all
                .iter()
                .filter(|c| selected(&c.name) && session.not_applicable(c).is_none())
                .cloned()
                .collect();
            Arc::new(Pipeline::new(
                Arc::clone(&session),
                queued,
                Arc::clone(&stopped),
            ))
        });
        Self {
            session,
            pipeline,
            stopped,
        }
    }

    /// The session the loop runs on (its hello, timings).
    #[must_use]
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Why the producer cannot answer `case` (a capability it did not declare, a field its
    /// protocol cannot say, a target that cannot express it), if it cannot: such a case is
    /// never sent.
    #[must_use]
    pub fn not_applicable(&self, case: &Case) -> Option<String> {
        self.session.not_applicable(case)
    }

    /// One case: not applicable when the producer cannot answer it, else its verdict from the
    /// lanes (or run here), with the producer's output while it ran.
    #[must_use]
    pub fn run(&self, case: &Case) -> Outcome {
        let started = Instant::now();
        let verdict = match self.session.not_applicable(case) {
            Some(why) => Ok(Verdict::NotApplicable(why)),
            None => match &self.pipeline {
                Some(p) => p.verdict(case),
                None => self.session.run(case),
            },
        };
        Outcome {
            verdict,
            output: self.session.take_output(&case.name),
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        }
    }

    /// `cases` one after the other, each handed to `each` with its outcome, until the run is
    /// asked to stop (`None`) or the producer stopped answering (`Some` with why: the rest
    /// were not sent).
    pub fn each(
        &self,
        cases: impl IntoIterator<Item = Case>,
        mut each: impl FnMut(Case, Outcome),
    ) -> Option<String> {
        for case in cases {
            if (self.stopped)() {
                return None;
            }
            if let Some(message) = self.session.unresponsive() {
                return Some(message);
            }
            let outcome = self.run(&case);
            each(case, outcome);
        }
        None
    }

    /// After the last case: `producer::coverage` when `coverage_selected` (else the finding no
    /// case carries, if any), then stop the producer.
    #[must_use]
    pub fn conclude(&self, coverage_selected: bool) -> Concluded {
        let (coverage, unattributed) = if coverage_selected {
            (Some(self.session.coverage()), None)
        } else {
            (None, self.session.unattributed().map(|f| f.text()))
        };
        Concluded {
            coverage,
            unattributed,
            stop_problem: self.session.finish(),
        }
    }
}
