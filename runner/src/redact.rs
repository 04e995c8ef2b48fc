//! The one door every text passes through before it reaches stderr, stdout or a report:
//! [`redact_secrets`] masks the passwords of the run, whatever their form.
//!
//! Two layers, because neither is enough alone:
//! * **Known secrets.** Every password the run knows (written in an argument, `DATABASE_URL`,
//!   `AWA_CONFORMANCE_DSN`, `PGPASSWORD`, or resolved by the DSN parser from a service or
//!   password file) is [`remember`]ed once, and every occurrence of it is masked, in any
//!   context: a producer that prints `$PGPASSWORD` alone, or a clap usage error quoting an
//!   argument, shows `***`.
//! * **Password-shaped text.** Whatever the run knows, the password part of
//!   `scheme://user:password@host` (any scheme), of a scheme-less `user:password@host`, and
//!   the value of `password=...` (libpq key=value strings and URL query parameters, quoted
//!   values included) are masked.
//!
//! On the way to a terminal the same door also shows control and bidi characters visibly
//! ([`for_terminal`], [`crate::inert`]).
//!
//! Callers: the command line's errors and usage errors (`lib.rs`), the run's warnings and
//! errors, libtest's output on its way to stdout ([`crate::console`]), every recorded case
//! result and run error ([`crate::outcome`], hence the JSON, JUnit and Markdown reports and
//! the baseline), a child's captured stderr ([`crate::child::StderrTail`]), the argv of a
//! report, and every database error ([`crate::pg::Dsn::scrub`]).

use std::ops::Range;
use std::sync::Mutex;

/// The text that replaces a secret.
const MASK: &str = "***";

/// The passwords this process knows, longest first (a secret holding another is masked whole).
static KNOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// `text` with every known secret and every password-shaped part replaced by `***`.
pub fn redact_secrets(text: &str) -> String {
    let known = crate::sync::lock(&KNOWN);
    let mut out = text.to_owned();
    for secret in known.iter() {
        if out.contains(secret.as_str()) {
            out = mask_known(&out, secret);
        }
    }
    drop(known);
    mask_spans(&out, &password_spans(&out))
}

/// `text` with every occurrence of the known `secret` masked, except where it stands as a
/// DSN's scheme (`postgres://`) or user (`://postgres:`, `://postgres@`, `user=postgres`): a
/// password equal to the user name (or to the scheme) must not blank out the DSN around it,
/// and the password part itself is masked by its shape ([`password_spans`]).
fn mask_known(text: &str, secret: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (at, _) in text.match_indices(secret) {
        if at < rest {
            continue;
        }
        let before = text.get(..at).unwrap_or("");
        let after = text.get(at + secret.len()..).unwrap_or("");
        let scheme = after.starts_with("://");
        let user = (before.ends_with("://") && (after.starts_with(':') || after.starts_with('@')))
            || before.ends_with("user=")
            || before.ends_with("user='");
        out.push_str(text.get(rest..at).unwrap_or(""));
        out.push_str(if scheme || user { secret } else { MASK });
        rest = at + secret.len();
    }
    out.push_str(text.get(rest..).unwrap_or(""));
    out
}

/// `text` as it may reach a terminal: passwords masked ([`redact_secrets`]), then control
/// and bidi characters written visibly ([`crate::inert::terminal`]), so what a producer, an
/// adapter, a server or a report said can neither show a password nor move the cursor,
/// rewrite a line or reorder what a reader sees (ADR 0059). Every message the kit prints on
/// stderr goes through here.
#[must_use]
pub fn for_terminal(text: &str) -> String {
    crate::inert::terminal(&redact_secrets(text)).into_owned()
}

/// Every string (and object key) inside `value` through [`redact_secrets`].
pub fn redact_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            let masked = redact_secrets(s);
            if masked != *s {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::Object(map) => {
            let masked: serde_json::Map<String, Value> = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    redact_json(&mut v);
                    (redact_secrets(&k), v)
                })
                .collect();
            *map = masked;
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Mask `secret` wherever it appears from now on (an empty one is ignored).
pub fn remember(secret: &str) {
    if secret.is_empty() || secret == MASK {
        return;
    }
    let mut known = crate::sync::lock(&KNOWN);
    if !known.iter().any(|k| k == secret) {
        known.push(secret.to_owned());
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    }
}

/// [`remember`] every password written in `text` (a DSN, an argument, an environment value):
/// as written and as a server would read it (percent-decoded, or unquoted).
pub fn remember_in(text: &str) {
    for span in password_spans(text) {
        let Some(raw) = text.get(span) else { continue };
        remember(raw);
        remember(&percent_decoded(raw));
        if let Some(quoted) = raw.strip_prefix('\'') {
            let inner = quoted.strip_suffix('\'').unwrap_or(quoted);
            remember(&inner.replace("\\'", "'").replace("\\\\", "\\"));
        }
    }
}

