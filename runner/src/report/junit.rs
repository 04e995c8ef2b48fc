//! The JUnit XML report (via `quick-junit`): one `<testsuite>` per suite.
//!
//! Failed and unexpectedly passing cases are `<failure>`s whose message carries the expected
//! and actual values; harness errors are `<error>`s; not-applicable and ignored cases are
//! `<skipped>` with the reason; expected failures pass with the reason in `system-out`.
//! Provenance goes into `<properties>` of every suite, including the suite `awa-conformance`
//! that stands for the run itself: it holds one `<error>` case `run` when the run ended
//! without a verdict (exit 4, 5, 6) or was interrupted.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{
    NonSuccessKind, Property, Report as JunitReport, TestCase, TestCaseStatus, TestSuite,
};

use super::{shorten, Report, Verdict};
use crate::error::Error;
use crate::outcome::{CaseResult, Status};

/// The JUnit XML text.
pub fn render(report: &Report) -> Result<String, Error> {
    let mut junit = JunitReport::new("awa-conformance");
    junit.set_time(Duration::from_secs_f64(
        report.summary.duration_ms.max(0.0) / 1000.0,
    ));
    let mut by_suite: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for case in &report.cases {
        by_suite.entry(case.suite.as_str()).or_default().push(case);
    }
    let properties = properties(report);
    // The run as a whole: its provenance even when no case ran, and an <error> when it
    // ended without a verdict (exit 4, 5, 6) or was stopped, so a dashboard never shows an
    // empty green run.
    let mut run = TestSuite::new("awa-conformance");
    run.add_properties(properties.iter().cloned());
    if matches!(report.verdict, Verdict::Error | Verdict::Interrupted) {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        let message = if report.run_errors.is_empty() {
            format!("{} (exit {})", report.verdict.as_str(), report.exit_code)
        } else {
            report.run_errors.join("\n")
        };
        status.set_message(message);
        status.set_type(report.verdict.as_str());
        let mut tc = TestCase::new("run", status);
        tc.set_classname("awa-conformance");
        run.add_test_case(tc);
    }
    junit.add_test_suite(run);
    for (suite, cases) in by_suite {
        let mut ts = TestSuite::new(suite);
        ts.add_properties(properties.iter().cloned());
        ts.add_test_cases(cases.into_iter().map(test_case));
        junit.add_test_suite(ts);
    }
    junit.to_string().map_err(|e| Error::Harness {
        detail: format!("cannot serialise the JUnit report: {e}"),
    })
}

fn properties(report: &Report) -> Vec<Property> {
    let p = &report.provenance;
    let mut props = vec![
        Property::new("kit_version", p.kit_version.as_str()),
        Property::new("kit_contract_version", p.kit_contract_version.to_string()),
        Property::new("vectors_root_sha256", p.vectors_root_sha256.as_str()),
        Property::new("vectors_source", p.vectors_source.as_str()),
        Property::new("server_version", p.server_version.as_str()),
        Property::new("contract_version", p.contract_version.as_str()),
        Property::new("database", p.database.as_str()),
        Property::new("level", p.level.as_str()),
        Property::new("started_at", p.started_at.as_str()),
        Property::new("argv", p.argv.join(" ")),
        Property::new("verdict", report.verdict.as_str()),
    ];
    props.extend(
        p.extra
            .iter()
            .map(|(k, v)| Property::new(k.as_str(), v.as_str())),
    );
    props
}

/// The failure text: message, then expected and actual values (long ones shortened; the
/// JSON report keeps them whole).
fn failure_text(case: &CaseResult) -> String {
    let mut text = case.message.clone().unwrap_or_default();
    if let Some(expected) = &case.expected {
        text.push_str(&format!("\nexpected: {}", shorten::display(expected)));
    }
    if let Some(actual) = &case.actual {
        text.push_str(&format!("\nactual: {}", shorten::display(actual)));
    }
    text
}

fn test_case(case: &CaseResult) -> TestCase {
    let status = match case.status {
        Status::Passed => TestCaseStatus::success(),
        Status::ExpectedFailure => TestCaseStatus::success(),
        Status::Failed | Status::UnexpectedPass => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(failure_text(case));
            s.set_type(case.status.as_str());
            s.set_description(failure_text(case));
            s
        }
        Status::Errored => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_message(failure_text(case));
            s.set_type("harness_error");
            s
        }
        Status::NotApplicable | Status::Ignored => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!(
                "{}: {}",
                case.status.as_str(),
                case.message.as_deref().unwrap_or("")
            ));
            s
        }
    };
    let mut tc = TestCase::new(case.name.as_str(), status);
    tc.set_classname(case.suite.as_str());
    tc.set_time(Duration::from_secs_f64(case.duration_ms.max(0.0) / 1000.0));
    if case.status == Status::ExpectedFailure {
        tc.set_system_out(failure_text(case));
    }
    tc
}
