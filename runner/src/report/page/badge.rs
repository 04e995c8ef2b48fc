//! `report badge`: an SVG badge and a shields.io endpoint JSON from one report, generated
//! locally so a producer can commit or publish them ("awa contract v1 · conformant ·
//! core+uniqueness", "xfail 3").
//!
//! The badge is drawn from the report's cases, not from its `verdict` field (ADR 0059): no
//! case checked, or a case failed, errored or unexpectedly passed, is red and never says
//! "conformant", whatever the field says ([`super::read`] also refuses a report whose
//! verdict disagrees with its cases, naming the file). Its words are the kit's own but for
//! the level, which comes from the report: written on one line with control and bidi
//! characters visible ([`crate::inert`]), and the characters XML 1.0 cannot carry too, so the
//! SVG is well-formed whatever the report holds.

use std::path::Path;

use minijinja::{context, Environment};

use super::{is_problem, PageError, ReportIn};

const TEMPLATE: &str = include_str!("../../../templates/badge.svg");

/// The SVG's file name inside `--out DIR`.
pub const SVG_FILE: &str = "awa-conformance.svg";
/// The shields endpoint JSON's file name inside `--out DIR`.
pub const ENDPOINT_FILE: &str = "awa-conformance.json";

/// At most this many characters of the report's level are shown: a badge is a glance.
const LEVEL_SHOWN: usize = 60;

/// Red: not conformant, or not known to be.
const RED: &str = "#e05d44";

/// What a badge says.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Badge {
    /// Left side: `awa contract v1`.
    pub label: String,
    /// Right side: `conformant · core+uniqueness · xfail 3`.
    pub message: String,
    /// A shields colour name or hex.
    pub color: String,
}

/// What the cases of a report say, in the badge's first word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At least one case checked, and none failed, errored or unexpectedly passed.
    Conformant,
    /// A case failed, errored or unexpectedly passed.
    Nonconformant,
    /// No case at all, or only not-applicable and ignored ones.
    NothingChecked,
    /// The run says it ended without a verdict: the cases it kept are not all it meant to run.
    Error,
    /// The run says it was stopped early.
    Interrupted,
}

impl State {
    fn of(r: &ReportIn) -> Self {
        let problems = r.cases.iter().any(|c| is_problem(&c.status));
        let checked = r
            .cases
            .iter()
            .any(|c| !matches!(c.status.as_str(), "not_applicable" | "ignored"));
        // A skipped case of a mandatory feature is a finding though no case failed.
        let problems = problems || r.coverage().is_some_and(|c| c.mandatory_skips().is_some());
        // The field can only make a badge redder, never greener.
        match (r.verdict.as_str(), problems, checked) {
            ("interrupted", _, _) => Self::Interrupted,
            (_, true, _) => Self::Nonconformant,
            (_, false, false) => Self::NothingChecked,
            ("conformant", false, true) => Self::Conformant,
            _ => Self::Error,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Self::Conformant => "conformant",
            Self::Nonconformant => "nonconformant",
            Self::NothingChecked => "nothing checked",
            Self::Error => "error",
            Self::Interrupted => "interrupted",
        }
    }
}

