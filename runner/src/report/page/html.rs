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

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;
use minijinja::{context, Environment};
use serde_json::Value as Json;

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
    let data = serde_json::json!({
        "implementations": cmp.implementations,
        "columns": cmp.columns,
        "details": details,
        "vectors": vectors(&ids),
    });
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

/// The kill matrix's Markdown as HTML (its generated table and the text around it).
fn kill_matrix_html(markdown: &str) -> String {
    let mut opts = pulldown_cmark::Options::empty();
    opts.insert(pulldown_cmark::Options::ENABLE_TABLES);
    // Raw HTML in the document (the generated-part markers are comments) is dropped: the page
    // shows the document's Markdown, never markup a file could smuggle in.
    let events = pulldown_cmark::Parser::new_ext(markdown, opts).filter(|e| {
        !matches!(
            e,
            pulldown_cmark::Event::Html(_) | pulldown_cmark::Event::InlineHtml(_)
        )
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// Render the page.
///
/// # Errors
/// [`PageError::Render`] (a kit bug).
pub fn render(cmp: &Comparison, kill_matrices: &[KillMatrix]) -> Result<String, PageError> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
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
                 "status": status, "message": message, "expected": {"k": "x".repeat(300)},
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
        assert_eq!(v["details"][0]["layer"], "key");
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
}
