//! `report html`: one self-contained static page comparing implementations side by side.
//!
//! The matrix (implementations × families and suites, counts per status in words and colour)
//! is rendered by the template (`runner/templates/page.html`, minijinja with HTML
//! auto-escaping), so it reads without JavaScript. The drill-down (every case not passed,
//! with expected and actual values, layer, reason, and the vector's own JSON) and the filters
//! are drawn by the page's script from the data embedded once, gzip-compressed and base64
//! encoded, decompressed by the browser's own `DecompressionStream`: 10 reports of 2,500
//! cases stay a small page, and nothing is fetched from anywhere (no CDN, no fonts), so it
//! works from `file://` and any static host.
//!
//! Everything on the page but the kit's own template, script and style is foreign (names,
//! messages, provenance from the reports; the kill matrices' Markdown from a file a pull
//! request may edit), and is inert there (ADR 0059): the Content-Security-Policy runs only
//! the page's own script and style, named by their SHA-256 computed here from the exact text
//! embedded; the Markdown keeps only `http:`, `https:` and in-page `#` links (any other
//! destination, `javascript:` whatever its spelling, is shown as its text), its raw HTML is
//! shown as text, and control and bidi characters are written as `\u{XXXX}` in every text
//! the page shows ([`crate::inert`]).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;
use minijinja::{context, Environment};
use pulldown_cmark::{CowStr, Event, Tag, TagEnd};
use serde_json::Value as Json;
use sha2::Digest as _;

use super::{Comparison, PageError};

const TEMPLATE: &str = include_str!("../../../templates/page.html");
const SCRIPT: &str = include_str!("../../../templates/page.js");
const STYLE: &str = include_str!("../../../templates/page.css");

/// The page's file name inside `--out DIR`.
pub const PAGE_FILE: &str = "index.html";

/// A kill matrix to show under the results: its title and its Markdown table.
#[derive(Debug, Clone)]
pub struct KillMatrix {
    /// Shown as the heading (the file's name).
    pub title: String,
    /// The document's Markdown.
    pub markdown: String,
}

/// The raw JSON of each vector named by `ids`, from the vector files compiled into the kit,
/// with the file it lives in: what a drill-down's vector link opens.
fn vectors(ids: &BTreeSet<&str>) -> BTreeMap<String, Json> {
    let mut out = BTreeMap::new();
    if ids.is_empty() {
        return out;
    }
    for (release, files) in awa_conformance_vectors::EMBEDDED {
        for (file, text) in files {
            let Ok(doc) = serde_json::from_str::<Json>(text) else {
                continue;
            };
            let Some(items) = doc.get("vectors").and_then(Json::as_array) else {
                continue;
            };
            for v in items {
                if let Some(id) = v.get("id").and_then(Json::as_str) {
                    if ids.contains(id) {
                        out.insert(
                            id.to_owned(),
                            serde_json::json!({ "file": format!("{release}/{file}"), "vector": v }),
                        );
                    }
                }
            }
        }
    }
    out
}

/// The data the script draws from, as gzip + base64.
fn embedded_data(cmp: &Comparison) -> Result<String, PageError> {
    let ids: BTreeSet<&str> = cmp
        .details
        .iter()
        .filter_map(|d| d.vector.as_deref())
        .collect();
    // Long values also go in shortened as the terminal shows them (crate::shorten), shown
    // first; the full value stays one click away.
    let details: Vec<Json> = cmp
        .details
        .iter()
        .map(|d| {
            let mut j = serde_json::to_value(d).unwrap_or(Json::Null);
            for (field, v) in [("expected", &d.expected), ("actual", &d.actual)] {
                if let (Some(v), Some(obj)) = (v, j.as_object_mut()) {
                    let short = crate::shorten::value(v);
                    if &short != v {
                        obj.insert(format!("{field}_short"), short);
                    }
                }
            }
            j
        })
        .collect();
    let mut data = serde_json::json!({
        "implementations": cmp.implementations,
        "columns": cmp.columns,
        "details": details,
    });
    // Names, messages and the rest of the text the script shows, with control and bidi
    // characters written visibly, exactly as the template writes the same strings (so a
    // column the filters compare reads the same on both sides). Values keep their bytes: the
    // script shows them as JSON, escaping those characters as it draws them.
    inert_strings(
        &mut data,
        &["expected", "actual", "expected_short", "actual_short"],
    );
    if let Some(obj) = data.as_object_mut() {
        obj.insert(
            "vectors".to_owned(),
            serde_json::to_value(vectors(&ids)).unwrap_or_default(),
        );
    }
    let json = serde_json::to_vec(&data).map_err(|e| PageError::Render {
        what: "the page data",
        reason: e.to_string(),
    })?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&json)
        .and_then(|()| gz.finish())
        .map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes))
        .map_err(|e| PageError::Render {
            what: "the page data",
            reason: e.to_string(),
        })
}