/// The badge of one report.
#[must_use]
pub fn of(r: &ReportIn) -> Badge {
    let p = &r.provenance;
    let contract = if p.contract_version.chars().all(|c| c.is_ascii_digit())
        && !p.contract_version.is_empty()
    {
        format!("v{}", p.contract_version)
    } else {
        format!("v{}", p.kit_contract_version)
    };
    let state = State::of(r);
    let problems = r.cases.iter().filter(|c| is_problem(&c.status)).count();
    let xfail = r
        .cases
        .iter()
        .filter(|c| c.status == "expected_failure")
        .count();
    let mut parts = vec![state.word().to_owned()];
    if problems > 0 {
        parts.push(format!("{problems} failed"));
    }
    if p.level != super::super::NOT_AVAILABLE {
        parts.push(level(&p.level));
    }
    // A run also names the features it checked whole, and says when some were not: the
    // producer's or adapter's when it had one (the implementation under test), else the
    // database's.
    if let Some(coverage) = r.coverage().or_else(|| r.database_coverage()) {
        let summary = coverage.summary();
        let whole = summary
            .split(';')
            .next()
            .unwrap_or_default()
            .replace(", ", "+");
        parts.push(level(&format!("features {whole}")));
        if summary.contains(';') {
            parts.push("not all checked".to_owned());
        }
    }
    if xfail > 0 {
        parts.push(format!("xfail {xfail}"));
    }
    let color = match (state, xfail) {
        (State::Conformant, 0) => "#4c1",
        (State::Conformant, _) => "#dfb317",
        _ => RED,
    };
    Badge {
        label: format!("awa contract {contract}"),
        message: parts.join(" · "),
        color: color.to_owned(),
    }
}

/// The report's level as the badge shows it: one line, control and bidi characters and the
/// characters XML cannot carry written as `\u{XXXX}`, at most [`LEVEL_SHOWN`] characters.
fn level(level: &str) -> String {
    let shown = xml_line(level);
    if shown.chars().count() <= LEVEL_SHOWN {
        return shown.into_owned();
    }
    let mut cut: String = shown.chars().take(LEVEL_SHOWN - 1).collect();
    cut.push('…');
    cut
}

/// `text` on one line with every control and bidi character, and the two non-characters
/// XML 1.0 forbids (U+FFFE, U+FFFF), written visibly: what the SVG may hold (the template's
/// HTML escaping covers the markup characters).
fn xml_line(text: &str) -> std::borrow::Cow<'_, str> {
    crate::inert::escaped(text, |c| {
        crate::inert::is_hazard(c) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    })
}

/// Text width in pixels, as shields estimates Verdana 11px: about 6.5 px a character, plus
/// padding.
fn width(text: &str) -> u64 {
    let chars = u64::try_from(text.chars().count()).unwrap_or(u64::MAX / 16);
    chars.saturating_mul(13).div_ceil(2).saturating_add(10)
}

/// The SVG.
///
/// # Errors
/// [`PageError::Render`] (a kit bug).
pub fn svg(b: &Badge) -> Result<String, PageError> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    let err = |e: minijinja::Error| PageError::Render {
        what: "the badge",
        reason: e.to_string(),
    };
    env.add_template("badge.svg", TEMPLATE).map_err(err)?;
    // Whoever built the badge, the SVG stays well-formed.
    let (label, message, color) = (xml_line(&b.label), xml_line(&b.message), xml_line(&b.color));
    env.get_template("badge.svg")
        .and_then(|t| {
            t.render(context! {
                label => label, message => message, color => color,
                lw => width(&label), rw => width(&message),
            })
        })
        .map_err(err)
}

/// The shields.io endpoint JSON (`https://img.shields.io/endpoint?url=...`).
#[must_use]
pub fn endpoint(b: &Badge) -> String {
    let mut s = serde_json::json!({
        "schemaVersion": 1,
        "label": b.label,
        "message": b.message,
        "color": b.color.trim_start_matches('#'),
    })
    .to_string();
    s.push('\n');
    s
}

