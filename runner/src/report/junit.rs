//! The JUnit XML report (via `quick-junit`): one `<testsuite>` per suite.
//!
//! Failed and unexpectedly passing cases are `<failure>`s whose message carries the expected
//! and actual values; harness errors are `<error>`s; not-applicable and ignored cases are
//! `<skipped>` with the reason; expected failures pass with the reason in `system-out`.
//! Provenance goes into `<properties>` of every suite, including the suite `awa-conformance`
//! that stands for the run itself: it holds one `<error>` case `run` when the run ended
//! without a verdict (exit 4, 5, 6) or was interrupted.
//!
//! Values come from outside (vector inputs, adapter and producer answers, the command line),
//! so they may hold characters XML 1.0 cannot carry at all, not even as a character
//! reference: C0 controls but tab, LF and CR, and U+FFFE / U+FFFF (a unique_key vector's args
//! hold U+FFFF). quick-junit escapes markup and passes U+FFFE / U+FFFF through, which makes the
//! whole file unreadable for every consumer exactly when a case fails; and it silently drops
//! every other control character (tab and CR too, DEL, C1, and ANSI sequences with them). So
//! every value goes through [`xml_safe`] before quick-junit sees it, which writes each such
//! character visibly as `\u{XXXX}`, and the finished document once more as a guard. Bidi
//! controls and the line and paragraph separators are written the same way, as everywhere the
//! kit shows foreign text ([`crate::inert`], ADR 0059): XML carries them, but a CI page showing
//! a case name would read it reordered. The JSON report keeps every byte.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{
    NonSuccessKind, Property, Report as JunitReport, TestCase, TestCaseStatus, TestSuite,
};

use super::{Report, Verdict};
use crate::error::Error;
use crate::outcome::{CaseResult, Status};
use crate::shorten;

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
        status.set_message(safe(&message));
        status.set_type(report.verdict.as_str());
        let mut tc = TestCase::new("run", status);
        tc.set_classname("awa-conformance");
        run.add_test_case(tc);
    }
    // A skipped case of a mandatory feature fails the run though no case failed: a failure
    // of its own, so a dashboard shows why the run is red.
    if let Some(finding) = report.features.as_ref().and_then(|f| f.finding.as_deref()) {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_message(safe(finding));
        status.set_type("features");
        let mut tc = TestCase::new("features", status);
        tc.set_classname("awa-conformance");
        run.add_test_case(tc);
    }
    junit.add_test_suite(run);
    for (suite, cases) in by_suite {
        let mut ts = TestSuite::new(safe(suite));
        ts.add_properties(properties.iter().cloned());
        ts.add_test_cases(cases.into_iter().map(test_case));
        junit.add_test_suite(ts);
    }
    let xml = junit.to_string().map_err(|e| Error::Harness {
        detail: format!("cannot serialise the JUnit report: {e}"),
    })?;
    Ok(xml_safe(&xml).into_owned())
}

/// Whether `c` reaches the reader of the JUnit file as it is: an XML 1.0 character (its
/// production `Char`) that quick-junit does not drop, so every control but LF is out, and
/// not a bidi control or separator ([`crate::inert::is_hazard`]). Surrogates cannot occur in
/// a Rust string (a JSON `\udXXX` escape without its pair is refused when parsed, and a lossy
/// decoding makes it U+FFFD).
fn shown_as_is(c: char) -> bool {
    c == '\n'
        || (matches!(c, '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
            && !crate::inert::is_hazard(c))
}

/// [`xml_safe`], owned: what every value handed to quick-junit goes through.
fn safe(text: &str) -> String {
    xml_safe(text).into_owned()
}

/// `text` with every character XML 1.0 forbids, and every control character but LF, written
/// as `\u{XXXX}` (at least four uppercase hex digits), so a reader sees that it was there and
/// which it was.
#[must_use]
pub fn xml_safe(text: &str) -> Cow<'_, str> {
    if text.chars().all(shown_as_is) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if shown_as_is(c) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
        }
    }
    Cow::Owned(out)
}

