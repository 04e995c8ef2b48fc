//! The SQL the kit sends, read as text: every runner/sql file and every SQL string literal of
//! the runner's and the bindings' Rust sources, with the function calls and operators in it.
//!
//! Shared by the lint (`sql_lint`: every catalog function call is schema-qualified) and the
//! shadow test (`db_shadow`: shadows are planted for every function and operator named here).
//! It is a scanner, not a parser: comments, string literals and quoted identifiers are blanked
//! first, so a word followed by `(` is a call unless SQL syntax or an alias list makes it one.

// Each test binary uses a subset of this module.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

/// One piece of SQL and where it came from (`runner/sql/x.sql`, or `runner/src/x.rs:LINE`).
pub struct Source {
    pub origin: String,
    pub sql: String,
}

/// A `name(` in a piece of SQL.
pub struct Call {
    pub name: String,
    /// Written as `schema.name(`.
    pub qualified: bool,
    /// The schema it was qualified with, lower-cased (`pg_catalog`, or a placeholder).
    pub schema: Option<String>,
    pub line: usize,
}

/// Words that take a parenthesis in SQL syntax without being function calls, and type names
/// that take a modifier (`bit(8)`). A construct such as `coalesce(` cannot be qualified at all.
const SYNTAX: &[&str] = &[
    "all",
    "and",
    "any",
    "array",
    "as",
    "between",
    "bit",
    "by",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "conflict",
    "cube",
    "decimal",
    "distinct",
    "do",
    "else",
    "exists",
    "extract",
    "filter",
    "from",
    "greatest",
    "grouping",
    "having",
    "in",
    "interval",
    "into",
    "is",
    "join",
    "key",
    "least",
    "like",
    "not",
    "nullif",
    "numeric",
    "on",
    "operator",
    "or",
    "over",
    "overlay",
    "partition",
    "position",
    "references",
    "returning",
    "returns",
    "rollup",
    "row",
    "select",
    "set",
    "sets",
    "some",
    "stdin",
    "table",
    "then",
    "time",
    "timestamp",
    "trim",
    "union",
    "unique",
    "using",
    "values",
    "varbit",
    "varchar",
    "varying",
    "when",
    "where",
    "window",
    "with",
    "within",
];

/// Words after which `name(` is a relation or alias with a column list, not a call.
const BEFORE_COLUMN_LIST: &[&str] = &["as", "into", "table", "update", "references", "index"];

/// Statements a Rust string literal must start with to count as SQL.
const SQL_VERBS: &[&str] = &[
    "select", "insert", "update", "delete", "with", "create", "drop", "alter", "grant", "revoke",
    "set", "copy", "lock", "comment", "truncate", "reset", "do", "values", "call",
];

/// The repository root (the runner crate's parent).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("runner/ has a parent")
        .to_path_buf()
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// Every runner/sql file, whole.
pub fn runner_sql_files() -> Vec<Source> {
    let mut paths = Vec::new();
    files(&root().join("runner/sql"), "sql", &mut paths);
    paths
        .iter()
        .map(|p| Source {
            origin: rel(p),
            sql: std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display())),
        })
        .collect()
}

/// The reference schema's files (their function bodies run under their own fixed search_path,
/// so they are not linted, but the shadow test plants shadows for what they call too).
pub fn schema_sql_files() -> Vec<Source> {
    let mut paths = Vec::new();
    files(&root().join("schema"), "sql", &mut paths);
    paths
        .iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "tests"))
        .map(|p| Source {
            origin: rel(p),
            sql: std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display())),
        })
        .collect()
}

/// Every SQL string literal in the runner's and the bindings' Rust sources (not their tests).
pub fn rust_sql_literals() -> Vec<Source> {
    let mut paths = Vec::new();
    files(&root().join("runner/src"), "rs", &mut paths);
    files(&root().join("bindings/src"), "rs", &mut paths);
    let mut out = Vec::new();
    for p in &paths {
        let text =
            std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        for (line, lit) in string_literals(&text) {
            let head = lit.trim_start().to_ascii_lowercase();
            let verb = head
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            let spaced = head[verb.len()..].starts_with(char::is_whitespace);
            if SQL_VERBS.contains(&verb) && spaced {
                out.push(Source {
                    origin: format!("{}:{line}", rel(p)),
                    sql: lit,
                });
            }
        }
    }
    out
}