/// Every string in `value` (object keys too) through [`crate::inert::lines`], but the values
/// under the keys `keep`.
fn inert_strings(value: &mut Json, keep: &[&str]) {
    match value {
        Json::String(s) => {
            if let std::borrow::Cow::Owned(shown) = crate::inert::lines(s) {
                *s = shown;
            }
        }
        Json::Array(items) => items.iter_mut().for_each(|v| inert_strings(v, keep)),
        Json::Object(map) => {
            let shown: serde_json::Map<String, Json> = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    if !keep.contains(&k.as_str()) {
                        inert_strings(&mut v, keep);
                    }
                    (crate::inert::lines(&k).into_owned(), v)
                })
                .collect();
            *map = shown;
        }
        Json::Null | Json::Bool(_) | Json::Number(_) => {}
    }
}

/// Whether a Markdown link may stay a link on the page: an in-page `#` link, or an absolute
/// `http:` / `https:` URL (scheme in any case) with no control character or space anywhere
/// (a browser drops tabs and newlines from a URL before it reads the scheme, which is how
/// `java&#x09;script:` gets through filters that look at the text as written). pulldown-cmark
/// hands over the destination with entities and backslash escapes already decoded, so this
/// sees what the browser would. Everything else, relative paths included, is text.
fn link_allowed(dest: &str) -> bool {
    if dest
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || crate::inert::is_hazard(c))
    {
        return false;
    }
    if dest.starts_with('#') {
        return true;
    }
    let lower = dest.to_ascii_lowercase();
    ["http://", "https://"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower.len() > scheme.len())
}

