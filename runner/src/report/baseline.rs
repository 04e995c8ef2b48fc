//! `--write-baseline`: this run's failures as an expected-failures file.
//!
//! Here, not in [`crate::expected`], because choosing the entries needs the outcome model,
//! and the outcome model needs the expected-failures list: the format stays below both.

use std::path::Path;

use crate::error::Error;
use crate::expected::{Entry, ExpectedFailures};
use crate::outcome::{CaseResult, Status};

/// Write a baseline file from `results`: every failed case, plus listed cases that still
/// fail (keeping their reasons from `expected`). Harness errors are not baselined. Returns
/// how many entries were written.
pub fn write_baseline(
    expected: &ExpectedFailures,
    path: &Path,
    results: &[CaseResult],
) -> Result<usize, Error> {
    let entries: Vec<Entry> = results
        .iter()
        .filter_map(|r| match r.status {
            Status::Failed => Some(Entry {
                id: r.name.clone(),
                reason: format!(
                    "baseline: {}",
                    r.message
                        .as_deref()
                        .and_then(|m| m.lines().next())
                        .unwrap_or("failed")
                ),
            }),
            Status::ExpectedFailure => Some(Entry {
                id: r.name.clone(),
                reason: expected
                    .reason_for(&r.name)
                    .unwrap_or("baseline")
                    .to_owned(),
            }),
            _ => None,
        })
        .collect();
    ExpectedFailures::write_file(path, &entries)?;
    Ok(entries.len())
}
