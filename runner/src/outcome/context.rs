//! The [`RunContext`] of a run: it wraps every check as a libtest-mimic trial (inline, or on a
//! thread of its own bounded by `--case-timeout`, a panic caught either way), applies the
//! expected failures, and records one [`CaseResult`] per case that ran, through the masking
//! door, with the run's provenance, run errors, progress, timings and features.

use crate::redact::{redact_json, redact_secrets};
use std::collections::{BTreeMap, HashSet};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use libtest_mimic::{Completion, Failed, Trial};

use super::{CaseFailure, CaseResult, FailureKind, Status, Verdict};
use crate::contract::features::{Coverage, Feature, Side};
use crate::expected::ExpectedFailures;
use crate::interrupt::StopReason;
use crate::progress::Progress;

/// Shared state of one run: collected results, expected failures, provenance, progress,
/// the bound on one case and whether the run was asked to stop.
#[derive(Debug, Default)]
pub struct RunContext {
    results: Mutex<Vec<CaseResult>>,
    expected: ExpectedFailures,
    provenance: Mutex<BTreeMap<String, String>>,
    run_errors: Mutex<Vec<String>>,
    progress: OnceLock<Progress>,
    /// `None`: checks run inline, unbounded (unit tests of pure checks).
    case_timeout: Option<Duration>,
    stop: OnceLock<StopReason>,
    /// Names of the cases recorded as expected failures (the console prints them `xfail`).
    xfail: Mutex<HashSet<String>>,
    /// The producer engine's time per phase, when `--timings` asked for it.
    timings: Mutex<Option<crate::timings::TimingsSection>>,
    /// Every featured case of the kit's catalogue (selected or not), by name.
    features: Mutex<BTreeMap<String, (Side, Vec<Feature>)>>,
    /// Output attached to a case before its result is recorded, by name.
    outputs: Mutex<BTreeMap<String, String>>,
}

// Results already pushed stay valid when a panicking check poisoned the lock.
use crate::sync::lock;

impl RunContext {
    /// A context applying `expected`, running checks inline without a time bound.
    pub fn new(expected: ExpectedFailures) -> Arc<Self> {
        Arc::new(Self {
            expected,
            ..Self::default()
        })
    }

