//! The Markdown summary (for `$GITHUB_STEP_SUMMARY`): verdict, provenance, counts, failures
//! grouped by suite and family, long byte values shortened (the JSON report keeps them).
//!
//! Everything a producer, adapter or server said (provenance values, case messages, stderr,
//! run errors, values) goes through [`super::foreign`]: it reaches the page as text, never as
//! headings, HTML, links or mentions (ADR 0059).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::foreign::{code, message, text};
use super::Report;
use crate::outcome::{CaseResult, Status};
use crate::shorten;

/// At most this many failures are listed; GitHub caps a step summary at 1 MiB.
const MAX_LISTED: usize = 200;

/// The Markdown text.
pub fn render(report: &Report) -> String {
    let mut md = String::new();
    let p = &report.provenance;
    let s = &report.summary;
    // Writing to a String cannot fail.
    // "conformant" only speaks for the cases that ran: say so when some did not.
    let not_run = s.ignored + s.not_applicable;
    let caveat = if not_run > 0 {
        format!(", {not_run} cases not run or not applicable")
    } else {
        String::new()
    };
    let _ = writeln!(
        md,
        "## awa-conformance: {} (exit {}{caveat})\n",
        report.verdict.as_str(),
        report.exit_code
    );
    let _ = writeln!(
        md,
        "Kit {} (contract v{}), vectors {} ({}), server {}, server contract version {}, \
         level checked {}, started {}.\n",
        text(&p.kit_version),
        p.kit_contract_version,
        code(&p.vectors_root_sha256),
        text(&p.vectors_source),
        text(&p.server_version),
        text(&p.contract_version),
        code(&p.level),
        text(&p.started_at)
    );
    for (title, f) in [
        ("Features checked", &report.features),
        ("Database features checked", &report.database_features),
    ] {
        if let Some(f) = f {
            features(&mut md, title, f);
        }
    }
    let _ = writeln!(md, "| status | cases |\n|---|---:|");
    for status in Status::ALL {
        let _ = writeln!(md, "| {} | {} |", status.as_str(), s.count(status));
    }
    let _ = writeln!(md, "| **total** | **{}** |", s.total);
    if s.filtered_out > 0 {
        let _ = writeln!(md, "\n{} cases filtered out.", s.filtered_out);
    }
    for error in &report.run_errors {
        let (first, rest) = message(error, "");
        let _ = writeln!(md, "\n**Harness error:** {first}");
        if let Some(rest) = rest {
            md.push_str(&rest);
        }
    }
    let failures: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| {
            matches!(
                c.status,
                Status::Failed | Status::UnexpectedPass | Status::Errored
            )
        })
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(md, "\n### Failures\n");
        // One group per suite and family (`sql::function`, `adapter::ordering_shard`,
        // `unique_key`): a broken hash fails a whole family, and reads as one line.
        let mut groups: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
        for case in &failures {
            groups.entry(group_of(&case.name)).or_default().push(case);
        }
        let mut listed = 0;
        for (group, cases) in &groups {
            let _ = writeln!(md, "#### {}: {} failing\n", code(group), cases.len());
            for case in cases {
                if listed == MAX_LISTED {
                    break;
                }
                listed += 1;
                // A message may carry a producer's stderr: its first line in the item, the
                // rest fenced below it, inside the item.
                let (first, rest) = message(case.message.as_deref().unwrap_or(""), "  ");
                let _ = write!(
                    md,
                    "- {} ({}): {first}",
                    code(&case.name),
                    case.status.as_str(),
                );
                if let (Some(e), Some(a)) = (&case.expected, &case.actual) {
                    let _ = write!(
                        md,
                        " (expected {}, actual {})",
                        code(&shorten::display(e)),
                        code(&shorten::display(a))
                    );
                }
                md.push('\n');
                if let Some(rest) = rest {
                    md.push_str(&rest);
                }
            }
            md.push('\n');
        }
        if failures.len() > MAX_LISTED {
            let _ = writeln!(
                md,
                "… and {} more (see the JSON report)",
                failures.len() - MAX_LISTED
            );
        }
    }
    let ignored: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Ignored)
        .collect();
    if let Some(first) = ignored.first() {
        let _ = writeln!(
            md,
            "\n{} cases were not run: {}",
            ignored.len(),
            text(first.message.as_deref().unwrap_or(""))
        );
    }
    md
}

/// The group of a case: its name without the last `::` segment (the vector or case ID).
fn group_of(name: &str) -> &str {
    name.rsplit_once("::").map_or(name, |(group, _)| group)
}

