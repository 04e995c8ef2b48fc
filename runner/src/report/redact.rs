//! Removes passwords from anything that may hold a DSN before it reaches a report or stderr.
//!
//! Handles both DSN spellings: URLs (`postgres://user:secret@host/db` → `user:***@`) and
//! libpq key=value strings or URL query parameters (`password=secret` → `password=***`, quoted
//! values included). Applied to every argv element recorded in a report.

/// The text that replaces a secret.
const MASK: &str = "***";

/// `text` with every DSN password replaced by `***`.
pub fn redact_secrets(text: &str) -> String {
    redact_key_values(&redact_url_userinfo(text))
}

/// Replace the password of every `scheme://user:password@host` in `text`.
fn redact_url_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        // The authority ends at the first '/', '?', '#' or whitespace.
        let end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(tail.len());
        let (authority, after) = tail.split_at(end);
        match authority.rfind('@') {
            Some(at) => {
                let (userinfo, host) = authority.split_at(at);
                match userinfo.find(':') {
                    Some(colon) => {
                        let (user, _password) = userinfo.split_at(colon);
                        out.push_str(user);
                        out.push(':');
                        out.push_str(MASK);
                    }
                    None => out.push_str(userinfo),
                }
                out.push_str(host);
            }
            None => out.push_str(authority),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Replace the value of every `password=` (case-insensitive) in `text`.
fn redact_key_values(text: &str) -> String {
    const KEY: &str = "password";
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower.get(search..).and_then(|s| s.find(KEY)) {
        let key_start = search + found;
        let mut cursor = key_start + KEY.len();
        // Only the key `password` itself, never the tail of another name (`old_password=`,
        // `mypassword=`): the key starts the text or follows a separator of a DSN or argv.
        let whole_key = lower
            .get(..key_start)
            .and_then(|before| before.chars().next_back())
            .is_none_or(|c| c.is_whitespace() || "?&;,='\"(".contains(c));
        if !whole_key {
            search = cursor;
            continue;
        }
        // Allow `password = value` as libpq does.
        let after_key = lower.get(cursor..).unwrap_or("");
        let spaces = after_key.len() - after_key.trim_start().len();
        if !after_key.trim_start().starts_with('=') {
            search = cursor;
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
        out.push_str(text.get(copied..value_start).unwrap_or(""));
        out.push_str(MASK);
        copied = value_start + value_len;
        search = copied;
    }
    out.push_str(text.get(copied..).unwrap_or(""));
    out
}

#[cfg(test)]
mod tests {
    use super::redact_secrets;

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
}