/// [`remember`] the secrets of a run started with `argv` in the environment `env` (name,
/// value pairs): every password in an argument (`--dsn`, `--producer-dsn`, a DSN given by
/// mistake as the filter), in `DATABASE_URL` and `AWA_CONFORMANCE_DSN`, and `PGPASSWORD`.
pub fn remember_run_secrets<'a>(
    argv: &[String],
    env: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    for arg in argv {
        remember_in(arg);
    }
    for (key, value) in env {
        match key {
            "PGPASSWORD" => remember(value),
            "DATABASE_URL" | "AWA_CONFORMANCE_DSN" => remember_in(value),
            _ => {}
        }
    }
}

/// `text` with `spans` (sorted, possibly overlapping) replaced by the mask.
fn mask_spans(text: &str, spans: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for span in spans {
        if span.end <= copied {
            continue;
        }
        let start = span.start.max(copied);
        out.push_str(text.get(copied..start).unwrap_or(""));
        out.push_str(MASK);
        copied = span.end;
    }
    out.push_str(text.get(copied..).unwrap_or(""));
    out
}

/// The byte ranges of `text` that are passwords by their shape, sorted by start.
fn password_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = url_password_spans(text);
    spans.extend(bare_userinfo_spans(text));
    spans.extend(key_value_spans(text));
    spans.retain(|s| !s.is_empty());
    spans.sort_by_key(|s| (s.start, s.end));
    spans
}

/// Characters that end a URL's authority or a scheme-less `user:password@host` token in
/// running text (quotes and brackets: an argument echoed as `'…'` or `(…)`).
fn ends_token(c: char) -> bool {
    c.is_whitespace() || "'\"`()<>[]{}".contains(c)
}

/// The password of every `scheme://user:password@host` in `text`, whatever the scheme.
fn url_password_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|t| t.find("://")) {
        let start = from + found + 3;
        let tail = text.get(start..).unwrap_or("");
        // The authority ends at the first '/', '?', '#' or end of the token.
        let end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || ends_token(c))
            .unwrap_or(tail.len());
        let authority = tail.get(..end).unwrap_or("");
        if let Some(at) = authority.rfind('@') {
            if let Some(colon) = authority.get(..at).and_then(|u| u.find(':')) {
                spans.push(start + colon + 1..start + at);
            }
        }
        from = start + end;
    }
    spans
}

/// The password of every scheme-less `user:password@host` token (`alice:pw@db/app`, as
/// given by mistake to `--dsn` or as a filter). A token holding `://` is a URL, handled by
/// [`url_password_spans`].
fn bare_userinfo_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    let ends = text
        .char_indices()
        .filter(|&(_, c)| ends_token(c))
        .map(|(i, c)| (i, i + c.len_utf8()))
        .chain(std::iter::once((text.len(), text.len())));
    for (end, next) in ends {
        let token = text.get(start..end).unwrap_or("");
        let token_start = start;
        start = next;
        if token.contains("://") {
            continue;
        }
        let Some(at) = token.rfind('@') else { continue };
        if let Some(colon) = token.get(..at).and_then(|u| u.find(':')) {
            spans.push(token_start + colon + 1..token_start + at);
        }
    }
    spans
}

/// The value of every `password=` (case-insensitive) in `text`.
fn key_value_spans(text: &str) -> Vec<Range<usize>> {
    const KEY: &str = "password";
    let lower = text.to_ascii_lowercase();
    let mut spans = Vec::new();
    let mut search = 0;
    while let Some(found) = lower.get(search..).and_then(|s| s.find(KEY)) {
        let key_start = search + found;
        let mut cursor = key_start + KEY.len();
        search = cursor;
        // Only the key `password` itself, never the tail of another name (`old_password=`,
        // `mypassword=`): the key starts the text or follows a separator of a DSN or argv.
        // `PGPASSWORD=` (an environment dump) counts as the key too.
        let before = lower.get(..key_start).unwrap_or("");
        let before = before.strip_suffix("pg").unwrap_or(before);
        let whole_key = before
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || "?&;,='\"(".contains(c));
        if !whole_key {
            continue;
        }
        // Allow `password = value` as libpq does.
        let after_key = lower.get(cursor..).unwrap_or("");
        let spaces = after_key.len() - after_key.trim_start().len();
        if !after_key.trim_start().starts_with('=') {
            continue;
        }
        cursor += spaces + 1;
        let after_eq = text.get(cursor..).unwrap_or("");
        let value_start = cursor + (after_eq.len() - after_eq.trim_start().len());
        let value = text.get(value_start..).unwrap_or("");
        let value_len = if let Some(quoted) = value.strip_prefix('\'') {
            // A quoted libpq value ends at the first unescaped quote.
            let mut len = 1;
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                len += c.len_utf8();
                if c == '\\' {
                    if let Some(escaped) = chars.next() {
                        len += escaped.len_utf8();
                    }
                } else if c == '\'' {
                    break;
                }
            }
            len
        } else {
            value
                .find(|c: char| c.is_whitespace() || c == '&' || c == ';' || c == '"')
                .unwrap_or(value.len())
        };
        spans.push(value_start..value_start + value_len);
        search = value_start + value_len;
    }
    spans
}

