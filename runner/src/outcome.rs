//! Per-case outcomes shared by every suite, and the [`RunContext`] that wraps checks as trials
//! (in `outcome/context.rs`).
//!
//! # For suite authors (offline suite, DB suite)
//!
//! Every case of a run is one libtest-mimic [`Trial`] built through a [`RunContext`]:
//!
//! * [`RunContext::trial`]: a check that passes (`Ok(())`) or fails (`Err(CaseFailure)`).
//! * [`RunContext::trial_with`]: a check that may also decide *at run time* that the case
//!   does not apply (`Ok(Verdict::NotApplicable(reason))`), e.g. after reading
//!   `awa.contract_capabilities()` from the server.
//! * [`RunContext::not_applicable`]: a case known up front not to apply (capability missing).
//! * [`RunContext::ignored`]: a DB case with no database to run it against.
//!
//! The context records one [`CaseResult`] per trial that actually runs (filtered-out trials
//! leave no record), applies the expected-failures list, and collects provenance for the
//! reports. Names must be unique across the whole run: offline trials are `family::id`, DB
//! trials should start with their own prefix (e.g. `sql::function::rp-…`) so that an
//! expected-failure entry for one never matches the other by accident.
//!
//! Failures have a [`FailureKind`]: a `Nonconformant` failure is a finding about the producer
//! under test (exit 1); a `Harness` failure means the kit itself could not do its job (lost
//! connection, adapter crash) and turns the run's exit code into 6. Use
//! [`CaseFailure::harness`] for the latter. Provenance keys the DB suite sets:
//! [`PROVENANCE_SERVER_VERSION`] and [`PROVENANCE_CONTRACT_VERSION`].

use serde::Serialize;

use crate::contract::features::Fate;
use crate::shorten;

mod context;

pub use context::RunContext;

/// Provenance key: the PostgreSQL server version (`SHOW server_version`), set by the DB suite.
pub const PROVENANCE_SERVER_VERSION: &str = "server_version";
/// Provenance key: `awa.contract_version()` as reported by the server, set by the DB suite.
pub const PROVENANCE_CONTRACT_VERSION: &str = "contract_version";
/// Provenance key: which database the DB suite ran against (`dsn`, `embedded` or `none`).
pub const PROVENANCE_DATABASE: &str = "database";
/// Provenance key: the conformance level checked (docs/contract.md §12), e.g. `core+uniqueness`.
pub const PROVENANCE_LEVEL: &str = "level";

/// What happened to one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The check passed.
    Passed,
    /// The check failed and the case is not listed as an expected failure.
    Failed,
    /// The check failed and the case is listed in the expected-failures file.
    ExpectedFailure,
    /// The case is listed as an expected failure but passed: the list is stale (run fails).
    UnexpectedPass,
    /// The case does not apply to the implementation under test (capability missing).
    NotApplicable,
    /// The case was not run (e.g. no database).
    Ignored,
    /// The harness could not run the case (connection lost, adapter crashed): exit code 6.
    Errored,
}

impl Status {
    /// Every status, in report order.
    pub const ALL: [Status; 7] = [
        Status::Passed,
        Status::Failed,
        Status::ExpectedFailure,
        Status::UnexpectedPass,
        Status::NotApplicable,
        Status::Ignored,
        Status::Errored,
    ];

    /// The snake_case name used in every report.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::ExpectedFailure => "expected_failure",
            Status::UnexpectedPass => "unexpected_pass",
            Status::NotApplicable => "not_applicable",
            Status::Ignored => "ignored",
            Status::Errored => "errored",
        }
    }

    /// The status a report names `name` (`passed`, `not_applicable`, …); `None` for a word no
    /// report uses.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// What happened to a case of this status, for the per-feature counts (`skipped`: the
    /// producer answered `skipped`): the one mapping, for a run and for a report read back.
    #[must_use]
    pub fn fate(self, skipped: bool) -> Fate {
        match self {
            Status::NotApplicable if skipped => Fate::Skipped,
            Status::NotApplicable => Fate::NotApplicable,
            Status::Ignored => Fate::Ignored,
            Status::Errored => Fate::Errored,
            Status::Passed | Status::Failed | Status::ExpectedFailure | Status::UnexpectedPass => {
                Fate::Checked
            }
        }
    }

    /// Whether this status makes the run nonconformant (exit 1).
    pub fn is_nonconformant(self) -> bool {
        matches!(self, Status::Failed | Status::UnexpectedPass)
    }
}

/// Whether a failure is a finding about the implementation or a problem of the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailureKind {
    /// The implementation under test produced a wrong result (exit 1).
    #[default]
    Nonconformant,
    /// The harness could not complete the check (exit 6); never listed as an expected failure.
    Harness,
}

/// Where a mismatch comes from: which step between the request and the stored job went
/// wrong. Carried as data by a [`CaseFailure`] and every report (the JSON report's `layer`),
/// never as text to parse back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// The canonical args JSON the unique key hashes.
    CanonicalJson,
    /// The unique_key pre-image (fields, framing, period bucket).
    UniqueKeyPreimage,
    /// The hash step (BLAKE3 of the pre-image, or the concurrency digest).
    Digest,
    /// The enqueue shard.
    Shard,
    /// Which routing rule applied.
    Precedence,
    /// The PartitionedQueue physical queue.
    Partition,
    /// The values did not reach `insert_job` as requested (keys as text, dropped keys,
    /// `unique_states` padded by `::bit(8)`, another queue).
    SqlCallEncoding,
    /// `insert_job` itself disagrees with the vector.
    DatabaseSemantics,
    /// What was stored besides the routing: the jobs themselves (how many, and their fields).
    Payload,
}