fn properties(report: &Report) -> Vec<Property> {
    let p = &report.provenance;
    let mut props = vec![
        ("kit_version", p.kit_version.clone()),
        ("kit_contract_version", p.kit_contract_version.to_string()),
        ("vectors_root_sha256", p.vectors_root_sha256.clone()),
        ("vectors_source", p.vectors_source.clone()),
        ("server_version", p.server_version.clone()),
        ("contract_version", p.contract_version.clone()),
        ("database", p.database.clone()),
        ("level", p.level.clone()),
        ("started_at", p.started_at.clone()),
        ("argv", p.argv.join(" ")),
        ("verdict", report.verdict.as_str().to_owned()),
    ]
    .into_iter()
    .chain(
        report
            .features
            .as_ref()
            .map(|f| ("features_checked", f.checked.clone())),
    )
    .chain(
        report
            .database_features
            .as_ref()
            .map(|f| ("database_features_checked", f.checked.clone())),
    )
    .map(|(k, v)| Property::new(k, safe(&v)))
    .collect::<Vec<_>>();
    // `extra` holds what an adapter or producer said about itself (its name and version).
    props.extend(p.extra.iter().map(|(k, v)| Property::new(safe(k), safe(v))));
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
            s.set_message(safe(&failure_text(case)));
            s.set_type(case.status.as_str());
            s.set_description(safe(&failure_text(case)));
            s
        }
        Status::Errored => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_message(safe(&failure_text(case)));
            s.set_type("harness_error");
            s
        }
        Status::NotApplicable | Status::Ignored => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(safe(&format!(
                "{}: {}",
                case.status.as_str(),
                case.message.as_deref().unwrap_or("")
            )));
            s
        }
    };
    let mut tc = TestCase::new(safe(&case.name), status);
    tc.set_classname(safe(&case.suite));
    tc.set_time(Duration::from_secs_f64(case.duration_ms.max(0.0) / 1000.0));
    if case.status == Status::ExpectedFailure {
        tc.set_system_out(safe(&failure_text(case)));
    }
    tc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Provenance, Summary, REPORT_FORMAT, REPORT_FORMAT_VERSION};

    /// XML 1.0's production `Char`: what a consumer accepts.
    fn is_xml_char(c: char) -> bool {
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
    }

    /// One value of every class of character a hostile value can hold: NUL and the other C0
    /// controls (ESC, which also starts an ANSI sequence), the three controls XML allows,
    /// DEL and C1, the non-characters U+FFFE / U+FFFF and U+FDD0, U+FFFD (what a lone
    /// surrogate becomes when decoded lossily), RTL/LTR marks and overrides, BOM, astral
    /// characters, markup characters, and the CDATA end `]]>`.
    fn hostile() -> String {
        let mut s: String = (0u32..0x20).filter_map(char::from_u32).collect();
        s.push_str("\u{7F}\u{80}\u{9F}\u{FFFE}\u{FFFF}\u{FDD0}\u{FFFD}");
        s.push_str("\u{200F}\u{202E}\u{200E}\u{FEFF}\u{10000}\u{1F600}\u{10FFFF}");
        s.push_str("<a href=\"x\">&amp;'</a>]]>\x1b[31mred\x1b[0m");
        s
    }

    fn case(name: &str, status: Status, value: &str) -> CaseResult {
        CaseResult {
            name: format!("unique_key::{name}"),
            suite: "offline".into(),
            status,
            message: Some(format!("differs: {value}")),
            layer: None,
            expected: Some(serde_json::json!({ "args": value })),
            actual: Some(serde_json::json!({ "args": value, "key": value })),
            duration_ms: 1.0,
            features: Vec::new(),
            skipped: false,
            output: None,
        }
    }

    fn report(cases: Vec<CaseResult>, value: &str) -> Report {
        Report {
            format: REPORT_FORMAT,
            format_version: REPORT_FORMAT_VERSION,
            verdict: Verdict::Error,
            exit_code: 6,
            provenance: Provenance {
                kit_version: "0".into(),
                kit_contract_version: 1,
                vectors_root_sha256: "00".into(),
                vectors_source: "embedded".into(),
                server_version: value.into(),
                contract_version: "n/a".into(),
                database: "n/a".into(),
                level: "n/a".into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                argv: vec!["awa-conformance".into(), value.into()],
                extra: [("adapter".to_owned(), value.to_owned())].into(),
            },
            summary: Summary::of(&cases, 0, 1.0),
            run_errors: vec![format!("adapter: {value}")],
            features: None,
            database_features: None,
            cases,
            timings: None,
        }
    }

    /// Every case status, each carrying `value` in every field JUnit shows.
    fn every_status(value: &str) -> Report {
        let cases = Status::ALL
            .iter()
            .enumerate()
            .map(|(i, s)| case(&format!("uk-{i}-{value}"), *s, value))
            .collect();
        report(cases, value)
    }

    /// The checks a consumer makes: only XML 1.0 characters, and a document that parses.
    fn assert_well_formed(xml: &str) -> quick_junit::Report {
        if let Some((at, c)) = xml.char_indices().find(|(_, c)| !is_xml_char(*c)) {
            panic!(
                "U+{:04X} at byte {at} is not an XML 1.0 character",
                u32::from(c)
            );
        }
        quick_junit::Report::deserialize_from_str(xml).expect("the JUnit report parses")
    }

    #[test]
    fn forbidden_characters_are_written_visibly_and_the_rest_kept() {
        assert_eq!(xml_safe("plain <&> text\n"), "plain <&> text\n");
        assert_eq!(
            xml_safe("\t\r\u{7F}\u{9B}"),
            "\\u{0009}\\u{000D}\\u{007F}\\u{009B}"
        );
        assert!(matches!(xml_safe("ok \u{1F600}"), Cow::Borrowed(_)));
        assert_eq!(xml_safe("a\u{0}b\u{1b}c"), "a\\u{0000}b\\u{001B}c");
        assert_eq!(
            xml_safe("\u{FFFE}\u{FFFF}\u{FFFD}"),
            "\\u{FFFE}\\u{FFFF}\u{FFFD}"
        );
        // Every code point: a Rust char is never a surrogate, so this is all of them.
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let shown = xml_safe(c.encode_utf8(&mut [0; 4])).into_owned();
            assert!(shown.chars().all(is_xml_char), "U+{:04X}", u32::from(c));
            if shown_as_is(c) {
                assert_eq!(shown, c.to_string());
            } else {
                assert_eq!(shown, format!("\\u{{{:04X}}}", u32::from(c)));
            }
        }
    }

    #[test]
    fn a_report_of_hostile_values_is_well_formed_and_shows_them() {
        let value = hostile();
        let xml = render(&every_status(&value)).unwrap();
        let parsed = assert_well_formed(&xml);
        let shown = xml_safe(&value).into_owned();
        // Nothing was dropped silently: the failure message holds the whole value, visibly.
        let failure = parsed
            .test_suites
            .iter()
            .flat_map(|s| &s.test_cases)
            .find_map(|c| match &c.status {
                TestCaseStatus::NonSuccess {
                    kind: NonSuccessKind::Failure,
                    message,
                    ..
                } => message.as_ref().map(|m| m.as_str().to_owned()),
                _ => None,
            })
            .expect("a failure");
        // A parser may normalise an LF inside an attribute.
        let norm = |s: &str| s.replace('\n', " ");
        assert!(
            norm(&failure).contains(&norm(&format!("differs: {shown}"))),
            "{failure}"
        );
        assert!(failure.contains("\\u{0000}") && failure.contains("\\u{FFFF}"));
        assert!(failure.contains("\\u{001B}[31mred"), "{failure}");
        assert!(failure.contains("\\u{0009}") && failure.contains("\\u{000D}"));
        assert!(failure.contains("\\u{007F}\\u{0080}\\u{009F}"), "{failure}");
        for c in ['\u{1F600}', '\u{10FFFF}', '\u{FFFD}'] {
            assert!(failure.contains(c), "U+{:04X} lost", u32::from(c));
        }
        // Bidi controls are shown, not applied: a case name cannot read reversed.
        for c in ['\u{200F}', '\u{202E}', '\u{200E}'] {
            assert!(!failure.contains(c), "U+{:04X} raw", u32::from(c));
            assert!(
                failure.contains(&format!("\\u{{{:04X}}}", u32::from(c))),
                "{failure}"
            );
        }
        let props = &parsed.test_suites[0].properties;
        assert!(
            props.iter().any(|p| norm(p.value.as_str()) == norm(&shown)),
            "{props:?}"
        );
    }

    #[test]
    fn every_class_in_every_field_and_a_megabyte_value_stay_well_formed() {
        // Every code point that is escaped, and both ends of every range that is kept (the
        // per-code-point check above covers the rest), then a 1 MB value ending in forbidden
        // characters: shortened in JUnit, never a parse error.
        let ends = [0x20, 0x7E, 0xA0, 0xD7FF, 0xE000, 0xFFFD, 0x10000, 0x10FFFF];
        let sweep: String = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| !shown_as_is(*c) || ends.contains(&u32::from(*c)))
            .collect();
        // 31 C0 controls (all but LF), DEL and the 32 C1 controls, U+FFFE and U+FFFF, the
        // two separators and the twelve bidi controls.
        assert_eq!(
            sweep.chars().count(),
            31 + 33 + 2 + 2 + 12 + ends.len(),
            "{sweep:?}"
        );
        assert_well_formed(&render(&every_status(&sweep)).unwrap());
        let mut big = "x".repeat(1 << 20);
        big.push_str("\u{0}\u{FFFF}");
        let failed = case("uk-big", Status::Failed, &big);
        assert_well_formed(&render(&report(vec![failed], "n/a")).unwrap());
    }
}