/// `text` with `%XX` escapes decoded (as a URL's userinfo means them); invalid escapes and
/// non-UTF-8 results leave the text as it is.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::{
        mask_known, mask_spans, password_spans, redact_secrets, remember, remember_in,
        remember_run_secrets,
    };

    #[test]
    fn a_password_equal_to_the_user_masks_only_the_password() {
        let text = "connect to postgres://postgres:postgres@db:5432/x failed; \
                    host=db user=postgres password=postgres; echoed postgres";
        assert_eq!(
            mask_spans(
                &mask_known(text, "postgres"),
                &password_spans(&mask_known(text, "postgres"))
            ),
            "connect to postgres://postgres:***@db:5432/x failed; \
             host=db user=postgres password=***; echoed ***"
        );
    }

    #[test]
    fn url_passwords_are_masked() {
        assert_eq!(
            redact_secrets("--dsn=postgres://alice:s3cr%40t@db:5432/x?sslmode=require"),
            "--dsn=postgres://alice:***@db:5432/x?sslmode=require"
        );
        assert_eq!(
            redact_secrets("postgresql://alice@db/x"),
            "postgresql://alice@db/x"
        );
        assert_eq!(redact_secrets("postgres://db/x"), "postgres://db/x");
    }

    #[test]
    fn key_value_passwords_are_masked() {
        assert_eq!(
            redact_secrets("host=db PASSWORD = 'a b\\'c' user=u"),
            "host=db PASSWORD = *** user=u"
        );
        assert_eq!(
            redact_secrets("postgres://db/x?password=hunter2&user=u"),
            "postgres://db/x?password=***&user=u"
        );
        assert_eq!(
            redact_secrets("password=x password=y"),
            "password=*** password=***"
        );
    }

    #[test]
    fn other_text_is_untouched() {
        assert_eq!(redact_secrets("unique_key::uk-0123"), "unique_key::uk-0123");
        assert_eq!(redact_secrets("passwords are fine"), "passwords are fine");
    }

    #[test]
    fn password_inside_another_name_is_not_a_password() {
        for text in [
            "old_password=kept",
            "--skip=sql::privilege::no_password=kept",
            "mypassword=kept host=db",
            "sslpassword_hint=kept",
        ] {
            assert_eq!(redact_secrets(text), text);
        }
        assert_eq!(
            redact_secrets("old_password=kept password=gone"),
            "old_password=kept password=***"
        );
        assert_eq!(redact_secrets("\"password=gone\""), "\"password=***\"");
        assert_eq!(
            redact_secrets("--dsn=password=gone host=db"),
            "--dsn=password=*** host=db"
        );
    }

    #[test]
    fn any_scheme_and_no_scheme_are_masked() {
        assert_eq!(
            redact_secrets("invalid DSN: \"mysql://alice:hunter2@db/x\""),
            "invalid DSN: \"mysql://alice:***@db/x\""
        );
        assert_eq!(
            redact_secrets("missing \"=\" after \"alice:hunter2@db/x\" (use key=value pairs)"),
            "missing \"=\" after \"alice:***@db/x\" (use key=value pairs)"
        );
        assert_eq!(
            redact_secrets("error: invalid value 'alice:pw@db' for '--case-timeout <SECS>'"),
            "error: invalid value 'alice:***@db' for '--case-timeout <SECS>'"
        );
        assert_eq!(redact_secrets("--dsn=alice:pw@db"), "--dsn=alice:***@db");
        // No colon before the '@': no password (an e-mail address, `user@host`).
        assert_eq!(redact_secrets("alice@db and a@b.c"), "alice@db and a@b.c");
        assert_eq!(
            redact_secrets("sql::unique_key::uk-1"),
            "sql::unique_key::uk-1"
        );
        assert_eq!(
            redact_secrets("PGPASSWORD=hunter2 PGUSER=u"),
            "PGPASSWORD=*** PGUSER=u"
        );
    }

    #[test]
    fn remembered_secrets_are_masked_in_any_context() {
        remember("pgpassword-Zq81");
        assert_eq!(redact_secrets("my env: pgpassword-Zq81\n"), "my env: ***\n");
        // Written in a DSN: remembered as written and as decoded.
        remember_in("postgres://u:p%40ss-Zq82@h/db password='q\\'t-Zq83'");
        assert_eq!(redact_secrets("p@ss-Zq82 p%40ss-Zq82"), "*** ***");
        assert_eq!(redact_secrets("value q't-Zq83"), "value ***");
        remember_run_secrets(
            &[
                "awa-conformance".to_owned(),
                "--dsn".to_owned(),
                "a:argv-Zq84@h".to_owned(),
            ],
            [("PGPASSWORD", "env-Zq85"), ("HOME", "/home/me")],
        );
        assert_eq!(
            redact_secrets("argv-Zq84 env-Zq85 /home/me"),
            "*** *** /home/me"
        );
    }
}