    /// A context applying `expected` in which every check runs on a thread of its own and
    /// is abandoned, recorded as a harness error, after `case_timeout`.
    pub fn with_case_timeout(expected: ExpectedFailures, case_timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            expected,
            case_timeout: Some(case_timeout),
            ..Self::default()
        })
    }

    /// Ask the run to stop: cases not yet started are recorded as not run (`ignored`, with
    /// the reason). The first reason wins.
    pub fn request_stop(&self, reason: StopReason) {
        let _ = self.stop.set(reason);
    }

    /// Why the run was asked to stop, if it was.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop.get().copied()
    }

    /// Whether `name` was recorded as an expected failure.
    pub fn is_expected_failure(&self, name: &str) -> bool {
        lock(&self.xfail).contains(name)
    }

    /// Report progress through `progress` from now on (set once, before the run).
    pub fn set_progress(&self, progress: Progress) {
        // A second call keeps the first progress line; there is only one per run.
        let _ = self.progress.set(progress);
    }

    /// Erase the progress line, if any.
    pub fn finish_progress(&self) {
        if let Some(progress) = self.progress.get() {
            progress.finish();
        }
    }

    /// Wrap a check as a trial named `name`, recording its result and applying expected
    /// failures: listed + fails → `ExpectedFailure` (trial passes); listed + passes →
    /// `UnexpectedPass` (trial fails, telling to remove the entry).
    pub fn trial(
        self: &Arc<Self>,
        suite: &str,
        name: String,
        check: impl FnOnce() -> Result<(), CaseFailure> + Send + 'static,
    ) -> Trial {
        self.trial_with(suite, name, move || check().map(|()| Verdict::Passed))
    }

    /// Like [`RunContext::trial`], but the check may decide at run time that the case does
    /// not apply (shown as ignored with the reason, recorded `NotApplicable`).
    pub fn trial_with(
        self: &Arc<Self>,
        suite: &str,
        name: String,
        check: impl FnOnce() -> Result<Verdict, CaseFailure> + Send + 'static,
    ) -> Trial {
        self.make_trial(suite, name, true, check)
    }

    /// A check that cannot block (pure computation on data already in memory: the offline
    /// vectors, recorded adapter answers): run inline, without the thread that bounds
    /// [`RunContext::trial_with`] checks by `--case-timeout`.
    pub fn pure_trial(
        self: &Arc<Self>,
        suite: &str,
        name: String,
        check: impl FnOnce() -> Result<Verdict, CaseFailure> + Send + 'static,
    ) -> Trial {
        self.make_trial(suite, name, false, check)
    }

    fn make_trial(
        self: &Arc<Self>,
        suite: &str,
        name: String,
        may_block: bool,
        check: impl FnOnce() -> Result<Verdict, CaseFailure> + Send + 'static,
    ) -> Trial {
        let ctx = Arc::clone(self);
        let suite = suite.to_owned();
        let trial_name = name.clone();
        Trial::ignorable_test(trial_name, move || {
            if let Some(reason) = ctx.stop_reason() {
                let why = format!("not run: {}", reason.describe());
                ctx.push(CaseResult {
                    name,
                    suite,
                    status: Status::Ignored,
                    message: Some(why.clone()),
                    layer: None,
                    expected: None,
                    actual: None,
                    duration_ms: 0.0,
                    features: Vec::new(),
                    skipped: false,
                    output: None,
                });
                return Ok(Completion::ignored_with(why));
            }
            let started = Instant::now();
            let outcome = match ctx.case_timeout {
                Some(limit) if may_block => bounded(limit, check),
                _ => guarded(check),
            };
            let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            ctx.finish(&suite, name, outcome, duration_ms)
        })
    }

    /// A case that does not apply (capability missing): shown as ignored with the reason,
    /// recorded `NotApplicable`; never a pass or a failure.
    pub fn not_applicable(self: &Arc<Self>, suite: &str, name: String, reason: String) -> Trial {
        self.skipped(suite, name, reason, Status::NotApplicable)
    }

    /// A DB case with no database: shown as ignored with the reason, recorded `Ignored`.
    pub fn ignored(self: &Arc<Self>, suite: &str, name: String, reason: String) -> Trial {
        self.skipped(suite, name, reason, Status::Ignored)
    }

    /// Record (or overwrite) one provenance entry, e.g. `server_version`.
    pub fn set_provenance(&self, key: &str, value: String) {
        lock(&self.provenance).insert(key.to_owned(), redact_secrets(&value));
    }

    /// Record a harness problem that is not tied to one case (exit 6).
    pub fn record_run_error(&self, message: String) {
        lock(&self.run_errors).push(redact_secrets(&message));
    }

    /// Record the producer engine's time per phase (`--timings`), for the report.
    pub fn record_timings(&self, timings: crate::timings::TimingsSection) {
        *lock(&self.timings) = Some(timings);
    }

    /// The producer engine's time per phase, when recorded.
    pub fn timings(&self) -> Option<crate::timings::TimingsSection> {
        lock(&self.timings).clone()
    }

    /// The provenance recorded so far.
    pub fn provenance(&self) -> BTreeMap<String, String> {
        lock(&self.provenance).clone()
    }

    /// Harness problems recorded with [`RunContext::record_run_error`].
    pub fn run_errors(&self) -> Vec<String> {
        lock(&self.run_errors).clone()
    }

    /// The results recorded so far, sorted by name (threads finish in any order).
    pub fn results(&self) -> Vec<CaseResult> {
        let mut results = lock(&self.results).clone();
        results.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.suite.cmp(&b.suite)));
        results
    }

    /// Declare the features of one case of the kit's catalogue, whether or not it will be
    /// selected: the catalogue is what "checked whole" counts against. `side` says whose
    /// features they are (a database's `sql::` case, or a producer's or adapter's).
    pub fn declare_features(&self, side: Side, name: &str, features: Vec<Feature>) {
        lock(&self.features).insert(name.to_owned(), (side, features));
    }

    /// What happened, per feature, to `side`'s catalogue declared with
    /// [`RunContext::declare_features`], counted from `results` (empty when no featured case
    /// of that side was declared).
    pub fn coverage(&self, side: Side, results: &[CaseResult]) -> Coverage {
        let declared = lock(&self.features);
        let mut coverage = Coverage::of_catalogue(
            side,
            declared
                .values()
                .filter(|(s, _)| *s == side)
                .map(|(_, f)| f.as_slice()),
        );
        for r in results {
            if let Some((s, features)) = declared.get(&r.name) {
                if *s == side {
                    coverage.add(features, r.fate());
                }
            }
        }
        coverage
    }

    /// Attach `output` to the case `name`, whose result is recorded next.
    pub fn attach_output(&self, name: &str, output: String) {
        lock(&self.outputs).insert(name.to_owned(), output);
    }

    /// The expected-failures list this run applies.
    pub fn expected_failures(&self) -> &ExpectedFailures {
        &self.expected
    }

    fn skipped(
        self: &Arc<Self>,
        suite: &str,
        name: String,
        reason: String,
        status: Status,
    ) -> Trial {
        let ctx = Arc::clone(self);
        let suite = suite.to_owned();
        let trial_name = name.clone();
        Trial::ignorable_test(trial_name, move || {
            ctx.push(CaseResult {
                name,
                suite,
                status,
                message: Some(reason.clone()),
                layer: None,
                expected: None,
                actual: None,
                duration_ms: 0.0,
                features: Vec::new(),
                skipped: false,
                output: None,
            });
            Ok(Completion::ignored_with(reason))
        })
    }

    /// Record the outcome of a check run outside libtest-mimic (the library entry
    /// `producer::check`), applying expected failures exactly as a trial does.
    pub fn record(
        &self,
        suite: &str,
        name: String,
        outcome: Result<Verdict, CaseFailure>,
        duration_ms: f64,
    ) {
        let _ = self.finish(suite, name, outcome, duration_ms);
    }

    /// Turn a check's outcome into a recorded result and the trial's libtest outcome.
    fn finish(
        &self,
        suite: &str,
        name: String,
        outcome: Result<Verdict, CaseFailure>,
        duration_ms: f64,
    ) -> Result<Completion, Failed> {
        let listed = self.expected.reason_for(&name).map(str::to_owned);
        let base = CaseResult {
            name: name.clone(),
            suite: suite.to_owned(),
            status: Status::Passed,
            message: None,
            layer: None,
            expected: None,
            actual: None,
            duration_ms,
            features: Vec::new(),
            skipped: false,
            output: None,
        };
        let (result, completion) = match (outcome, listed) {
            (Ok(Verdict::NotApplicable(reason)), _) => (
                CaseResult {
                    status: Status::NotApplicable,
                    message: Some(reason.clone()),
                    ..base
                },
                Ok(Completion::ignored_with(reason)),
            ),
            (Ok(Verdict::Skipped(reason)), _) => (
                CaseResult {
                    status: Status::NotApplicable,
                    message: Some(reason.clone()),
                    skipped: true,
                    ..base
                },
                Ok(Completion::ignored_with(reason)),
            ),
            (Ok(Verdict::Passed), None) => (base, Ok(Completion::Completed)),
            (Ok(Verdict::Passed), Some(_)) => {
                let message = format!(
                    "{name} is listed as an expected failure but passed: remove {name} from the \
                     expected-failures file"
                );
                (
                    CaseResult {
                        status: Status::UnexpectedPass,
                        message: Some(message.clone()),
                        ..base
                    },
                    Err(Failed::from(message)),
                )
            }
            (Err(failure), listed) => {
                let rendered = failure.render();
                match (failure.kind, listed) {
                    (FailureKind::Nonconformant, Some(reason)) => (
                        CaseResult {
                            status: Status::ExpectedFailure,
                            message: Some(format!(
                                "expected failure ({reason}): {}",
                                failure.text()
                            )),
                            layer: failure.layer,
                            expected: failure.expected,
                            actual: failure.actual,
                            ..base
                        },
                        Ok(Completion::Completed),
                    ),
                    (kind, _) => (
                        CaseResult {
                            status: if kind == FailureKind::Harness {
                                Status::Errored
                            } else {
                                Status::Failed
                            },
                            message: Some(failure.text()),
                            layer: failure.layer,
                            expected: failure.expected,
                            actual: failure.actual,
                            ..base
                        },
                        Err(Failed::from(rendered)),
                    ),
                }
            }
        };
        self.push(result);
        completion
    }

    fn push(&self, mut result: CaseResult) {
        if let Some((_, features)) = lock(&self.features).get(&result.name) {
            result.features = features.iter().map(|f| f.id()).collect();
        }
        // Through the masking door below, as the message is.
        result.output = lock(&self.outputs)
            .remove(&result.name)
            .map(|o| redact_secrets(&o));
        // Every result passes the masking door once, here: the reports, the baseline and the
        // Python API all read results from this list, so none of them can show a password a
        // producer or the server echoed.
        result.message = result.message.as_deref().map(redact_secrets);
        for value in [&mut result.expected, &mut result.actual]
            .into_iter()
            .flatten()
        {
            redact_json(value);
        }
        let failed = result.status.is_nonconformant() || result.status == Status::Errored;
        if result.status == Status::ExpectedFailure {
            lock(&self.xfail).insert(result.name.clone());
        }
        lock(&self.results).push(result);
        if let Some(progress) = self.progress.get() {
            progress.tick(failed);
        }
    }
}

