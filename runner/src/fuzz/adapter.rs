//! The adapter target of `fuzz`: random vectors through the pure-function adapter protocol
//! (docs/adapter-protocol.md), one adapter process per batch.
//!
//! Each batch is a vector set of its own, sent by [`crate::adapter::exchange_with`] exactly as
//! a run sends the frozen vectors (same request shapes, bounds and process-group handling),
//! and each answer is judged by the runner's one comparison of an answer with a vector. The
//! first hello fixes which families are generated from then on. When the adapter crashes,
//! hangs or breaks the protocol, the unanswered vectors of the batch are bisected (a bounded
//! number of exchanges), so the input that kills it is printed like any other finding.

use std::collections::BTreeSet;
use std::time::Duration;

use awa_conformance_vectors::{Case, Family, Manifest, VectorSet};
use serde_json::json;

use super::gen::Generated;
use super::{Checked, Finding, Stop};
use crate::adapter::{exchange_with, AdapterError, Answer, Limits};
use crate::error::Error;
use crate::protocol::ERRORS_CAPABILITY;

/// How many exchanges the search for the input that kills the adapter may take (halving the
/// suspects each time: enough for a batch of 9 * 1024 vectors).
const CULPRIT_ROUNDS: usize = 15;

/// An adapter under fuzz.
#[derive(Debug)]
pub struct AdapterTarget {
    cmd: String,
    dsn: Option<String>,
    timeout: Duration,
    /// The manifest a vector set carries (the embedded one; the exchange does not read it).
    manifest: Manifest,
    /// From the first hello: `(implementation name, capabilities)`.
    hello: Option<(String, Vec<String>)>,
}

impl AdapterTarget {
    /// An adapter started with `cmd` for each batch, given `dsn` in `AWA_CONFORMANCE_DSN`.
    ///
    /// # Errors
    /// [`Error::VectorsInvalid`] if the embedded vectors do not load.
    pub fn new(cmd: &str, dsn: Option<String>, timeout: Duration) -> Result<Self, Error> {
        let manifest = awa_conformance_vectors::embedded()
            .map_err(|e| Error::VectorsInvalid {
                detail: e.to_string(),
            })?
            .manifest;
        Ok(Self {
            cmd: cmd.to_owned(),
            dsn,
            timeout,
            manifest,
            hello: None,
        })
    }

    /// A one-line description for the run's header and findings.
    #[must_use]
    pub fn describe(&self) -> String {
        match &self.hello {
            Some((name, caps)) => format!("adapter {name} (`{}`; {})", self.cmd, caps.join(", ")),
            None => format!("adapter `{}`", self.cmd),
        }
    }

    /// The families to generate: every family until the first hello, then those declared.
    #[must_use]
    pub fn families(&self) -> Vec<Family> {
        match &self.hello {
            None => Family::ALL.to_vec(),
            Some((_, caps)) => Family::ALL
                .into_iter()
                .filter(|f| caps.iter().any(|c| c == f.as_str()))
                .collect(),
        }
    }

    fn set(&self, batch: &[&Generated]) -> VectorSet {
        super::vector_set(batch, &self.manifest)
    }

    /// The vector that makes the adapter fail alone, with its problems: halve `suspects` (a
    /// set the adapter failed on) until one vector is left, keeping the first half that fails
    /// and otherwise the second; at most [`CULPRIT_ROUNDS`] exchanges. `None` when the last one
    /// does not fail alone (the failure needs several inputs) or the run was stopped.
    fn culprit<'g>(
        &self,
        mut suspects: Vec<&'g Generated>,
        limits: &Limits<'_>,
    ) -> Option<(&'g Generated, Vec<String>)> {
        for _ in 0..CULPRIT_ROUNDS {
            if (limits.stopped)() {
                return None;
            }
            let half = suspects.len().div_ceil(2);
            let first: Vec<&Generated> = suspects.iter().take(half).copied().collect();
            let s =
                exchange_with(&self.cmd, self.dsn.as_deref(), &self.set(&first), limits).ok()?;
            match (first.as_slice(), s.problems.is_empty()) {
                ([only], false) => return Some((*only, s.problems)),
                (_, false) => suspects = first,
                (_, true) if suspects.len() > 1 => suspects = suspects.split_off(half),
                _ => return None,
            }
        }
        None
    }

    /// Send `batch` (duplicate IDs once) to one adapter process and judge every answer.
    ///
    /// # Errors
    /// [`Error::Harness`] when the adapter cannot start or sends no valid hello.
    pub fn check(&mut self, batch: &[Generated], stop: &Stop) -> Result<Checked, Error> {
        let mut seen = BTreeSet::new();
        let unique: Vec<&Generated> = batch
            .iter()
            .filter(|g| seen.insert(g.vector.id.clone()))
            .collect();
        let stopped = || stop.get().is_some();
        let limits = Limits {
            timeout: self.timeout,
            stopped: &stopped,
            ..Limits::default()
        };
        let session =
            match exchange_with(&self.cmd, self.dsn.as_deref(), &self.set(&unique), &limits) {
                Ok(s) => s,
                Err(AdapterError::Stopped { .. }) => return Ok(Checked::default()),
                Err(e) => return Err(e.into()),
            };
        let caps = session.hello.capabilities.clone();
        self.hello = Some((session.hello.implementation.name.clone(), caps.clone()));
        let who = format!("adapter {}'s output", session.hello.implementation.name);
        let mut out = Checked::default();
        let mut unanswered = Vec::new();
        for g in batch {
            let expected = g.vector.case.expected_json().to_serde();
            let input = g.vector.case.input_json().to_serde();
            match session.answers.get(&g.vector.id) {
                Some(Answer::Output(o)) => {
                    out.hit(g.family);
                    if let Err(f) = crate::contract::judge::answer(&who, &expected, &input, o) {
                        out.findings
                            .push(Finding::new(g, f.message, expected, o.clone()));
                    }
                }
                Some(Answer::Error(msg)) => {
                    out.hit(g.family);
                    let what = if matches!(g.vector.case, Case::Rejected(_)) {
                        "the adapter failed instead of refusing the input with its error code"
                    } else {
                        "the adapter reported an error for a valid input"
                    };
                    out.findings.push(Finding::new(
                        g,
                        what.to_owned(),
                        expected,
                        json!({ "error": msg }),
                    ));
                }
                Some(Answer::Skipped(_)) => out.skipped += 1,
                None if session.problems.is_empty() => out.not_sent += 1,
                None => unanswered.push(g),
            }
        }
        let declared = |g: &Generated| {
            caps.iter().any(|c| c == g.family.as_str())
                && (!matches!(g.vector.case, Case::Rejected(_))
                    || caps.iter().any(|c| c == ERRORS_CAPABILITY))
        };
        if !session.problems.is_empty() {
            out.problems.push(format!(
                "adapter {}: {}",
                session.hello.implementation.name,
                session.problems.join("; ")
            ));
            // Find the input that kills it: bisect the unanswered vectors.
            let suspects: Vec<&Generated> =
                unanswered.into_iter().filter(|g| declared(g)).collect();
            if let Some((g, problems)) = self.culprit(suspects, &limits) {
                let mut f = Finding::new(
                    g,
                    format!(
                        "the adapter failed on this input alone (a harness error, exit 6): {}",
                        problems.join("; ")
                    ),
                    g.vector.case.expected_json().to_serde(),
                    json!({ "problems": problems }),
                );
                f.harness = true;
                out.findings.push(f);
            }
        }
        Ok(out)
    }
}
