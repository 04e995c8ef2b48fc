//! Step 4 of a run: decide the verdict from the results and the exit code from the verdict,
//! write the reports and the baseline, and say how the run ended.

use awa_conformance_vectors::VectorSet;
use libtest_mimic::FormatSetting;

use crate::cli::RunArgs;
use crate::contract::features::Side;
use crate::error::Error;
use crate::exit;
use crate::interrupt::StopReason;
use crate::outcome::{
    RunContext, Status, PROVENANCE_CONTRACT_VERSION, PROVENANCE_DATABASE, PROVENANCE_LEVEL,
    PROVENANCE_SERVER_VERSION,
};
use crate::report::{
    baseline, FeaturesSection, Provenance, Report, Summary, Verdict, NOT_AVAILABLE,
};

use super::execute::Ran;
use super::plan::Plan;
use super::{report_error, warn};

/// Conclude the run (step 4): the exit code, the reports and the baseline. `outcome` is what
/// execution returned, `stopped` why the run was stopped early, if it was.
pub(super) fn finish(
    plan: &Plan,
    args: &RunArgs,
    argv: &[String],
    outcome: Result<Ran, Error>,
    stopped: Option<StopReason>,
) -> Result<u8, Error> {
    let ctx = &plan.ctx;
    let lt = &args.libtest;
    let cases = ctx.results();
    let mut run_errors = ctx.run_errors();
    let (ran, error) = match outcome {
        Ok(ran) => (ran, None),
        Err(e) if stopped.is_some() || e.exit_code() >= exit::DATABASE_UNAVAILABLE => {
            run_errors.push(e.to_string());
            (Ran::default(), Some(e))
        }
        // Usage and vector problems stop the run before anything ran: no report.
        Err(e) => return Err(e),
    };
    let mut conclusion = judge(&cases, &run_errors, ran.libtest_failed);
    let features = FeaturesSection::of(&ctx.coverage(Side::Producer, &cases));
    if let Some(finding) = features.as_ref().and_then(|f| f.finding.as_deref()) {
        report_error(finding);
        conclusion = conclusion.with_mandatory_skips();
    }
    if let Some(e) = &error {
        conclusion = Conclusion::Failed(e.exit_code());
    } else if conclusion == Conclusion::Conformant && stopped.is_none() {
        // A stopped run did not check the rest because it was stopped, not for want of a
        // database: "nothing was checked" would name the wrong cause (the stop is reported).
        if let Some((needs_database, message)) = nothing_checked(&cases, lt) {
            conclusion = Conclusion::NothingChecked { needs_database };
            report_error(&message);
            run_errors.push(message);
        }
    }
    if let Some(reason) = stopped {
        conclusion = Conclusion::Interrupted(reason);
        warn(&format!(
            "{}: cases in flight finished, the rest did not run; the database was cleaned up",
            reason.describe()
        ));
    }
    let mut report = build_report(
        ctx,
        &plan.set,
        plan.vectors_source.clone(),
        plan.started_at.clone(),
        argv,
        Summary::of(
            &cases,
            ran.filtered_out,
            plan.started.elapsed().as_secs_f64() * 1000.0,
        ),
        &conclusion,
        run_errors,
        features,
        cases,
    );
    // Every output is written even when another one fails; a failure is a harness error
    // that the reports written after it show, and the JSON report comes last (write_all), so
    // the exit code it states, the summary line's and the process's are the same number.
    let mut unwritten = Vec::new();
    if let Some(path) = &args.write_baseline {
        if error.is_none() {
            if let Err(e) = baseline::write_baseline(ctx.expected_failures(), path, &report.cases) {
                report.record_unwritten(&e);
                unwritten.push(e);
            }
        }
    }
    unwritten.extend(report.write_all(&super::plan::targets(args)));
    for failed in &unwritten {
        report_error(&failed.to_string());
    }
    // After an error before the trials the error line alone says it all.
    if lt.format != Some(FormatSetting::Json) && error.is_none() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{}", report.summary_line());
    }
    match error {
        // main reports it and exits with its code, which the reports already state.
        Some(e) if stopped.is_none() => Err(e),
        Some(e) => {
            report_error(&e.to_string());
            Ok(report.exit_code)
        }
        None => Ok(report.exit_code),
    }
}