/// The string literals of a Rust source with their first line (plain `"…"` with `\` line
/// continuations, and raw `r#"…"#`); `//` comments and char literals are skipped.
pub fn string_literals(src: &str) -> Vec<(usize, String)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\'') or a lifetime ('a): skip just past it.
            if b.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c == 'r'
            && matches!(b.get(i + 1), Some('"' | '#'))
            && (i == 0 || !is_word(b[i - 1]))
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            let start_line = line;
            let mut s = String::new();
            j += 1;
            while j < b.len() {
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == '\n' {
                    line += 1;
                }
                s.push(b[j]);
                j += 1;
            }
            out.push((start_line, s));
            i = j;
        } else if c == '"' {
            let start_line = line;
            let mut s = String::new();
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                if b[j] == '\\' {
                    match b.get(j + 1) {
                        Some('\n') => {
                            // A line continuation: the newline and the next line's indent go.
                            line += 1;
                            j += 2;
                            while j < b.len() && b[j].is_whitespace() {
                                if b[j] == '\n' {
                                    line += 1;
                                }
                                j += 1;
                            }
                            continue;
                        }
                        Some('n') => s.push('\n'),
                        Some(other) => s.push(*other),
                        None => {}
                    }
                    j += 2;
                    continue;
                }
                if b[j] == '\n' {
                    line += 1;
                }
                s.push(b[j]);
                j += 1;
            }
            out.push((start_line, s));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `sql` with comments, string literals and quoted identifiers replaced by spaces (newlines
/// kept, so line numbers stay right).
pub fn blank(sql: &str) -> String {
    let b: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let keep = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        if c == '-' && b.get(i + 1) == Some(&'-') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                out.push(keep(b[i]));
                i += 1;
            }
            out.push_str("  ");
            i += 2;
        } else if c == '\'' || c == '"' {
            // A literal or quoted identifier; a doubled quote stays inside it.
            out.push(c);
            i += 1;
            while i < b.len() {
                if b[i] == c && b.get(i + 1) == Some(&c) {
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == c {
                    break;
                } else {
                    out.push(keep(b[i]));
                    i += 1;
                }
            }
            out.push(c);
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every `name(` in `sql` that is a function call.
pub fn calls(sql: &str) -> Vec<Call> {
    let text = blank(sql);
    let b: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut prev_word = String::new();
    let mut i = 0;
    let mut line = 1;
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
        }
        if !(c.is_ascii_alphabetic() || c == '_')
            || (i > 0 && (is_word(b[i - 1]) || b[i - 1] == '$'))
        {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (is_word(b[i]) || b[i] == '$') {
            i += 1;
        }
        let word: String = b[start..i].iter().collect::<String>().to_ascii_lowercase();
        let mut j = i;
        while j < b.len() && b[j].is_whitespace() {
            j += 1;
        }
        let before = start.checked_sub(1).map(|k| b[k]);
        let after_brace = matches!(before, Some('{' | '@'));
        if b.get(j) == Some(&'(') && !after_brace {
            let qualified = before == Some('.');
            let schema = qualified.then(|| {
                let mut k = start - 1;
                while k > 0 && (is_word(b[k - 1]) || matches!(b[k - 1], '@' | '{' | '}' | '"')) {
                    k -= 1;
                }
                b[k..start - 1]
                    .iter()
                    .collect::<String>()
                    .to_ascii_lowercase()
            });
            let syntax = !qualified && SYNTAX.contains(&word.as_str());
            let column_list = !qualified && BEFORE_COLUMN_LIST.contains(&prev_word.as_str());
            if !syntax && !column_list {
                out.push(Call {
                    name: word.clone(),
                    qualified,
                    schema,
                    line,
                });
            }
        }
        prev_word = word;
    }
    out
}

/// The operators in `sql` (runs of operator characters outside literals and comments).
pub fn operators(sql: &str) -> Vec<String> {
    let text = blank(sql);
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if "+-*/<>=~!@#%^&|`?".contains(c) {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    // Placeholders (@S@) and format! braces are not operators.
    out.retain(|o| o != "@" && o != "@@");
    out
}