/// `html` (raw HTML from the Markdown) without its comments; `in_comment` carries an open
/// comment from one piece of an HTML block to the next.
fn without_comments(html: &str, in_comment: &mut bool) -> String {
    let mut out = String::new();
    let mut rest = html;
    loop {
        if *in_comment {
            match rest.find("-->") {
                Some(end) => {
                    rest = rest.get(end + 3..).unwrap_or_default();
                    *in_comment = false;
                }
                None => return out,
            }
        } else {
            match rest.find("<!--") {
                Some(start) => {
                    out.push_str(rest.get(..start).unwrap_or_default());
                    rest = rest.get(start + 4..).unwrap_or_default();
                    *in_comment = true;
                }
                None => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }
}

/// The kill matrix's Markdown as HTML (its generated table and the text around it), inert:
/// links only to `http(s)` and `#` ([`link_allowed`]; any other link, and every image, keeps
/// only its text), raw HTML shown as text (comments, such as the generated part's markers,
/// dropped), control and bidi characters written visibly, and table alignment left to the
/// style sheet (pulldown-cmark writes it as `style` attributes, which the page's policy
/// does not run).
fn kill_matrix_html(markdown: &str) -> String {
    let mut opts = pulldown_cmark::Options::empty();
    opts.insert(pulldown_cmark::Options::ENABLE_TABLES);
    let shown = |text: CowStr<'_>| -> String { crate::inert::lines(&text).into_owned() };
    // For each open link or image, whether its tags are kept (its text always is).
    let mut open: Vec<bool> = Vec::new();
    let mut in_comment = false;
    let events = pulldown_cmark::Parser::new_ext(markdown, opts).filter_map(|event| {
        Some(match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let keep = link_allowed(&dest_url);
                open.push(keep);
                if !keep {
                    return None;
                }
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title: shown(title).into(),
                    id,
                })
            }
            Event::Start(Tag::Image { .. }) => {
                open.push(false);
                return None;
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if open.pop() == Some(true) {
                    return Some(event);
                }
                return None;
            }
            Event::Start(Tag::Table(alignments)) => Event::Start(Tag::Table(vec![
                pulldown_cmark::Alignment::None;
                alignments.len()
            ])),
            Event::Html(html) | Event::InlineHtml(html) => {
                let text = without_comments(&html, &mut in_comment);
                if text.trim().is_empty() {
                    return None;
                }
                Event::Text(shown(text.into()).into())
            }
            Event::Text(text) => Event::Text(shown(text).into()),
            Event::Code(text) => Event::Code(shown(text).into()),
            other => other,
        })
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// The CSP source naming `text` by its SHA-256 (`'sha256-<base64>'`): the browser runs an
/// inline script or style only if its exact text hashes to a source its policy lists.
fn csp_hash(text: &str) -> String {
    let digest = sha2::Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// Render the page.
///
/// # Errors
/// [`PageError::Render`] (a kit bug).
pub fn render(cmp: &Comparison, kill_matrices: &[KillMatrix]) -> Result<String, PageError> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    // Every string the template writes (a name, a provenance value, a column) shows its control
    // and bidi characters visibly; what the kit marked safe (its script, style, data and the
    // rendered Markdown, already inert) is written as it is.
    env.set_formatter(|out, state, value| {
        if !value.is_safe() {
            if let Some(std::borrow::Cow::Owned(shown)) = value.as_str().map(crate::inert::lines) {
                return minijinja::escape_formatter(out, state, &minijinja::Value::from(shown));
            }
        }
        minijinja::escape_formatter(out, state, value)
    });
    env.add_template("page.html", TEMPLATE)
        .map_err(|e| PageError::Render {
            what: "the page template",
            reason: e.to_string(),
        })?;
    let rows: Vec<Json> = cmp
        .implementations
        .iter()
        .zip(&cmp.cells)
        .enumerate()
        .map(|(i, (imp, cells))| {
            serde_json::json!({
                "index": i,
                "imp": imp,
                "cells": cells,
            })
        })
        .collect();
    let kills: Vec<Json> = kill_matrices
        .iter()
        .map(|k| serde_json::json!({ "title": k.title, "html": kill_matrix_html(&k.markdown) }))
        .collect();
    let tmpl = env
        .get_template("page.html")
        .map_err(|e| PageError::Render {
            what: "the page template",
            reason: e.to_string(),
        })?;
    tmpl.render(context! {
        columns => cmp.columns,
        rows => rows,
        statuses => super::STATUSES,
        kill_matrices => kills,
        // Base64 holds no character HTML escaping would change inside a script element, and
        // escaping it would corrupt it (`/` becomes `&#x2f;`, which a script does not decode).
        data => minijinja::Value::from_safe_string(embedded_data(cmp)?),
        script => minijinja::Value::from_safe_string(SCRIPT.to_owned()),
        style => minijinja::Value::from_safe_string(STYLE.to_owned()),
        // The policy names the script and the style by the hash of the exact text embedded
        // below: nothing else on the page, whatever a report or a Markdown file slipped in, can
        // run, and no 'unsafe-inline' is needed.
        script_hash => minijinja::Value::from_safe_string(csp_hash(SCRIPT)),
        style_hash => minijinja::Value::from_safe_string(csp_hash(STYLE)),
        kit_version => env!("CARGO_PKG_VERSION"),
    })
    .map_err(|e| PageError::Render {
        what: "the page",
        reason: format!("{e:#}"),
    })
}

/// Write the page to `out/index.html` (creating `out`).
///
/// # Errors
/// [`PageError`] naming the file.
pub fn write(cmp: &Comparison, kill_matrices: &[KillMatrix], out: &Path) -> Result<(), PageError> {
    std::fs::create_dir_all(out).map_err(|e| PageError::Write {
        path: out.display().to_string(),
        reason: e.to_string(),
    })?;
    let page = render(cmp, kill_matrices)?;
    super::write(&out.join(PAGE_FILE), page.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(name: &str, status: &str, message: &str) -> super::super::ReportIn {
        serde_json::from_value(serde_json::json!({
            "format": "awa-conformance-report", "format_version": 1,
            "verdict": "nonconformant", "exit_code": 1,
            "provenance": {
                "kit_version": "0.1.0", "kit_contract_version": 1, "vectors_root_sha256": "ab",
                "server_version": "18.4", "contract_version": "1", "database": "dsn (flag)",
                "level": "core", "started_at": "2026-12-03T00:00:00Z",
                "extra": {"producer": name}
            },
            "cases": [
                {"name": "producer::unique_key::uk-12500e5131e3", "suite": "producer",
                 "status": status, "message": message, "layer": "digest",
                 "expected": {"k": "x".repeat(300)},
                 "actual": {"k": "b"}},
                {"name": "producer::coverage", "suite": "producer", "status": "passed"}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn hostile_names_and_messages_are_escaped_and_the_data_is_embedded_once() {
        let cmp = Comparison::build([(
            None,
            "r.json".to_owned(),
            report(
                "<script>alert(1)</script>",
                "failed",
                "layer: key: </script><b>x",
            ),
        )]);
        let page = render(&cmp, &[]).unwrap();
        assert!(!page.contains("<script>alert(1)"), "unescaped name");
        assert!(page.contains("&lt;script&gt;alert(1)"));
        // The message lives only in the compressed data, never as markup.
        assert!(!page.contains("<b>x"));
        assert_eq!(page.matches("id=\"data\"").count(), 1);
        // The drilled vector's JSON travels with the data.
        let data = embedded_data(&cmp).unwrap();
        let gz = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let mut json = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut json)
            .unwrap();
        let v: Json = serde_json::from_str(&json).unwrap();
        // The layer is the report's field, never read back out of the message.
        assert_eq!(v["details"][0]["layer"], "digest");
        assert!(v["details"][0]["expected_short"]["k"]
            .as_str()
            .unwrap()
            .contains("(300 bytes, sha256 "));
        assert_eq!(
            v["vectors"]["uk-12500e5131e3"]["file"],
            "vectors/v1/unique_key.json"
        );
    }

    #[test]
    fn kill_matrix_markdown_becomes_a_table_without_raw_html() {
        let html = kill_matrix_html(
            "<!-- BEGIN -->\n<script>alert(1)</script>\n\n| mutant | sql |\n|---|---|\n| a | x |\n",
        );
        assert!(html.contains("<table>"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
    }

    #[test]
    fn kill_matrix_links_other_than_http_and_anchors_are_text_whatever_their_spelling() {
        let md = "Prose [ok](https://example.com/x) [anchor](#kill) [js](javascript:alert(1)) \
                  [case](JaVaScRiPt:alert(1)) [tab](java&#x09;script:alert(1)) \
                  [ent](&#106;avascript:alert(1)) [sp]( javascript:alert(1)) \
                  [data](data:text/html,<script>alert(1)</script>) [vb](vbscript:x) \
                  [file](file:///etc/passwd) [rel](../x.md) [proto](//evil.example) \
                  <javascript:alert(2)> <https://fine.example> ![img](https://x/y.png) \
                  [ref][r] <img src=x onerror=alert(3)> <!-- comment -->\n\n\
                  [r]: javascript:alert(4)\n\n\
                  | a | b |\n|:--|--:|\n| \u{202E}x | [t](javascript:y) |\n";
        let html = kill_matrix_html(md);
        let hrefs: Vec<&str> = html
            .split("href=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert_eq!(
            hrefs,
            ["https://example.com/x", "#kill", "https://fine.example"],
            "{html}"
        );
        assert!(
            !html.to_ascii_lowercase().contains("javascript:alert(1)\""),
            "{html}"
        );
        for raw in ["<img", "<script", "style=", "comment", "\u{202E}"] {
            assert!(!html.contains(raw), "{raw} in {html}");
        }
        // What is not a link is still there, as text.
        assert!(
            html.contains("js") && html.contains("javascript:alert(2)"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(3)&gt;"),
            "{html}"
        );
        assert!(html.contains("\\u{202E}x"), "{html}");
    }

    #[test]
    fn the_policy_runs_only_the_pages_own_script_and_style_by_hash() {
        let cmp = Comparison::build([(
            None,
            "r.json".to_owned(),
            report("\u{202E}evil\u{7}", "failed", "m"),
        )]);
        let page = render(&cmp, &[]).unwrap();
        let csp = page
            .split("http-equiv=\"Content-Security-Policy\" content=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap();
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        let sources = |directive: &str| {
            csp.split(';')
                .map(str::trim)
                .find_map(|d| d.strip_prefix(directive))
                .unwrap()
                .trim()
                .to_owned()
        };
        assert_eq!(sources("script-src "), csp_hash(SCRIPT));
        assert_eq!(sources("style-src "), csp_hash(STYLE));
        // The hashed text is exactly what the elements hold.
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains(&format!("<style>{STYLE}</style>")));
        assert_eq!(page.matches("<script>").count(), 1, "one script runs");
        // Control and bidi characters of a name are shown, not applied.
        assert!(!page.contains('\u{202E}') && !page.contains('\u{7}'));
        assert!(page.contains("\\u{202E}evil\\u{0007}"));
    }
}