/// Write both files into `out` (creating it).
///
/// # Errors
/// [`PageError`] naming the file.
pub fn write(r: &ReportIn, out: &Path) -> Result<Badge, PageError> {
    std::fs::create_dir_all(out).map_err(|e| PageError::Write {
        path: out.display().to_string(),
        reason: e.to_string(),
    })?;
    let b = of(r);
    super::write(&out.join(SVG_FILE), svg(&b)?.as_bytes())?;
    super::write(&out.join(ENDPOINT_FILE), endpoint(&b).as_bytes())?;
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(verdict: &str, statuses: &[&str]) -> ReportIn {
        let cases: Vec<_> = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| serde_json::json!({"name": format!("producer::x::{i}"), "status": s}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "format": "awa-conformance-report", "format_version": 1,
            "verdict": verdict, "exit_code": 0,
            "provenance": {
                "kit_version": "0.1.0", "kit_contract_version": 1, "vectors_root_sha256": "ab",
                "server_version": "18.4", "contract_version": "1", "database": "dsn (flag)",
                "level": "core+uniqueness", "started_at": "2026-12-03T00:00:00Z"
            },
            "cases": cases
        }))
        .unwrap()
    }

    #[test]
    fn the_badge_says_the_verdict_level_and_expected_failures() {
        let b = of(&report(
            "conformant",
            &["passed", "expected_failure", "expected_failure"],
        ));
        assert_eq!(b.label, "awa contract v1");
        assert_eq!(b.message, "conformant · core+uniqueness · xfail 2");
        let b = of(&report("nonconformant", &["passed", "failed", "errored"]));
        assert_eq!(b.message, "nonconformant · 2 failed · core+uniqueness");
        assert_eq!(b.color, RED);
        let svg = svg(&b).unwrap();
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.contains(">nonconformant · 2 failed · core+uniqueness</text>"));
        assert!(endpoint(&b).contains("\"schemaVersion\":1"));
    }

    #[test]
    fn the_cases_decide_the_colour_whatever_the_verdict_field_says() {
        for (statuses, word) in [
            (&["failed", "failed"][..], "nonconformant · 2 failed"),
            (&["passed", "errored"][..], "nonconformant · 1 failed"),
            (&["unexpected_pass"][..], "nonconformant · 1 failed"),
            (&[][..], "nothing checked"),
            (&["not_applicable", "ignored"][..], "nothing checked"),
        ] {
            let b = of(&report("conformant", statuses));
            assert_eq!(b.color, RED, "{statuses:?}: {b:?}");
            assert!(b.message.starts_with(word), "{statuses:?}: {b:?}");
            assert!(!b.message.starts_with("conformant"), "{b:?}");
        }
        // The field can make a badge red but never green.
        let b = of(&report("error", &["passed"]));
        assert_eq!(
            (b.message.as_str(), b.color.as_str()),
            ("error · core+uniqueness", RED)
        );
        let b = of(&report("conformant\u{7}", &["passed"]));
        assert_eq!(b.color, RED, "{b:?}");
        assert!(of(&report("conformant", &["passed"])).color == "#4c1");
    }

    /// A producer report: `features` on each case and the catalogue counts in its rows.
    fn producer_report(cases: serde_json::Value, rows: serde_json::Value) -> ReportIn {
        let mut r = report("conformant", &[]);
        r.cases = serde_json::from_value(cases).unwrap();
        r.features = Some(serde_json::from_value(serde_json::json!({"rows": rows})).unwrap());
        r
    }

    #[test]
    fn a_database_badge_names_the_database_features_and_a_producer_run_its_own() {
        let case = |suite: &str, f: &str, status: &str| {
            serde_json::json!({"name": format!("{suite}::{f}::{status}"), "suite": suite,
                               "status": status, "features": [f]})
        };
        let db_cases = [
            "ordering-key",
            "concurrency-key",
            "precedence",
            "refusals",
            "catalog",
        ]
        .iter()
        .map(|f| case("sql", f, "passed"))
        .chain([case("sql", "move-shard", "not_applicable")]);
        let mut r = report("conformant", &[]);
        r.cases = serde_json::from_value(serde_json::Value::Array(db_cases.collect())).unwrap();
        let db = r.database_coverage().unwrap();
        assert_eq!(
            db.summary(),
            "core; move-shard not checked (1 of 1 not applicable)"
        );
        assert!(r.coverage().is_none(), "sql:: cases are no producer's");
        assert_eq!(
            of(&r).message,
            "conformant · core+uniqueness · features core · not all checked"
        );
        // Beside a producer's cases the badge speaks for the producer; the database side is
        // counted apart and never lends the producer its core.
        let mut cases = r.cases.clone();
        cases.extend(
            serde_json::from_value::<Vec<super::super::CaseIn>>(serde_json::json!([case(
                "producer",
                "ordering-key",
                "passed"
            )]))
            .unwrap(),
        );
        r.cases = cases;
        let producer = r.coverage().unwrap();
        assert!(!producer.core_checked());
        assert!(
            of(&r).message.contains("features ordering-key"),
            "{}",
            of(&r).message
        );
        // Every case ignored (no database reached): no database side at all.
        let mut none = report("conformant", &[]);
        none.cases =
            serde_json::from_value(serde_json::json!([case("sql", "catalog", "ignored")])).unwrap();
        assert!(none.database_coverage().is_none());
    }

    #[test]
    fn a_producer_badge_names_its_features_and_a_skipped_core_case_is_red() {
        let rows = serde_json::json!([
            {"feature": "ordering-key", "mandatory": true, "cases": 1, "checked": 0,
             "skipped": 0, "not_applicable": 0, "errored": 0, "checked_whole": true},
            {"feature": "concurrency-key", "mandatory": true, "cases": 1, "checked": 0,
             "skipped": 0, "not_applicable": 0, "errored": 0, "checked_whole": true},
            {"feature": "precedence", "mandatory": true, "cases": 1, "checked": 0,
             "skipped": 0, "not_applicable": 0, "errored": 0, "checked_whole": true},
            {"feature": "payload", "mandatory": true, "cases": 1, "checked": 0,
             "skipped": 0, "not_applicable": 0, "errored": 0, "checked_whole": true},
            {"feature": "bulk", "mandatory": false, "cases": 2, "checked": 0,
             "skipped": 0, "not_applicable": 0, "errored": 0, "checked_whole": true}
        ]);
        let case = |f: &str, status: &str, skipped: bool| {
            serde_json::json!({"name": format!("producer::{f}::{status}"), "status": status,
                               "features": [f], "skipped": skipped})
        };
        let all = |ck: serde_json::Value| {
            serde_json::json!([
                case("ordering-key", "passed", false),
                ck,
                case("precedence", "passed", false),
                case("payload", "passed", false),
                case("bulk", "passed", false)
            ])
        };
        // The rows' own `checked_whole` is never believed: the cases are counted.
        let b = of(&producer_report(
            all(case("concurrency-key", "passed", false)),
            rows.clone(),
        ));
        assert_eq!(
            b.message,
            "conformant · core+uniqueness · features core · not all checked"
        );
        assert_eq!(b.color, "#4c1");
        let b = of(&producer_report(
            all(case("concurrency-key", "not_applicable", true)),
            rows,
        ));
        assert_eq!(b.color, RED, "{b:?}");
        assert!(
            b.message.starts_with(
                "nonconformant · core+uniqueness · features ordering-key+precedence+payload"
            ),
            "{b:?}"
        );
    }

    #[test]
    fn a_hostile_level_gives_a_well_formed_one_line_badge() {
        let mut r = report("conformant", &["passed"]);
        r.provenance.level = format!(
            "core\u{0}\u{7}\n\u{1b}[31m\u{FFFF}\u{202E}<x&\"'>{}",
            "y".repeat(500)
        );
        let b = of(&r);
        let svg = svg(&b).unwrap();
        let is_xml_char = |c: char| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
        assert!(svg.chars().all(is_xml_char), "{svg:?}");
        assert!(!svg.contains('\u{202E}') && !svg.contains("<x"), "{svg}");
        assert!(
            b.message
                .contains("core\\u{0000}\\u{0007}\\u{000A}\\u{001B}[31m\\u{FFFF}\\u{202E}"),
            "{b:?}"
        );
        assert!(b.message.chars().count() < 120, "{b:?}");
    }
}
