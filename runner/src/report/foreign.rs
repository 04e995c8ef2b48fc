//! Foreign text in Markdown: the one place that decides how what producers, servers and
//! report files wrote (names, versions, messages, stderr, case names, provenance values)
//! enters the Markdown the kit writes (`--markdown`, `report diff`, `report compatibility`),
//! so that it reads as the text it is and never as structure (ADR 0059).
//!
//! That Markdown is read where it is rendered with GitHub's flavour and GitHub's own filters
//! (a step summary, a pull-request comment): a newline would end the line it is on and start
//! a heading or a block; `<`, `[`, `` ` `` and `&` would start HTML, links, code and
//! character references; and on the rendered page, after every backslash escape was
//! consumed, `@name` becomes a mention (a notification to a stranger) and `https://`,
//! `www.` and `a@b.c` become links. So:
//!
//! * [`text`]: an inline value, on the line it was put on. Newlines fold to spaces, control
//!   and bidi characters are written as `\u{XXXX}` ([`crate::inert`]), `<`, `>` and `&` as
//!   character references (so the Markdown source holds no tag either), the other Markdown
//!   metacharacters are backslash-escaped, and `@`, `://` and `www.` get a zero-width space
//!   (`&#8203;`, as Renovate and Dependabot write it) so that no mention or autolink can
//!   form. Safe in running text, list items, headings and table cells.
//! * [`code`]: a name that reads best monospaced (a case name, a family, a hash) as a code
//!   span when [`text`] would leave it as it is, else as [`text`]: nothing can be escaped
//!   inside a code span, so a name holding markup is not put in one.
//! * [`fenced`]: a fenced code block for multi-line text (stderr, a message with a
//!   traceback), with a fence longer than any backtick run inside, so no line can close it.
//!
//! What the kit writes itself (its own words, numbers, a verdict read through the closed set
//! of [`crate::report::page::VERDICTS`]) needs none of this.

use crate::inert;

/// The zero-width space as a character reference: invisible when rendered, so `@` plus it
/// plus a name reads as the name and mentions no one.
const BREAK: &str = "&#8203;";

/// Characters that start Markdown or HTML structure anywhere in a line (GitHub flavour:
/// `~` strikethrough, `|` table cells, `$` math), backslash-escaped wherever they occur.
fn always_escaped(c: char) -> bool {
    matches!(
        c,
        '\\' | '`' | '*' | '[' | ']' | '|' | '#' | '~' | '$' | '!'
    )
}

