//! `report badge`: an SVG badge and a shields.io endpoint JSON from one report, generated
//! locally so a producer can commit or publish them ("awa contract v1 · conformant ·
//! core+uniqueness", "xfail 3"). The text is the report's verdict; nothing is re-judged.

use std::path::Path;

use minijinja::{context, Environment};

use super::{is_problem, PageError, ReportIn};

const TEMPLATE: &str = include_str!("../../../templates/badge.svg");

/// The SVG's file name inside `--out DIR`.
pub const SVG_FILE: &str = "awa-conformance.svg";
/// The shields endpoint JSON's file name inside `--out DIR`.
pub const ENDPOINT_FILE: &str = "awa-conformance.json";

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
    let count = |s: &str| r.cases.iter().filter(|c| c.status == s).count();
    let problems = r.cases.iter().filter(|c| is_problem(&c.status)).count();
    let xfail = count("expected_failure");
    let mut parts = vec![r.verdict.clone()];
    if r.verdict == "nonconformant" && problems > 0 {
        parts.push(format!("{problems} failed"));
    }
    if p.level != super::super::NOT_AVAILABLE {
        parts.push(p.level.clone());
    }
    if xfail > 0 {
        parts.push(format!("xfail {xfail}"));
    }
    let color = match (r.verdict.as_str(), xfail) {
        ("conformant", 0) => "#4c1",
        ("conformant", _) => "#dfb317",
        _ => "#e05d44",
    };
    Badge {
        label: format!("awa contract {contract}"),
        message: parts.join(" · "),
        color: color.to_owned(),
    }
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
    env.get_template("badge.svg")
        .and_then(|t| {
            t.render(context! {
                label => b.label, message => b.message, color => b.color,
                lw => width(&b.label), rw => width(&b.message),
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
        assert_eq!(b.color, "#e05d44");
        let svg = svg(&b).unwrap();
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.contains(">nonconformant · 2 failed · core+uniqueness</text>"));
        assert!(endpoint(&b).contains("\"schemaVersion\":1"));
    }
}
