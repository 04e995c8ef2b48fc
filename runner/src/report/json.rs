//! The JSON report: `serde_json` of [`Report`], shaped as `runner/report.schema.json` says.

use super::Report;
use crate::error::Error;

/// Pretty JSON with a final newline.
pub fn render(report: &Report) -> Result<String, Error> {
    let mut text = serde_json::to_string_pretty(report).map_err(|e| Error::Harness {
        detail: format!("cannot serialise the JSON report: {e}"),
    })?;
    text.push('\n');
    Ok(text)
}