/// `text` as inline Markdown that renders as exactly that text (with control and bidi
/// characters written visibly), on the line it was put on: see the module documentation.
#[must_use]
pub fn text(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        match c {
            // A line break of any kind folds into the line: the value stays where it was put.
            '\n' | '\t' => out.push(' '),
            '\r' if next == Some('\n') => {}
            c if inert::is_hazard(c) => inert::escape_char(c, &mut out),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if always_escaped(c) => {
                out.push('\\');
                out.push(c);
            }
            // Emphasis needs an `_` at a word's edge; `insert_many` stays as it is written.
            '_' if !(word(prev) && word(next)) => out.push_str("\\_"),
            // `](` would read as a link's destination even with the `]` escaped, to a careless
            // eye or a grep; `\(` renders the same.
            '(' if prev == Some(']') => out.push_str("\\("),
            '@' => {
                out.push('@');
                out.push_str(BREAK);
            }
            ':' if chars.get(i + 1..i + 3).is_some_and(|s| s == ['/', '/']) => {
                out.push(':');
                out.push_str(BREAK);
            }
            '.' if i >= 3
                && chars
                    .get(i - 3..i)
                    .is_some_and(|w| w.iter().all(|c| c.eq_ignore_ascii_case(&'w')))
                && !word(i.checked_sub(4).and_then(|p| chars.get(p)).copied()) =>
            {
                out.push_str(BREAK);
                out.push('.');
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as an inline code span when [`text`] would leave it unchanged (no markup, no
/// control or bidi character, no newline, nothing that autolinks or mentions), else as
/// [`text`]: a code span can escape nothing, not even a `|` outside a table, so foreign text
/// holding any of those is shown escaped instead of monospaced. Safe wherever [`text`] is.
#[must_use]
pub fn code(text_: &str) -> String {
    let escaped = text(text_);
    if escaped != text_ {
        return escaped;
    }
    if text_.is_empty() {
        return "` `".to_owned();
    }
    // CommonMark strips one space from each end when both ends have one: pad, so the text's
    // own spaces stay.
    if text_.starts_with(' ') && text_.ends_with(' ') && !text_.trim().is_empty() {
        format!("` {text_} `")
    } else {
        format!("`{text_}`")
    }
}

/// `text` as a fenced code block, every line prefixed with `indent` (two spaces inside a
/// `- ` list item), ending with a newline. Control and bidi characters are written visibly
/// but newline and tab, `\r\n` reads as a newline, `@` is followed by a zero-width space,
/// and the fence (backticks, at least three) is longer than any backtick run inside, so no
/// line of the text can close the block. Inside it nothing is markup, a link or a mention.
#[must_use]
pub fn fenced(text: &str, indent: &str) -> String {
    // GitHub mentions no one inside code, but a mail notification or another renderer may:
    // a zero-width space (a character here: a code block shows references as written) keeps
    // `@name` from ever reading as a mention.
    let normalised = text.replace("\r\n", "\n").replace('@', "@\u{200B}");
    let body = inert::lines(&normalised);
    let fence = "`".repeat((longest_run(&body, '`') + 1).max(3));
    let mut out = format!("{indent}{fence}text\n");
    for line in body.strip_suffix('\n').unwrap_or(&body).split('\n') {
        out.push_str(indent);
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(indent);
    out.push_str(&fence);
    out.push('\n');
    out
}

/// The first line of `message` as [`text`], and the rest of it (when there is any) as a
/// [`fenced`] block indented by `indent`: what a list item or a paragraph shows of a message
/// that may carry a producer's stderr. The block starts with a blank line.
#[must_use]
pub fn message(message: &str, indent: &str) -> (String, Option<String>) {
    let normalised = message.replace("\r\n", "\n");
    let trimmed = normalised.trim_end_matches('\n');
    match trimmed.split_once('\n') {
        None => (text(trimmed), None),
        Some((first, rest)) => (text(first), Some(format!("\n{}", fenced(rest, indent)))),
    }
}

/// The length of the longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        if ch == c {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Render with CommonMark plus GitHub's tables and strikethrough (pulldown-cmark, already
    /// a dependency for the results page), to check what a reader would get.
    fn html(markdown: &str) -> String {
        let mut opts = pulldown_cmark::Options::empty();
        opts.insert(pulldown_cmark::Options::ENABLE_TABLES);
        opts.insert(pulldown_cmark::Options::ENABLE_STRIKETHROUGH);
        let mut out = String::new();
        pulldown_cmark::html::push_html(&mut out, pulldown_cmark::Parser::new_ext(markdown, opts));
        out
    }

    const HOSTILE: &str = "evil\n# heading\n<img src=x onerror=alert(1)> [x](javascript:alert(1)) \
                           <javascript:alert(1)> @someone https://evil.example www.evil.example \
                           a@b.example `code` *em* _em_ ~~del~~ | cell &#x6a; $x$ \u{202E}rtl\r\n";

    #[test]
    fn inline_text_renders_as_its_own_characters_and_stays_on_its_line() {
        let md = text(HOSTILE);
        assert!(!md.contains('\n') && !md.contains('\r'), "{md}");
        assert!(
            !md.contains('\u{202E}') && md.contains("\\u{202E}rtl"),
            "{md}"
        );
        for raw in [
            "<img", "](", "@someone", "https://", "www.evil", "a@b", "&#x6a;",
        ] {
            assert!(!md.contains(raw), "{raw} left raw in {md}");
        }
        // As a heading's tail, a list item and a table cell: one element, no markup inside.
        let rendered = html(&format!("### name: {md}\n"));
        assert_eq!(rendered.matches("<h").count(), 1, "{rendered}");
        for tag in ["<img", "<a ", "<code", "<em", "<del", "<strong"] {
            assert!(!rendered.contains(tag), "{tag} in {rendered}");
        }
        assert!(
            rendered.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{rendered}"
        );
        assert!(rendered.contains("[x](javascript:alert(1))"), "{rendered}");
        assert!(rendered.contains("&amp;#x6a;"), "{rendered}");
        assert!(
            md.contains("&lt;img") && md.contains("\\[x\\]\\(javascript"),
            "{md}"
        );
        let table = html(&format!("| a | b |\n|---|---|\n| {md} | z |\n"));
        assert_eq!(table.matches("<td").count(), 2, "{table}");
    }

    #[test]
    fn ordinary_values_are_left_as_they_are() {
        for plain in [
            "released Awa 0.6.9 (compat profile)",
            "awa-model 0.6.9 (Rust, insert_many)",
            "core+uniqueness+move_shard+bulk+payload",
            "none (released Awa 0.6.x, schema version 40)",
            "18.4 (Debian 18.4-1.pgdg120+1)",
        ] {
            assert_eq!(text(plain), plain);
        }
        assert_eq!(text("_x_ a_b *"), "\\_x\\_ a_b \\*");
    }

    #[test]
    fn code_spans_hold_only_plain_names_and_the_rest_is_escaped_text() {
        assert_eq!(code("sql::payload"), "`sql::payload`");
        assert_eq!(
            code("producer::unique_key::uk-12500e5131e3"),
            "`producer::unique_key::uk-12500e5131e3`"
        );
        assert_eq!(code(" a "), "`  a  `");
        assert_eq!(code(""), "` `");
        assert_eq!(code("a`b"), "a\\`b");
        assert_eq!(code("a\nb\u{202E}"), "a b\\u{202E}");
        assert_eq!(code("a|b"), "a\\|b");
        let hostile = code("x::<img src=x onerror=alert(1)>::@someone::[l](javascript:x)");
        assert!(
            !hostile.contains("<img") && !hostile.contains("@someone"),
            "{hostile}"
        );
        let rendered = html(&format!("- {hostile}\n"));
        assert!(
            !rendered.contains("<img") && !rendered.contains("<a "),
            "{rendered}"
        );
    }

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        let block = fenced(
            "line 1\n````\n```` still inside\r\n<b>\u{1b}[31m\u{202E}\n",
            "  ",
        );
        assert!(block.starts_with("  `````text\n"), "{block}");
        assert!(block.ends_with("\n  `````\n"), "{block}");
        assert!(
            !block.contains('\r') && !block.contains('\u{1b}'),
            "{block}"
        );
        let rendered = html(&format!("- item\n\n{block}"));
        assert_eq!(rendered.matches("<pre>").count(), 1, "{rendered}");
        assert!(
            rendered.contains("```` still inside\n&lt;b&gt;\\u{001B}[31m\\u{202E}\n"),
            "{rendered}"
        );
        assert!(!rendered.contains("<b>"), "{rendered}");
        assert_eq!(
            fenced("to @someone", ""),
            "```text\nto @\u{200B}someone\n```\n"
        );
    }

    #[test]
    fn a_message_shows_its_first_line_inline_and_the_rest_fenced() {
        assert_eq!(message("one line\n", "  "), ("one line".to_owned(), None));
        let (first, rest) = message("failed: x\nstderr:\n# not a heading\n", "  ");
        assert_eq!(first, "failed: x");
        assert_eq!(
            rest.as_deref(),
            Some("\n  ```text\n  stderr:\n  # not a heading\n  ```\n")
        );
    }
}