impl Layer {
    /// The label shown in reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CanonicalJson => "canonical JSON",
            Self::UniqueKeyPreimage => "unique_key pre-image",
            Self::Digest => "digest",
            Self::Shard => "shard",
            Self::Precedence => "precedence",
            Self::Partition => "partition",
            Self::SqlCallEncoding => "SQL call encoding",
            Self::DatabaseSemantics => "database semantics",
            Self::Payload => "payload",
        }
    }
}

impl Serialize for Layer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why a check failed, with the expected and actual values when they are meaningful.
#[derive(Debug, Clone, Default)]
pub struct CaseFailure {
    /// One paragraph naming what differed (and, for harness failures, the fix).
    pub message: String,
    /// Where the mismatch comes from, when a judge named it.
    pub layer: Option<Layer>,
    /// The value the contract requires.
    pub expected: Option<serde_json::Value>,
    /// The value the implementation produced.
    pub actual: Option<serde_json::Value>,
    /// Finding or harness problem.
    pub kind: FailureKind,
}

impl CaseFailure {
    /// A nonconformance finding with only a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            ..Self::default()
        }
    }

    /// A nonconformance finding with the expected and actual values.
    pub fn mismatch(
        message: impl Into<String>,
        expected: serde_json::Value,
        actual: serde_json::Value,
    ) -> Self {
        Self {
            message: message.into(),
            expected: Some(expected),
            actual: Some(actual),
            kind: FailureKind::Nonconformant,
            layer: None,
        }
    }

    /// A nonconformance finding at `layer`, with the expected and actual values.
    pub fn at(
        layer: Layer,
        message: impl Into<String>,
        expected: serde_json::Value,
        actual: serde_json::Value,
    ) -> Self {
        Self {
            layer: Some(layer),
            ..Self::mismatch(message, expected, actual)
        }
    }

    /// The message as a person reads it: `layer: <layer>: <message>` when the layer is known.
    /// The one place a layer is written as text; reports carry it as data too.
    #[must_use]
    pub fn text(&self) -> String {
        match self.layer {
            Some(layer) => format!("layer: {}: {}", layer.as_str(), self.message),
            None => self.message.clone(),
        }
    }

    /// A harness problem (connection lost, adapter crashed): the run exits 6, not 1.
    pub fn harness(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            kind: FailureKind::Harness,
            ..Self::default()
        }
    }

    /// The text libtest-mimic prints under `failures:`: long byte values shortened
    /// ([`shorten`]); the JSON report keeps them whole.
    fn render(&self) -> String {
        let mut text = self.text();
        if let Some(expected) = &self.expected {
            text.push_str(&format!("\n  expected: {}", shorten::display(expected)));
        }
        if let Some(actual) = &self.actual {
            text.push_str(&format!("\n  actual:   {}", shorten::display(actual)));
        }
        text
    }
}

impl From<String> for CaseFailure {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for CaseFailure {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// The successful result of a [`RunContext::trial_with`] check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The check passed.
    Passed,
    /// The case does not apply; the reason is shown and recorded.
    NotApplicable(String),
    /// The implementation under test chose not to answer (it said `skipped`): recorded as
    /// not applicable with `skipped` set, so the features it leaves unchecked are counted
    /// as skipped ([`crate::contract::features`]).
    Skipped(String),
}

/// The recorded result of one case, as it appears in every report.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The trial name (`family::id`, `sql::…`).
    pub name: String,
    /// The suite that produced it (`offline`, `sql`, …).
    pub suite: String,
    /// What happened.
    pub status: Status,
    /// Failure message, reason for not applicable / ignored, or the expected-failure reason.
    pub message: Option<String>,
    /// Where a failure's mismatch comes from, when the judge named it (the JSON report's
    /// `layer`, the results page's layer filter); the message says it for people too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<Layer>,
    /// The value the contract requires (failures only).
    pub expected: Option<serde_json::Value>,
    /// The value the implementation produced (failures only).
    pub actual: Option<serde_json::Value>,
    /// Wall time of the check in milliseconds (0 for cases that did not run).
    pub duration_ms: f64,
    /// The features the case checks (producer cases; [`crate::contract::features`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<&'static str>,
    /// The implementation answered `skipped` (status `not_applicable`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// A producer case's own output while it ran (its stderr lines naming the case's request
    /// or no case), the tail of it, passed or failed; absent when it wrote none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

impl CaseResult {
    /// What happened to the case, for the per-feature counts.
    #[must_use]
    pub fn fate(&self) -> Fate {
        self.status.fate(self.skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_is_read_back_by_its_name_and_counted_once() {
        for s in Status::ALL {
            assert_eq!(Status::named(s.as_str()), Some(s));
        }
        assert_eq!(Status::named("skipped"), None);
        assert_eq!(Status::Ignored.fate(false), Fate::Ignored);
        assert_eq!(Status::NotApplicable.fate(true), Fate::Skipped);
        assert_eq!(Status::ExpectedFailure.fate(false), Fate::Checked);
    }

    #[test]
    fn rendered_failures_shorten_long_values() {
        let long = "ab".repeat(100);
        let text = CaseFailure::mismatch("differs", long.clone().into(), "00".into()).render();
        assert!(!text.contains(&long), "{text}");
        assert!(text.contains("(100 bytes, sha256 "), "{text}");
    }
}
