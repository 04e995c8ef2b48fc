//! The generated parts of docs/contract.md §16 and docs/input-space.md, from the input space
//! ([`super::space`]) and the two mutant tables that show each class caught: the SQL mutants
//! (tests/mutants/sql.json, proved by runner/tests/db_mutants.rs) and the Python example
//! producer's runs (tests/mutants/python-runs.json, proved by scripts/python-mutants.py).
//!
//! A class counts as caught on a side only when a mutant row names its own case exactly
//! (`sql::field::<id>`, `producer::field::<id>`) among the cases that must fail: a row that
//! fails a whole family proves nothing about one class. Test code: `AWA_BLESS=1` rewrites the
//! documents instead of failing on stale ones.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value as Json;

use super::space::{classes, Expect};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn read(rel: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{rel}")).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Class ID -> the mutants whose must-fail list names the class's case on that side.
fn caught_by(table: &str, list: &str, name: &str, prefix: &str) -> BTreeMap<String, Vec<String>> {
    let doc: Json = serde_json::from_str(&read(table)).unwrap();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in doc[list].as_array().unwrap() {
        for case in row["must_fail"].as_array().unwrap() {
            if let Some(id) = case.as_str().unwrap().strip_prefix(prefix) {
                let m = row[name].as_str().unwrap().to_owned();
                let ms = out.entry(id.to_owned()).or_default();
                if !ms.contains(&m) {
                    ms.push(m);
                }
            }
        }
    }
    out
}

fn sql() -> BTreeMap<String, Vec<String>> {
    caught_by("tests/mutants/sql.json", "mutants", "name", "sql::field::")
}

fn python() -> BTreeMap<String, Vec<String>> {
    caught_by(
        "tests/mutants/python-runs.json",
        "runs",
        "mutant",
        "producer::field::",
    )
}

fn must(e: Expect) -> String {
    match e {
        Expect::Stored => "stored as asked".to_owned(),
        Expect::Refused(s) => format!("refused, `{s}`"),
    }
}

/// A value as a reader can see it ([`super::space::Class::shown`]): table pipes, control
/// characters and combining marks escaped.
fn shown(c: &super::space::Class) -> String {
    c.shown()
        .replace('|', "\\|")
        .replace('\u{301}', "\\u{301}")
        .replace('\u{2028}', "\\u2028")
}

fn contract_part() -> String {
    let mut out = String::from(
        "| class | what it is | value sent | the database must |\n|---|---|---|---|\n",
    );
    for c in classes() {
        writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            c.id,
            c.what,
            shown(&c),
            must(c.expect)
        )
        .unwrap();
    }
    out
}

fn coverage_part() -> String {
    let (sql, py) = (sql(), python());
    let mut out = String::from(
        "| class | cases that send it | SQL mutants (database side) | example-producer mutants (python) |\n|---|---|---|---|\n",
    );
    let list = |m: Option<&Vec<String>>| match m {
        Some(v) if !v.is_empty() => v
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "**none**".to_owned(),
    };
    for c in classes() {
        writeln!(
            out,
            "| `{}` | `sql::field::{}`, `producer::field::{}` | {} | {} |",
            c.id,
            c.id,
            c.id,
            list(sql.get(c.id)),
            list(py.get(c.id))
        )
        .unwrap();
    }
    out
}

/// Replace the text between `begin` and `end` in `rel` with `body`, or fail when it differs
/// (AWA_BLESS=1 writes it).
fn generated(rel: &str, begin: &str, end: &str, body: &str) {
    let doc = read(rel);
    let (b, e) = (
        doc.find(begin)
            .unwrap_or_else(|| panic!("{rel}: no {begin}")),
        doc.find(end).unwrap_or_else(|| panic!("{rel}: no {end}")),
    );
    let fresh = format!("{}{begin}\n{body}{}", &doc[..b], &doc[e..]);
    if fresh == doc {
        return;
    }
    if std::env::var("AWA_BLESS").as_deref() == Ok("1") {
        std::fs::write(format!("{ROOT}/{rel}"), fresh).unwrap();
        return;
    }
    panic!("{rel} is stale: rerun with AWA_BLESS=1 cargo test -p awa-conformance --lib space_doc");
}

#[test]
fn contract_lists_every_class() {
    generated(
        "docs/contract.md",
        "<!-- input-space:begin -->",
        "<!-- input-space:end -->",
        &contract_part(),
    );
}

#[test]
fn coverage_table_is_current() {
    generated(
        "docs/input-space.md",
        "<!-- input-space-coverage:begin -->",
        "<!-- input-space-coverage:end -->",
        &coverage_part(),
    );
}

#[test]
fn every_class_is_caught_on_both_sides() {
    let (sql, py) = (sql(), python());
    for c in classes() {
        assert!(
            sql.get(c.id).is_some_and(|v| !v.is_empty()),
            "{}: no SQL mutant in tests/mutants/sql.json names sql::field::{} in must_fail",
            c.id,
            c.id
        );
        assert!(
            py.get(c.id).is_some_and(|v| !v.is_empty()),
            "{}: no run in tests/mutants/python-runs.json names producer::field::{} in must_fail",
            c.id,
            c.id
        );
    }
}

#[test]
fn mutant_tables_name_only_known_classes() {
    let known: Vec<&str> = classes().iter().map(|c| c.id).collect();
    for (side, map) in [("sql.json", sql()), ("python-runs.json", python())] {
        for id in map.keys() {
            assert!(
                known.contains(&id.as_str()),
                "tests/mutants/{side} names a field class {id} that docs/contract.md §16 does not have"
            );
        }
    }
}