/// The report of a check run outside the CLI (the Python `check_producer`): the same judge,
/// the same "nothing checked is never a pass" rule and the same report model as a CLI run, so
/// the two cannot conclude differently on the same results.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors build_report; one caller (the bindings)"
)]
pub fn library_report(
    ctx: &RunContext,
    set: &VectorSet,
    vectors_source: String,
    started_at: String,
    argv: &[String],
    summary: Summary,
    mut run_errors: Vec<String>,
    cases: Vec<crate::outcome::CaseResult>,
) -> Report {
    // The catalogue the features are counted against: every producer case of the vectors.
    crate::producer::declare_features(ctx, &crate::producer::cases::cases(set));
    let features = FeaturesSection::of(&ctx.coverage(Side::Producer, &cases));
    let mut conclusion = judge(&cases, &run_errors, false);
    if features.as_ref().is_some_and(|f| f.finding.is_some()) {
        conclusion = conclusion.with_mandatory_skips();
    }
    if conclusion == Conclusion::Conformant {
        if let Some((needs_database, message)) =
            nothing_checked(&cases, &libtest_mimic::Arguments::default())
        {
            conclusion = Conclusion::NothingChecked { needs_database };
            run_errors.push(message);
        }
    }
    build_report(
        ctx,
        set,
        vectors_source,
        started_at,
        argv,
        summary,
        &conclusion,
        run_errors,
        features,
        cases,
    )
}

/// A run that executed no case checked nothing and is never a pass: whether a database would
/// have helped, and the message; `None` when some case ran.
fn nothing_checked(
    cases: &[crate::outcome::CaseResult],
    lt: &libtest_mimic::Arguments,
) -> Option<(bool, String)> {
    let executed = cases
        .iter()
        .any(|c| !matches!(c.status, Status::NotApplicable | Status::Ignored));
    if executed {
        return None;
    }
    if let Some(no_db) = cases.iter().find(|c| c.status == Status::Ignored) {
        return Some((
            true,
            format!(
                "nothing was checked: every selected case needs a database: {}",
                no_db.message.as_deref().unwrap_or("no database")
            ),
        ));
    }
    let why = cases
        .first()
        .and_then(|c| c.message.as_deref())
        .unwrap_or("no case selected");
    let filter = lt
        .filter
        .as_deref()
        .map_or_else(String::new, |f| format!(" by filter {f:?}"));
    Some((
        false,
        format!(
            "nothing was checked: every one of the {} cases selected{filter} is not applicable \
             (e.g. {why}); `awa-conformance --list` prints every case name",
            cases.len()
        ),
    ))
}

/// The report of a run, from its recorded cases and provenance.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename them"
)]
fn build_report(
    ctx: &RunContext,
    set: &VectorSet,
    vectors_source: String,
    started_at: String,
    argv: &[String],
    summary: Summary,
    conclusion: &Conclusion,
    run_errors: Vec<String>,
    features: Option<FeaturesSection>,
    cases: Vec<crate::outcome::CaseResult>,
) -> Report {
    // The database side is counted when one of its cases ran: without a database every
    // `sql::` case is ignored, and a run that never reached a database says nothing of one.
    let database = ctx.coverage(Side::Database, &cases);
    let database_features = database
        .reached()
        .then(|| FeaturesSection::of(&database))
        .flatten();
    let mut provenance_extra = ctx.provenance();
    let mut take = |key: &str| {
        provenance_extra
            .remove(key)
            .unwrap_or_else(|| NOT_AVAILABLE.to_owned())
    };
    let provenance = Provenance {
        kit_version: env!("CARGO_PKG_VERSION").to_owned(),
        kit_contract_version: awa_conformance_core::CONTRACT_VERSION,
        vectors_root_sha256: set.manifest.root_sha256.clone(),
        vectors_source,
        server_version: take(PROVENANCE_SERVER_VERSION),
        contract_version: take(PROVENANCE_CONTRACT_VERSION),
        database: take(PROVENANCE_DATABASE),
        level: take(PROVENANCE_LEVEL),
        started_at,
        argv: argv
            .iter()
            .map(|a| crate::redact::redact_secrets(a))
            .collect(),
        extra: provenance_extra,
    };
    Report {
        format: crate::report::REPORT_FORMAT,
        format_version: crate::report::REPORT_FORMAT_VERSION,
        verdict: conclusion.verdict(),
        exit_code: conclusion.exit_code(),
        provenance,
        summary,
        run_errors,
        features,
        database_features,
        cases,
        timings: ctx.timings(),
    }
}

/// How a run ended: its verdict, with the detail the exit code needs. Decided from the
/// results ([`judge`]), then overridden, in this order of priority, by an error that ended
/// the run, by a run that checked nothing, and by a stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conclusion {
    /// Every selected case passed (listed expected failures may still fail).
    Conformant,
    /// A case failed, or a listed expected failure passed.
    Nonconformant,
    /// A case errored or the harness recorded a run error: the results are incomplete.
    HarnessError,
    /// No case was executed: every one was not applicable, or needed a database.
    NothingChecked {
        /// Every executed-to-be case needed a database, and there was none.
        needs_database: bool,
    },
    /// An error ended the run before a verdict; its exit code ([`Error::exit_code`]).
    Failed(u8),
    /// The run was stopped early (signal, closed stdout).
    Interrupted(StopReason),
}

