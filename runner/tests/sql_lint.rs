//! Lint: every function the kit's own SQL calls is schema-qualified (ADR 0048).
//!
//! The runner's sessions pin `search_path` to `pg_catalog, pg_temp`, and on top of that every
//! call in runner/sql and in the SQL string literals of runner/src and bindings/src names its
//! schema (`pg_catalog.format(…)`, `@S@.insert_job(…)`), as pg_dump does since CVE-2018-1058:
//! either defence alone keeps a planted `public.format_type(oid, text)` from running. The
//! shadow test (db_shadow) checks the pin on a real database; this lint checks the text.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers"
)]

mod sql_scan;

use sql_scan::{calls, runner_sql_files, rust_sql_literals, string_literals, Source};

fn unqualified(sources: &[Source]) -> Vec<String> {
    sources
        .iter()
        .flat_map(|s| {
            calls(&s.sql)
                .into_iter()
                .filter(|c| !c.qualified)
                .map(move |c| format!("{} (line {} of the SQL): {}(", s.origin, c.line, c.name))
        })
        .collect()
}

#[test]
fn runner_sql_files_qualify_every_call() {
    let files = runner_sql_files();
    assert!(
        files.len() > 40,
        "found only {} runner/sql files",
        files.len()
    );
    let bad = unqualified(&files);
    assert!(
        bad.is_empty(),
        "unqualified function calls (write pg_catalog.NAME, or @S@.NAME for a contract \
         function):\n{}",
        bad.join("\n")
    );
}

#[test]
fn rust_sql_literals_qualify_every_call() {
    let literals = rust_sql_literals();
    assert!(
        literals.len() > 20,
        "found only {} SQL literals",
        literals.len()
    );
    let bad = unqualified(&literals);
    assert!(
        bad.is_empty(),
        "unqualified function calls in SQL string literals (write pg_catalog.NAME):\n{}",
        bad.join("\n")
    );
}

/// The lint's own control: the CVE-shaped call of the old procs.sql is caught, and syntax,
/// alias lists, literals and comments are not mistaken for calls.
#[test]
fn the_lint_catches_an_unqualified_call() {
    let old = "-- procs: format_type(x) in a comment\n\
               SELECT ARRAY(SELECT format_type(u.t, NULL) FROM unnest($1::oid[]) \
               WITH ORDINALITY AS u(t, n)), coalesce(x, 'count(') , pg_catalog.length('a')\n\
               FROM @S@.insert_job($1::text) WHERE x IN (1) AND NOT EXISTS (SELECT 1)";
    let found: Vec<(String, bool)> = calls(old)
        .into_iter()
        .map(|c| (c.name, c.qualified))
        .collect();
    assert_eq!(
        found,
        vec![
            ("format_type".to_owned(), false),
            ("unnest".to_owned(), false),
            ("length".to_owned(), true),
            ("insert_job".to_owned(), true),
        ]
    );
    let src = Source {
        origin: "procs.sql".to_owned(),
        sql: old.to_owned(),
    };
    assert_eq!(unqualified(&[src]).len(), 2);
}

#[test]
fn rust_literals_are_read_whole() {
    let rs = "let a = \"SELECT pg_advisory_lock($1, \\\n    $2)\";\n// \"SELECT count(*)\"\nlet c = 'x'; let r = r#\"SELECT \"q\"(1)\"#;";
    let lits = string_literals(rs);
    assert_eq!(lits[0], (1, "SELECT pg_advisory_lock($1, $2)".to_owned()));
    assert_eq!(lits.len(), 2, "{lits:?}");
    assert_eq!(lits[1].1, "SELECT \"q\"(1)");
}
