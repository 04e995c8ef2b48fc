//! Lint: every function the kit's own SQL calls is schema-qualified (ADR 0048), every byte of
//! SQL the kit sends is ASCII, and no string literal of it reads differently under
//! `standard_conforming_strings = off` (ADR 0060).
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

use sql_scan::{
    calls, runner_sql_files, rust_sql_literals, schema_sql_files, string_literals, Source,
};

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

/// Where a source holds a character outside ASCII: `origin:line: U+XXXX`.
fn non_ascii(sources: &[Source]) -> Vec<String> {
    sources
        .iter()
        .flat_map(|s| {
            s.sql.lines().enumerate().flat_map(move |(i, line)| {
                line.chars()
                    .filter(|c| !c.is_ascii())
                    .map(move |c| format!("{}:{}: U+{:04X}", s.origin, i + 1, u32::from(c)))
            })
        })
        .collect()
}

/// The server converts every statement from the client encoding to its own before it parses
/// it, comments included: one character the database's encoding lacks (a `section` sign on
/// KOI8R, an ellipsis on LATIN1) fails the statement. So what the kit sends is ASCII: the
/// runner's SQL files, the reference schema it installs, and its SQL string literals.
#[test]
fn the_sql_the_kit_sends_is_ascii() {
    let mut sources = runner_sql_files();
    sources.extend(schema_sql_files());
    sources.extend(rust_sql_literals());
    assert!(sources.len() > 60, "found only {} sources", sources.len());
    let bad = non_ascii(&sources);
    assert!(
        bad.is_empty(),
        "non-ASCII characters in SQL the kit sends (write them in ASCII, e.g. `section 14`, \
         `...`, or chr(N) for a value):\n{}",
        bad.join("\n")
    );
    // The check's own control.
    let src = Source {
        origin: "x.sql".to_owned(),
        sql: "-- docs/contract.md \u{a7}14\nSELECT 1".to_owned(),
    };
    assert_eq!(non_ascii(&[src]), vec!["x.sql:1: U+00A7".to_owned()]);
}

/// The plain string literals (`'...'`, not `E'...'`) holding a backslash, as `origin:line`.
/// Off, `standard_conforming_strings` reads such a literal as an escape string, in a function
/// body too (when the caller's session compiles it): `'\\x00'` is then another value, or
/// `invalid byte sequence ... 0x00`. `E'...'` literals mean the same under either setting.
fn escape_sensitive(sources: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for s in sources {
        let text: String = s
            .sql
            .lines()
            .map(|l| l.split_once("--").map_or(l, |(code, _)| code))
            .collect::<Vec<_>>()
            .join("\n");
        let chars: Vec<char> = text.chars().collect();
        let (mut i, mut line) = (0, 1);
        while i < chars.len() {
            match chars[i] {
                '\n' => line += 1,
                '\'' => {
                    let escape = i > 0 && matches!(chars[i - 1], 'E' | 'e');
                    let start = line;
                    let mut backslash = false;
                    i += 1;
                    while i < chars.len() {
                        match chars[i] {
                            '\'' if chars.get(i + 1) == Some(&'\'') => i += 1,
                            '\'' => break,
                            '\\' => backslash = true,
                            '\n' => line += 1,
                            _ => {}
                        }
                        i += 1;
                    }
                    if backslash && !escape {
                        out.push(format!("{}:{start}", s.origin));
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

#[test]
fn no_literal_depends_on_standard_conforming_strings() {
    let mut sources = runner_sql_files();
    sources.extend(schema_sql_files());
    sources.extend(rust_sql_literals());
    let bad = escape_sensitive(&sources);
    assert!(
        bad.is_empty(),
        "string literals with a backslash, read differently when standard_conforming_strings \
         is off (use pg_catalog.decode('..', 'hex') for bytes, E'..' for escapes, or no \
         backslash):\n{}",
        bad.join("\n")
    );
    // The check's own control: the digest's old tag literal is caught, E'\\n' and a
    // backslash in a comment are not.
    let src = |sql: &str| Source {
        origin: "x.sql".to_owned(),
        sql: sql.to_owned(),
    };
    assert_eq!(
        escape_sensitive(&[src("SELECT 1;\nSELECT '\\x6177'::bytea, 'it''s'")]),
        vec!["x.sql:2".to_owned()]
    );
    assert!(escape_sensitive(&[src("SELECT E'\\n' -- a '\\x' here\nSELECT 'a'")]).is_empty());
}