impl Conclusion {
    /// The conclusion once the producer is known to have skipped a case of a mandatory
    /// feature ([`crate::contract::features::Coverage::mandatory_skips`]): a finding about the
    /// producer, so a pass becomes nonconformant; worse conclusions stand.
    fn with_mandatory_skips(self) -> Self {
        match self {
            Conclusion::Conformant => Conclusion::Nonconformant,
            other => other,
        }
    }

    /// The exit code of a run that ended so: the one place a run's exit code is decided
    /// (the codes and their meanings are [`crate::exit`]).
    fn exit_code(self) -> u8 {
        match self {
            Conclusion::Conformant => exit::SUCCESS,
            Conclusion::Nonconformant => exit::NONCONFORMANT,
            Conclusion::HarnessError => exit::HARNESS,
            Conclusion::NothingChecked {
                needs_database: true,
            } => exit::DATABASE_UNAVAILABLE,
            Conclusion::NothingChecked {
                needs_database: false,
            } => exit::USAGE,
            Conclusion::Failed(code) => code,
            Conclusion::Interrupted(reason) => reason.exit_code(),
        }
    }

    /// The verdict the reports show.
    fn verdict(self) -> Verdict {
        match self {
            Conclusion::Conformant => Verdict::Conformant,
            Conclusion::Nonconformant => Verdict::Nonconformant,
            Conclusion::HarnessError
            | Conclusion::NothingChecked { .. }
            | Conclusion::Failed(_) => Verdict::Error,
            Conclusion::Interrupted(reason) if reason.is_interruption() => Verdict::Interrupted,
            Conclusion::Interrupted(_) => Verdict::Error,
        }
    }
}

/// The verdict of the recorded results alone: harness errors outrank nonconformance, which
/// outranks a pass. libtest's own failure flag is consulted too, so a failing trial that
/// somehow recorded nothing still fails the run (libtest-mimic's 101 becomes our 1).
fn judge(
    cases: &[crate::outcome::CaseResult],
    run_errors: &[String],
    libtest_failed: bool,
) -> Conclusion {
    if !run_errors.is_empty() || cases.iter().any(|c| c.status == Status::Errored) {
        Conclusion::HarnessError
    } else if libtest_failed || cases.iter().any(|c| c.status.is_nonconformant()) {
        Conclusion::Nonconformant
    } else {
        Conclusion::Conformant
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::CaseResult;

    fn case(status: Status) -> CaseResult {
        CaseResult {
            name: "x".into(),
            suite: "s".into(),
            status,
            message: None,
            layer: None,
            expected: None,
            actual: None,
            duration_ms: 0.0,
            features: Vec::new(),
            skipped: false,
            output: None,
        }
    }

    #[test]
    fn exit_code_priorities() {
        let ok = [
            case(Status::Passed),
            case(Status::ExpectedFailure),
            case(Status::Ignored),
        ];
        assert_eq!(judge(&ok, &[], false).exit_code(), exit::SUCCESS);
        // libtest-mimic's failure (its exit code would be 101) becomes our 1.
        assert_eq!(judge(&ok, &[], true).exit_code(), exit::NONCONFORMANT);
        assert_eq!(
            judge(&[case(Status::Failed)], &[], true).exit_code(),
            exit::NONCONFORMANT
        );
        assert_eq!(
            judge(&[case(Status::UnexpectedPass)], &[], true).exit_code(),
            exit::NONCONFORMANT
        );
        let mixed = [case(Status::Failed), case(Status::Errored)];
        assert_eq!(judge(&mixed, &[], true).exit_code(), exit::HARNESS);
        assert_eq!(
            judge(&ok, &["lost".into()], false).exit_code(),
            exit::HARNESS
        );
    }

    #[test]
    fn the_verdict_comes_from_the_results_and_the_exit_code_from_the_verdict() {
        assert_eq!(
            judge(&[case(Status::Passed)], &[], false).verdict(),
            Verdict::Conformant
        );
        assert_eq!(
            judge(&[case(Status::Failed)], &[], true).verdict(),
            Verdict::Nonconformant
        );
        assert_eq!(
            judge(&[case(Status::Errored)], &[], true).verdict(),
            Verdict::Error
        );
        let nothing = Conclusion::NothingChecked {
            needs_database: true,
        };
        assert_eq!(
            (nothing.verdict(), nothing.exit_code()),
            (Verdict::Error, exit::DATABASE_UNAVAILABLE)
        );
        let nothing = Conclusion::NothingChecked {
            needs_database: false,
        };
        assert_eq!(nothing.exit_code(), exit::USAGE);
        assert_eq!(
            Conclusion::Failed(exit::SCHEMA_INVALID).verdict(),
            Verdict::Error
        );
        let stopped = Conclusion::Interrupted(StopReason::StdoutClosed);
        assert_eq!(
            (stopped.verdict(), stopped.exit_code()),
            (Verdict::Interrupted, exit::STDOUT_CLOSED)
        );
    }
}