/// Run a check, turning a panic into a harness error: a panicking check is a harness bug,
/// not a finding, and must still be recorded.
fn guarded(check: impl FnOnce() -> Result<Verdict, CaseFailure>) -> Result<Verdict, CaseFailure> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("(non-string panic payload)");
        Err(CaseFailure::harness(format!("check panicked: {what}")))
    })
}

/// Run a check on a thread of its own and wait at most `limit` for it. A check still running
/// then is abandoned (its thread is left to finish on its own and its result discarded) and
/// recorded as a harness error, so one stuck case can never hold up the run.
fn bounded(
    limit: Duration,
    check: impl FnOnce() -> Result<Verdict, CaseFailure> + Send + 'static,
) -> Result<Verdict, CaseFailure> {
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("awa-case".into())
        .spawn(move || {
            // The receiver is gone only when the case was abandoned: nothing to report to.
            let _ = tx.send(guarded(check));
        });
    if let Err(e) = spawned {
        return Err(CaseFailure::harness(format!(
            "cannot start a thread for the case: {e}"
        )));
    }
    match rx.recv_timeout(limit) {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(CaseFailure::harness(format!(
            "the case did not finish within {}s (--case-timeout) and was abandoned",
            limit.as_secs_f64()
        ))),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(CaseFailure::harness(
            "the case's thread ended without a result",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expected::Entry;

    fn run(trials: Vec<Trial>) -> libtest_mimic::Conclusion {
        let args = libtest_mimic::Arguments {
            test_threads: Some(1),
            quiet: true,
            logfile: Some(quiet_log("run")),
            ..libtest_mimic::Arguments::default()
        };
        let conclusion = libtest_mimic::run(&args, trials);
        let _ = std::fs::remove_file(quiet_log("run"));
        conclusion
    }

    /// Send the inner libtest output to a scratch file so it does not read like our result.
    fn quiet_log(tag: &str) -> String {
        std::env::temp_dir()
            .join(format!(
                "awa-conformance-outcome-{tag}-{}.log",
                std::process::id()
            ))
            .display()
            .to_string()
    }

    fn status_of(ctx: &RunContext, name: &str) -> Status {
        ctx.results()
            .iter()
            .find(|r| r.name == name)
            .unwrap()
            .status
    }

    #[test]
    fn expected_failures_flip_the_trial_outcome() {
        let xf = ExpectedFailures::from_entries(vec![
            Entry {
                id: "f::listed-fails".into(),
                reason: "known".into(),
            },
            Entry {
                id: "listed-passes".into(),
                reason: "stale".into(),
            },
        ]);
        let ctx = RunContext::new(xf);
        let trials = vec![
            ctx.trial("s", "f::passes".into(), || Ok(())),
            ctx.trial("s", "f::fails".into(), || {
                Err(CaseFailure::mismatch("differs", 1.into(), 2.into()))
            }),
            ctx.trial("s", "f::listed-fails".into(), || Err("differs".into())),
            ctx.trial("s", "f::listed-passes".into(), || Ok(())),
            ctx.trial("s", "f::harness".into(), || {
                Err(CaseFailure::harness("lost"))
            }),
            ctx.trial_with("s", "f::na-runtime".into(), || {
                Ok(Verdict::NotApplicable("no cap".into()))
            }),
            ctx.not_applicable("s", "f::na".into(), "no cap".into()),
            ctx.ignored("s", "f::nodb".into(), "no database".into()),
            ctx.trial("s", "f::panics".into(), || panic!("boom")),
        ];
        let conclusion = run(trials);
        // fails, listed-passes, harness, panics fail the libtest run; the rest do not.
        assert_eq!(conclusion.num_failed, 4);
        assert_eq!(conclusion.num_passed, 2);
        assert_eq!(conclusion.num_ignored, 3);
        assert_eq!(status_of(&ctx, "f::passes"), Status::Passed);
        assert_eq!(status_of(&ctx, "f::fails"), Status::Failed);
        assert_eq!(status_of(&ctx, "f::listed-fails"), Status::ExpectedFailure);
        assert_eq!(status_of(&ctx, "f::listed-passes"), Status::UnexpectedPass);
        assert_eq!(status_of(&ctx, "f::harness"), Status::Errored);
        assert_eq!(status_of(&ctx, "f::na-runtime"), Status::NotApplicable);
        assert_eq!(status_of(&ctx, "f::na"), Status::NotApplicable);
        assert_eq!(status_of(&ctx, "f::nodb"), Status::Ignored);
        assert_eq!(status_of(&ctx, "f::panics"), Status::Errored);
        let results = ctx.results();
        let fails = results.iter().find(|r| r.name == "f::fails").unwrap();
        assert_eq!(fails.expected, Some(1.into()));
        assert_eq!(fails.actual, Some(2.into()));
        let stale = results
            .iter()
            .find(|r| r.name == "f::listed-passes")
            .unwrap();
        assert!(stale
            .message
            .as_deref()
            .unwrap()
            .contains("remove f::listed-passes"));
    }

    #[test]
    fn a_case_over_its_time_bound_is_a_harness_error_and_does_not_hold_up_the_run() {
        let ctx =
            RunContext::with_case_timeout(ExpectedFailures::default(), Duration::from_millis(200));
        let (release, wait) = mpsc::channel::<()>();
        let trials = vec![
            ctx.trial("s", "t::hangs".into(), move || {
                // Blocks until the test ends (the sender is dropped then).
                let _ = wait.recv();
                Ok(())
            }),
            ctx.trial("s", "t::quick".into(), || Ok(())),
        ];
        let conclusion = run(trials);
        assert_eq!(conclusion.num_failed, 1);
        assert_eq!(status_of(&ctx, "t::hangs"), Status::Errored);
        assert_eq!(status_of(&ctx, "t::quick"), Status::Passed);
        let results = ctx.results();
        let hung = results.iter().find(|r| r.name == "t::hangs").unwrap();
        assert!(
            hung.message.as_deref().unwrap().contains("--case-timeout"),
            "{hung:?}"
        );
        drop(release);
    }

    #[test]
    fn after_a_stop_no_case_starts_and_each_says_why() {
        let ctx = RunContext::new(ExpectedFailures::default());
        ctx.request_stop(StopReason::Interrupt);
        let trials = vec![ctx.trial("s", "t::never".into(), || {
            Err(CaseFailure::new("must not run"))
        })];
        let conclusion = run(trials);
        assert_eq!(conclusion.num_failed, 0);
        assert_eq!(status_of(&ctx, "t::never"), Status::Ignored);
        let results = ctx.results();
        assert!(results[0]
            .message
            .as_deref()
            .unwrap()
            .contains("interrupted (SIGINT)"));
    }

    #[test]
    fn expected_failures_are_remembered_for_the_console() {
        let xf = ExpectedFailures::from_entries(vec![Entry {
            id: "f::x".into(),
            reason: "known".into(),
        }]);
        let ctx = RunContext::new(xf);
        let _ = run(vec![
            ctx.trial("s", "f::x".into(), || Err("differs".into())),
            ctx.trial("s", "f::y".into(), || Ok(())),
        ]);
        assert!(ctx.is_expected_failure("f::x"));
        assert!(!ctx.is_expected_failure("f::y"));
    }

    #[test]
    fn filtered_out_trials_leave_no_record() {
        let ctx = RunContext::new(ExpectedFailures::default());
        let trials = vec![
            ctx.trial("s", "a::one".into(), || Ok(())),
            ctx.ignored("s", "b::two".into(), "no database".into()),
        ];
        let args = libtest_mimic::Arguments {
            filter: Some("a::".into()),
            quiet: true,
            logfile: Some(quiet_log("filter")),
            ..libtest_mimic::Arguments::default()
        };
        let _ = libtest_mimic::run(&args, trials);
        let _ = std::fs::remove_file(quiet_log("filter"));
        let names: Vec<String> = ctx.results().into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["a::one"]);
    }
}
