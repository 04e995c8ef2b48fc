//! Step 4 of a run: decide the exit code from the results, write the reports and the
//! baseline, and say how the run ended.

use awa_conformance_vectors::VectorSet;
use libtest_mimic::FormatSetting;

use crate::cli::RunArgs;
use crate::error::Error;
use crate::exit;
use crate::interrupt::StopReason;
use crate::outcome::{
    RunContext, Status, PROVENANCE_CONTRACT_VERSION, PROVENANCE_DATABASE, PROVENANCE_LEVEL,
    PROVENANCE_SERVER_VERSION,
};
use crate::report::{
    baseline, redact::redact_secrets, Provenance, Report, Summary, Targets, Verdict, NOT_AVAILABLE,
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
    let mut exit_code = exit_code_for(&cases, &run_errors, ran.libtest_failed);
    if let Some(e) = &error {
        exit_code = e.exit_code();
    } else if exit_code == exit::SUCCESS {
        if let Some((code, message)) = nothing_checked(&cases, lt) {
            exit_code = code;
            report_error(&message);
            run_errors.push(message);
        }
    }
    if let Some(reason) = stopped {
        exit_code = reason.exit_code();
        warn(&format!(
            "{}: cases in flight finished, the rest did not run; the database was cleaned up",
            reason.describe()
        ));
    }
    let report = build_report(
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
        exit_code,
        stopped.is_some(),
        run_errors,
        cases,
    );
    if let Some(path) = &args.write_baseline {
        if error.is_none() {
            baseline::write_baseline(ctx.expected_failures(), path, &report.cases)?;
        }
    }
    let written = report.write_all(&Targets {
        json: args.report_json.as_deref(),
        junit: args.junit.as_deref(),
        markdown: args.markdown.as_deref(),
    });
    // After an error before the trials the error line alone says it all.
    if lt.format != Some(FormatSetting::Json) && error.is_none() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{}", report.summary_line());
    }
    match (error, written) {
        // The run's own error is the one to report; a failed report write comes second.
        (Some(e), Err(w)) => {
            report_error(&w.to_string());
            if stopped.is_some() {
                report_error(&e.to_string());
                return Ok(exit_code);
            }
            Err(e)
        }
        (Some(e), Ok(())) if stopped.is_none() => Err(e),
        (Some(e), Ok(())) => {
            report_error(&e.to_string());
            Ok(exit_code)
        }
        (None, Err(w)) if stopped.is_some() => {
            report_error(&w.to_string());
            Ok(exit_code)
        }
        (None, Err(w)) => Err(w),
        (None, Ok(())) => Ok(exit_code),
    }
}

/// A run that executed no case checked nothing and is never a pass: the exit code and the
/// message, or `None` when some case ran.
fn nothing_checked(
    cases: &[crate::outcome::CaseResult],
    lt: &libtest_mimic::Arguments,
) -> Option<(u8, String)> {
    let executed = cases
        .iter()
        .any(|c| !matches!(c.status, Status::NotApplicable | Status::Ignored));
    if executed {
        return None;
    }
    if let Some(no_db) = cases.iter().find(|c| c.status == Status::Ignored) {
        return Some((
            exit::DATABASE_UNAVAILABLE,
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
        exit::USAGE,
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
    exit_code: u8,
    interrupted: bool,
    run_errors: Vec<String>,
    cases: Vec<crate::outcome::CaseResult>,
) -> Report {
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
        argv: argv.iter().map(|a| redact_secrets(a)).collect(),
        extra: provenance_extra,
    };
    Report {
        format: crate::report::REPORT_FORMAT,
        format_version: crate::report::REPORT_FORMAT_VERSION,
        verdict: if interrupted {
            Verdict::Interrupted
        } else {
            Verdict::from_exit_code(exit_code)
        },
        exit_code,
        provenance,
        summary,
        run_errors,
        cases,
    }
}

/// The run's exit code: harness errors (6) outrank nonconformance (1). libtest's own
/// failure flag is consulted too, so a failing trial that somehow recorded nothing still
/// fails the run (libtest-mimic's 101 becomes our 1).
fn exit_code_for(
    cases: &[crate::outcome::CaseResult],
    run_errors: &[String],
    libtest_failed: bool,
) -> u8 {
    if !run_errors.is_empty() || cases.iter().any(|c| c.status == Status::Errored) {
        exit::HARNESS
    } else if libtest_failed || cases.iter().any(|c| c.status.is_nonconformant()) {
        exit::NONCONFORMANT
    } else {
        exit::SUCCESS
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
            expected: None,
            actual: None,
            duration_ms: 0.0,
        }
    }

    #[test]
    fn exit_code_priorities() {
        let ok = [
            case(Status::Passed),
            case(Status::ExpectedFailure),
            case(Status::Ignored),
        ];
        assert_eq!(exit_code_for(&ok, &[], false), exit::SUCCESS);
        // libtest-mimic's failure (its exit code would be 101) becomes our 1.
        assert_eq!(exit_code_for(&ok, &[], true), exit::NONCONFORMANT);
        assert_eq!(
            exit_code_for(&[case(Status::Failed)], &[], true),
            exit::NONCONFORMANT
        );
        assert_eq!(
            exit_code_for(&[case(Status::UnexpectedPass)], &[], true),
            exit::NONCONFORMANT
        );
        let mixed = [case(Status::Failed), case(Status::Errored)];
        assert_eq!(exit_code_for(&mixed, &[], true), exit::HARNESS);
        assert_eq!(exit_code_for(&ok, &["lost".into()], false), exit::HARNESS);
    }
}
