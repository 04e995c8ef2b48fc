//! Foreign text shown inert, character by character: what a producer, an adapter, a server or
//! a report file wrote may hold controls that move a terminal's cursor, rewrite a line or
//! change its colours, and bidi controls that make text read in another order than it is
//! stored (a case name that seems to say one thing and says another). Wherever the kit shows
//! such text (the terminal, JUnit, the Markdown reports, the results page and the badge), each
//! of those characters is written visibly as `\u{XXXX}` instead (ADR 0059).
//!
//! The rule is one predicate, [`is_hazard`], and one spelling, [`escape_char`], so every
//! output agrees on what is shown escaped and how. The Markdown forms (escaping markup,
//! fencing multi-line text) build on it in [`crate::report::foreign`].

use std::borrow::Cow;

/// Whether `c` is shown escaped wherever foreign text is shown: every C0 control (tab and
/// newline included: [`terminal`] keeps those two where they are legitimate), DEL, every C1
/// control, the Unicode line and paragraph separators, and every bidi control (the marks
/// U+200E, U+200F and U+061C, the embeddings and overrides U+202A..U+202E and the isolates
/// U+2066..U+2069).
#[must_use]
pub fn is_hazard(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1F}'
        | '\u{7F}'..='\u{9F}'
        | '\u{2028}' | '\u{2029}'
        | '\u{200E}' | '\u{200F}' | '\u{061C}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}')
}

/// Whether `c` is one of the bidi controls [`is_hazard`] names.
#[must_use]
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Append the visible form of `c`: `\u{XXXX}`, at least four uppercase hex digits (the form
/// the JUnit report has always used, so one reader learns one spelling).
pub fn escape_char(c: char, out: &mut String) {
    out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
}

/// `text` with every character `escape` selects written by [`escape_char`]; borrowed when
/// there is none (the common case costs one scan).
pub fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            escape_char(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Foreign text that may span lines (a message, stderr, a page's text): every [`is_hazard`]
/// character escaped but newline and tab, which lay text out and cannot rewrite what is
/// already shown (a carriage return can: it is escaped).
#[must_use]
pub fn lines(text: &str) -> Cow<'_, str> {
    escaped(text, |c| is_hazard(c) && c != '\n' && c != '\t')
}

/// Foreign text for the terminal: [`lines`]. The one function every message that may quote a
/// producer, an adapter, a server or a report goes through on its way to stderr or stdout
/// (with the password mask, [`crate::redact::for_terminal`]).
#[must_use]
pub fn terminal(text: &str) -> Cow<'_, str> {
    lines(text)
}

/// Foreign text that must stay on one line (a badge, a heading, a table cell): every
/// [`is_hazard`] character escaped, newline and tab included.
#[must_use]
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, is_hazard)
}

/// A line of the kit's own terminal output that may carry foreign text: [`terminal`], except
/// that the colour sequences libtest and clap write themselves (`ESC [` digits and `;`, then
/// `m`: SGR, which only colours) are kept. Any other escape sequence (cursor movement, screen
/// clearing, title setting, hyperlinks) is shown escaped. A line that is a JSON event
/// (`--format json`, starting with `{`) gets the JSON spelling `\uXXXX` instead, so it stays
/// valid JSON and decodes to the same text.
#[must_use]
pub fn terminal_line(line: &str) -> Cow<'_, str> {
    let json = line.trim_start().starts_with('{');
    let hazard = |c: char| is_hazard(c) && c != '\n' && c != '\t';
    if !line.chars().any(hazard) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && !json {
            if let Some(len) = sgr_len(rest) {
                out.push_str(rest.get(..len).unwrap_or_default());
                rest = rest.get(len..).unwrap_or_default();
                continue;
            }
        }
        if !hazard(c) {
            out.push(c);
        } else if json {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escape_char(c, &mut out);
        }
        rest = rest.get(c.len_utf8()..).unwrap_or_default();
    }
    Cow::Owned(out)
}

/// The length of the SGR sequence `text` starts with (`ESC [ [0-9;]* m`), if it does.
fn sgr_len(text: &str) -> Option<usize> {
    let params = text.strip_prefix("\x1b[")?;
    let digits = params
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (params.as_bytes().get(digits) == Some(&b'm')).then_some(2 + digits + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_and_bidi_character_is_a_hazard_and_nothing_else_is() {
        let hazards: Vec<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| is_hazard(*c))
            .map(u32::from)
            .collect();
        // 32 C0, DEL and 32 C1, two separators, twelve bidi controls.
        assert_eq!(hazards.len(), 32 + 33 + 2 + 12, "{hazards:X?}");
        for c in [
            '\u{200E}', '\u{200F}', '\u{061C}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}',
            '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            assert!(is_hazard(c) && is_bidi_control(c), "U+{:04X}", u32::from(c));
        }
        for c in [
            'a',
            ' ',
            'é',
            '\u{A0}',
            '\u{200B}',
            '\u{FEFF}',
            '\u{1F600}',
            '<',
        ] {
            assert!(!is_hazard(c), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn the_terminal_keeps_newlines_and_tabs_and_escapes_the_rest() {
        assert!(matches!(terminal("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(
            terminal("a\rb\x1b[2Jc\u{202E}d\u{7}\n"),
            "a\\u{000D}b\\u{001B}[2Jc\\u{202E}d\\u{0007}\n"
        );
        assert_eq!(one_line("a\nb\tc"), "a\\u{000A}b\\u{0009}c");
        assert_eq!(terminal("\u{9B}31m"), "\\u{009B}31m");
    }

    #[test]
    fn terminal_lines_keep_only_colour_sequences_and_json_stays_json() {
        assert_eq!(
            terminal_line("test x ... \x1b[32mok\x1b[0m\n"),
            "test x ... \x1b[32mok\x1b[0m\n"
        );
        assert_eq!(
            terminal_line("msg \x1b]8;;http://x\x07link\x1b[1A\u{202E}\n"),
            "msg \\u{001B}]8;;http://x\\u{0007}link\\u{001B}[1A\\u{202E}\n"
        );
        let event = "{ \"type\": \"test\", \"name\": \"a\u{202E}b\", \"stdout\": \"\u{85}\" }";
        let shown = terminal_line(event);
        assert!(!shown.chars().any(is_bidi_control), "{shown}");
        let parsed: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(parsed["name"], "a\u{202E}b");
        assert_eq!(parsed["stdout"], "\u{85}");
    }
}
