//! `report diff OLD.json NEW.json`: what changed between two runs, as compact Markdown for
//! `$GITHUB_STEP_SUMMARY` or a pull-request comment: cases that newly fail, newly pass, and
//! stopped being checked (gone, not applicable or ignored where they were checked before).
//!
//! The names of the two implementations (a producer's own hello, or a label), their levels and
//! the case names come from the reports: they go through [`crate::report::foreign`], so a
//! name cannot add a heading, HTML, a link or a mention to the comment (ADR 0059). Verdicts and
//! statuses are words [`super::read`] checked against closed sets.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{is_problem, Comparison};
use crate::report::foreign::{code, text};

/// How many case names each list shows before "and N more".
pub const SHOWN: usize = 50;

/// The changes from `old` to `new`, by case name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Changes {
    /// Not a problem before (or absent), a problem now: `(name, old, new)`.
    pub newly_failing: Vec<(String, String, String)>,
    /// A problem or expected failure before, passed now.
    pub newly_passing: Vec<(String, String, String)>,
    /// Checked before (passed, failed, xfail...), not now (absent, not applicable, ignored).
    pub stopped: Vec<(String, String, String)>,
}

fn checked(status: &str) -> bool {
    !matches!(status, "not_applicable" | "ignored")
}

/// Compare two runs' statuses.
#[must_use]
pub fn changes(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Changes {
    let mut c = Changes::default();
    let absent = "absent".to_owned();
    for (name, n) in new {
        let o = old.get(name).unwrap_or(&absent);
        if is_problem(n) && !is_problem(o) {
            c.newly_failing.push((name.clone(), o.clone(), n.clone()));
        } else if n == "passed" && (is_problem(o) || o == "expected_failure") {
            c.newly_passing.push((name.clone(), o.clone(), n.clone()));
        }
    }
    for (name, o) in old {
        let n = new.get(name).unwrap_or(&absent);
        if checked(o) && (n == "absent" || !checked(n)) {
            c.stopped.push((name.clone(), o.clone(), n.clone()));
        }
    }
    c
}

/// The Markdown comparison of the first two implementations of `cmp` (old, new).
#[must_use]
pub fn markdown(cmp: &Comparison) -> String {
    let (Some(old), Some(new), Some(old_cases), Some(new_cases)) = (
        cmp.implementations.first(),
        cmp.implementations.get(1),
        cmp.statuses.first(),
        cmp.statuses.get(1),
    ) else {
        return String::new();
    };
    let c = changes(old_cases, new_cases);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### awa-conformance: {} → {}\n",
        text(&old.name),
        text(&new.name)
    );
    let _ = writeln!(out, "| | old | new |\n|---|---|---|");
    let _ = writeln!(
        out,
        "| verdict | {} (exit {}) | {} (exit {}) |",
        text(&old.verdict),
        old.exit_code,
        text(&new.verdict),
        new.exit_code
    );
    let _ = writeln!(
        out,
        "| level | {} | {} |",
        text(&old.level),
        text(&new.level)
    );
    for s in super::STATUSES {
        let (a, b) = (
            old.totals.get(s).copied().unwrap_or(0),
            new.totals.get(s).copied().unwrap_or(0),
        );
        if a != 0 || b != 0 {
            let _ = writeln!(out, "| {} | {a} | {b} |", s.replace('_', " "));
        }
    }
    out.push('\n');
    for (title, list) in [
        ("Newly failing", &c.newly_failing),
        ("Newly passing", &c.newly_passing),
        ("Stopped being checked", &c.stopped),
    ] {
        let _ = writeln!(out, "**{title}: {}**\n", list.len());
        for (name, o, n) in list.iter().take(SHOWN) {
            let _ = writeln!(
                out,
                "- {}: {} → {}",
                code(name),
                o.replace('_', " "),
                n.replace('_', " ")
            );
        }
        if list.len() > SHOWN {
            let _ = writeln!(out, "- … and {} more", list.len() - SHOWN);
        }
        if !list.is_empty() {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn each_kind_of_change_is_found() {
        let old = m(&[
            ("a", "passed"),
            ("b", "failed"),
            ("c", "passed"),
            ("d", "passed"),
            ("e", "expected_failure"),
        ]);
        let new = m(&[
            ("a", "failed"),
            ("b", "passed"),
            ("c", "not_applicable"),
            ("e", "passed"),
            ("f", "errored"),
        ]);
        let c = changes(&old, &new);
        let names =
            |v: &[(String, String, String)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&c.newly_failing), ["a", "f"]);
        assert_eq!(names(&c.newly_passing), ["b", "e"]);
        assert_eq!(names(&c.stopped), ["c", "d"]);
    }
}