/// One side's features: the line, the finding, and a row per feature.
fn features(md: &mut String, title: &str, f: &crate::report::FeaturesSection) {
    // The kit's own words (feature names and counts): nothing foreign to make inert.
    let _ = writeln!(md, "**{title}:** {}\n", f.checked);
    if let Some(finding) = &f.finding {
        let _ = writeln!(md, "**Nonconformant:** {finding}\n");
    }
    let _ = writeln!(
        md,
        "| feature | mandatory | cases | checked | skipped | not applicable | errored | \
         not selected |\n|---|---|---:|---:|---:|---:|---:|---:|"
    );
    for r in &f.rows {
        let t = &r.tally;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.feature,
            if r.mandatory { "yes" } else { "no" },
            t.cases,
            t.checked,
            t.skipped,
            t.not_applicable,
            t.errored,
            t.not_selected()
        );
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Provenance, Summary, Verdict, REPORT_FORMAT, REPORT_FORMAT_VERSION};

    const HOSTILE: &str = "x\n# heading\n<img src=x onerror=alert(1)> [x](javascript:alert(1)) \
                           @someone \u{202E}rtl\r";

    fn hostile_report() -> Report {
        let case = |name: &str, message: &str| CaseResult {
            name: name.to_owned(),
            suite: "producer".into(),
            status: Status::Failed,
            message: Some(message.to_owned()),
            layer: None,
            expected: Some(serde_json::json!({ "k": HOSTILE })),
            actual: Some(serde_json::json!("b")),
            duration_ms: 1.0,
            features: Vec::new(),
            skipped: false,
            output: None,
        };
        let cases = vec![
            case(
                "producer::x::one",
                &format!("one-line {}", HOSTILE.replace('\n', " ")),
            ),
            case(
                "producer::x::<b>two</b>@me",
                &format!("first{HOSTILE}\nstderr:\n```\n{HOSTILE}"),
            ),
        ];
        Report {
            format: REPORT_FORMAT,
            format_version: REPORT_FORMAT_VERSION,
            verdict: Verdict::Error,
            exit_code: 6,
            provenance: Provenance {
                kit_version: "0.1.0".into(),
                kit_contract_version: 1,
                vectors_root_sha256: "ab".into(),
                vectors_source: HOSTILE.into(),
                server_version: HOSTILE.into(),
                contract_version: HOSTILE.into(),
                database: "n/a".into(),
                level: HOSTILE.into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                argv: vec![],
                extra: [("producer".to_owned(), HOSTILE.to_owned())].into(),
            },
            summary: Summary::of(&cases, 0, 1.0),
            run_errors: vec![format!("producer: {HOSTILE}\nits stderr:\n{HOSTILE}")],
            features: None,
            database_features: None,
            cases,
            timings: None,
        }
    }

    /// The lines of `md` outside fenced code blocks (inside, nothing is markup).
    fn outside_fences(md: &str) -> Vec<&str> {
        let mut fence: Option<&str> = None;
        let mut lines = Vec::new();
        for line in md.lines() {
            let trimmed = line.trim_start();
            match fence {
                Some(f) if trimmed == f => fence = None,
                Some(_) => {}
                None if trimmed.starts_with("```") => {
                    fence = Some(trimmed.trim_end_matches(|c: char| c != '`'));
                }
                None => lines.push(line),
            }
        }
        assert!(fence.is_none(), "a fence is left open in {md}");
        lines
    }

    #[test]
    fn what_producers_and_servers_said_is_inert_in_the_summary() {
        let md = render(&hostile_report());
        assert!(!md.contains('\u{202E}') && !md.contains('\r'), "{md}");
        assert!(md.contains("\\u{202E}rtl"), "{md}");
        for line in outside_fences(&md) {
            for raw in ["<img", "<b>", "](javascript", "@someone", "@me"] {
                assert!(!line.contains(raw), "{raw} outside a fence: {line}");
            }
            // The only headings are the summary's own.
            if line.starts_with('#') {
                assert!(
                    line.starts_with("## awa-conformance: ")
                        || line.starts_with("### Failures")
                        || line.starts_with("#### "),
                    "injected heading: {line}"
                );
            }
        }
        // The hostile texts stayed on their lines: the provenance paragraph is one line.
        let provenance = md.lines().find(|l| l.starts_with("Kit ")).unwrap();
        assert!(
            provenance.ends_with("started 2026-01-01T00:00:00Z."),
            "{provenance}"
        );
        // A multi-line message: its first line in the item, the rest fenced inside the item.
        assert!(md.contains("(failed): firstx (expected "), "{md}");
        assert!(md.contains("\n\n  ````text\n  # heading\n"), "{md}");
        assert!(md.contains("\n  stderr:\n  ```\n  x\n"), "{md}");
    }

    #[test]
    fn groups_are_suite_and_family() {
        assert_eq!(group_of("sql::function::rp-0123"), "sql::function");
        assert_eq!(group_of("unique_key::uk-0123"), "unique_key");
        assert_eq!(group_of("adapter::coverage"), "adapter");
        assert_eq!(group_of("plain"), "plain");
    }
}
