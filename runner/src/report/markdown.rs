//! The Markdown summary (for `$GITHUB_STEP_SUMMARY`): verdict, provenance, counts, failures
//! grouped by suite and family, long byte values shortened (the JSON report keeps them).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{one_line, Report};
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
        "Kit {} (contract v{}), vectors `{}` ({}), server {}, server contract version {}, \
         level checked `{}`, started {}.\n",
        p.kit_version,
        p.kit_contract_version,
        p.vectors_root_sha256,
        p.vectors_source,
        p.server_version,
        p.contract_version,
        p.level,
        p.started_at
    );
    let _ = writeln!(md, "| status | cases |\n|---|---:|");
    for status in Status::ALL {
        let _ = writeln!(md, "| {} | {} |", status.as_str(), s.count(status));
    }
    let _ = writeln!(md, "| **total** | **{}** |", s.total);
    if s.filtered_out > 0 {
        let _ = writeln!(md, "\n{} cases filtered out.", s.filtered_out);
    }
    for error in &report.run_errors {
        let _ = writeln!(md, "\n**Harness error:** {}", one_line(error));
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
            let _ = writeln!(md, "#### `{group}`: {} failing\n", cases.len());
            for case in cases {
                if listed == MAX_LISTED {
                    break;
                }
                listed += 1;
                let _ = write!(
                    md,
                    "- `{}` ({}): {}",
                    case.name,
                    case.status.as_str(),
                    one_line(case.message.as_deref().unwrap_or(""))
                );
                if let (Some(e), Some(a)) = (&case.expected, &case.actual) {
                    let _ = write!(
                        md,
                        " (expected `{}`, actual `{}`)",
                        one_line(&shorten::display(e)),
                        one_line(&shorten::display(a))
                    );
                }
                md.push('\n');
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
            one_line(first.message.as_deref().unwrap_or(""))
        );
    }
    md
}

/// The group of a case: its name without the last `::` segment (the vector or case ID).
fn group_of(name: &str) -> &str {
    name.rsplit_once("::").map_or(name, |(group, _)| group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_suite_and_family() {
        assert_eq!(group_of("sql::function::rp-0123"), "sql::function");
        assert_eq!(group_of("unique_key::uk-0123"), "unique_key");
        assert_eq!(group_of("adapter::coverage"), "adapter");
        assert_eq!(group_of("plain"), "plain");
    }
}
