//! The expected-failures file: known nonconformances a run tolerates, each with a reason.
//!
//! ```json
//! {"version": 1, "expected_failures": [{"id": "sql::function::rp-0123abcd4567", "reason": "…"}]}
//! ```
//!
//! * `id` is a trial name as printed by `--list`, or a trailing part of one made of whole
//!   `::` segments (`function::rp-0123abcd4567`, or a bare vector ID such as
//!   `rp-0123abcd4567`, which covers every trial ending in that ID). Every entry must match
//!   at least one trial of the run's full, unfiltered trial list, so a typo cannot silently
//!   cover nothing.
//! * `reason` is required and non-empty: a tolerated failure must say why.
//! * A listed case that fails is recorded `expected_failure` and does not fail the run; a
//!   listed case that passes is recorded `unexpected_pass` and fails the run (the entry is
//!   stale and must be removed).
//! * `--write-baseline FILE` writes this format from a run: every case that failed (and every
//!   listed case that still fails, keeping its reason), with reason `baseline: <message>`.
//!   The run still exits with its normal code: a baseline records failures, it does not
//!   excuse them until it is passed back with `--expected-failures`.
//! * A leading UTF-8 byte order mark (as some Windows editors write) is ignored.
//!
//! Loading, checking and lookups are linear in the file and the trial list (hash sets of
//! IDs and of each trial's `::` suffixes), so a file of millions of entries loads in seconds
//! and a wrong ID is reported without scanning the trial list once per entry.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The only file version this kit reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// One tolerated failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Trial name, or a trailing `::`-segment suffix of one.
    pub id: String,
    /// Why the failure is tolerated.
    pub reason: String,
}

/// The parsed file (empty when no `--expected-failures` was given).
#[derive(Debug, Clone, Default)]
pub struct ExpectedFailures {
    entries: Vec<Entry>,
    /// Each entry's ID and its position in `entries` (IDs are unique in a loaded file; for a
    /// list built in code the first entry of an ID wins, as a scan in file order would).
    by_id: HashMap<String, usize>,
    path: Option<PathBuf>,
}

/// The on-disk shape, with every field optional so that a missing one gets a precise error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    version: Option<serde_json::Value>,
    expected_failures: Option<Vec<RawEntry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    id: Option<String>,
    reason: Option<String>,
}

#[derive(Serialize)]
struct OutFile<'a> {
    version: u64,
    expected_failures: &'a [Entry],
}

/// Whether `id` names `trial`: equal, or a suffix of it made of whole `::` segments.
#[cfg(test)]
fn matches(id: &str, trial: &str) -> bool {
    suffixes(trial).any(|s| s == id)
}

/// Every ID that names `trial`: the name itself and each suffix of it that follows a `::`
/// (`sql::unique_key::uk-1` → itself, `unique_key::uk-1`, `uk-1`).
fn suffixes(trial: &str) -> impl Iterator<Item = &str> {
    let bytes = trial.as_bytes();
    std::iter::once(trial).chain((2..bytes.len()).filter_map(move |i| {
        (bytes.get(i - 2..i) == Some(b"::".as_slice()))
            .then(|| trial.get(i..))
            .flatten()
    }))
}

/// The UTF-8 byte order mark some editors put at the start of a file.
const BOM: char = '\u{feff}';

impl ExpectedFailures {
    /// Read and check the file's shape (IDs are checked later against the trial list).
    pub fn load(path: &Path) -> Result<Self, Error> {
        let fail = |detail: String| Error::ExpectedFailures {
            path: path.to_owned(),
            detail,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| fail(format!("cannot read it ({e}); check the path")))?;
        // serde_json refuses a BOM as "expected value at line 1 column 1", which names neither
        // the mark nor a fix; it carries no meaning in JSON, so it is dropped.
        let raw: RawFile =
            serde_json::from_str(text.strip_prefix(BOM).unwrap_or(&text)).map_err(|e| {
                fail(format!(
                    "not a valid expected-failures file ({e}); expected \
                 {{\"version\": 1, \"expected_failures\": [{{\"id\": …, \"reason\": …}}]}}"
                ))
            })?;
        match raw.version {
            Some(serde_json::Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => {}
            Some(other) => {
                return Err(fail(format!(
                    "unsupported \"version\": {other}; this kit reads version {FORMAT_VERSION}"
                )))
            }
            None => {
                return Err(fail(format!(
                    "missing \"version\"; add \"version\": {FORMAT_VERSION}"
                )))
            }
        }
        let raw_entries = raw.expected_failures.ok_or_else(|| {
            fail("missing \"expected_failures\" array; add it (it may be empty)".into())
        })?;
        let mut entries = Vec::with_capacity(raw_entries.len());
        let mut by_id = HashMap::with_capacity(raw_entries.len());
        for (index, entry) in raw_entries.into_iter().enumerate() {
            let id = match entry.id {
                Some(id) if !id.trim().is_empty() => id,
                _ => {
                    return Err(fail(format!(
                        "entry {index} has no \"id\"; give the trial name as printed by --list"
                    )))
                }
            };
            let reason = match entry.reason {
                Some(reason) if !reason.trim().is_empty() => reason,
                _ => {
                    return Err(fail(format!(
                        "entry {index} ({id}) has no \"reason\"; say why the failure is tolerated"
                    )))
                }
            };
            if let Some(first) = by_id.insert(id.clone(), index) {
                return Err(fail(format!(
                    "entry {index} repeats id {id} (first listed as entry {first}); list each \
                     id once"
                )));
            }
            entries.push(Entry { id, reason });
        }
        Ok(Self {
            entries,
            by_id,
            path: Some(path.to_owned()),
        })
    }

    /// A list built in code (e.g. by a tool embedding the runner); `load` is the file path.
    pub fn from_entries(entries: Vec<Entry>) -> Self {
        let mut by_id = HashMap::with_capacity(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            by_id.entry(entry.id.clone()).or_insert(index);
        }
        Self {
            entries,
            by_id,
            path: None,
        }
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether no failure is tolerated.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Fail on the first entry that names no trial in `trial_names` (the full, unfiltered list).
    pub fn check_ids<'a>(
        &self,
        trial_names: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Result<(), Error> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let known: HashSet<&str> = trial_names.into_iter().flat_map(suffixes).collect();
        for (index, entry) in self.entries.iter().enumerate() {
            if !known.contains(entry.id.as_str()) {
                return Err(Error::ExpectedFailures {
                    path: self.path.clone().unwrap_or_default(),
                    detail: format!(
                        "entry {index}: id {} names no trial of this run; use a name printed by \
                         `awa-conformance --list` (or remove the entry)",
                        entry.id
                    ),
                });
            }
        }
        Ok(())
    }

    /// The reason a trial is listed, if it is.
    pub fn reason_for(&self, trial: &str) -> Option<&str> {
        // The first entry in file order that names the trial, as the file reads.
        suffixes(trial)
            .filter_map(|id| self.by_id.get(id).copied())
            .min()
            .and_then(|index| self.entries.get(index))
            .map(|e| e.reason.as_str())
    }

    /// Write `entries` to `path` in this format (what `--write-baseline` produces; which
    /// cases become entries is decided in `report/baseline.rs`, above the outcome model).
    pub fn write_file(path: &Path, entries: &[Entry]) -> Result<(), Error> {
        let mut text = serde_json::to_string_pretty(&OutFile {
            version: FORMAT_VERSION,
            expected_failures: entries,
        })
        .map_err(|e| Error::Harness {
            detail: format!("cannot serialise baseline: {e}"),
        })?;
        text.push('\n');
        std::fs::write(path, text).map_err(|source| Error::Io {
            action: "cannot write baseline",
            path: path.to_owned(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_whole_trailing_segments_only() {
        assert!(matches("unique_key::uk-0123", "unique_key::uk-0123"));
        assert!(matches("uk-0123", "sql::unique_key::uk-0123"));
        assert!(matches("unique_key::uk-0123", "sql::unique_key::uk-0123"));
        assert!(!matches("k-0123", "unique_key::uk-0123"));
        assert!(!matches("uk-012", "unique_key::uk-0123"));
        assert!(!matches(":uk-0123", "unique_key::uk-0123"));
        assert!(matches(":uk-0123", "unique_key:::uk-0123"));
        assert!(matches("uk-0123", "unique_key:::uk-0123"));
    }

    #[test]
    fn reason_is_that_of_the_first_matching_entry() {
        let entry = |id: &str, reason: &str| Entry {
            id: id.to_owned(),
            reason: reason.to_owned(),
        };
        let xf = ExpectedFailures::from_entries(vec![
            entry("uk-1", "bare id first"),
            entry("unique_key::uk-1", "longer id second"),
        ]);
        assert_eq!(
            xf.reason_for("sql::unique_key::uk-1"),
            Some("bare id first")
        );
        assert_eq!(xf.reason_for("sql::unique_key::uk-2"), None);
        assert_eq!(xf.reason_for("uk-1x"), None);
    }

    #[test]
    fn a_leading_byte_order_mark_is_accepted() {
        let xf = load_str(
            "\u{feff}{\"version\":1,\"expected_failures\":[{\"id\":\"uk-1\",\"reason\":\"r\"}]}",
        )
        .unwrap();
        assert_eq!(xf.reason_for("unique_key::uk-1"), Some("r"));
    }

    #[test]
    fn an_unknown_first_id_is_reported_with_its_position_among_many() {
        // Many entries (every one unknown): the first is named, with its position.
        let entries: Vec<String> = (0..20_000)
            .map(|i| format!(r#"{{"id":"uk-unknown-{i}","reason":"r"}}"#))
            .collect();
        let xf = load_str(&format!(
            r#"{{"version":1,"expected_failures":[{}]}}"#,
            entries.join(",")
        ))
        .unwrap();
        let names: Vec<String> = (0..5_000)
            .map(|i| format!("sql::unique_key::uk-{i}"))
            .collect();
        let err = xf
            .check_ids(names.iter().map(String::as_str))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("entry 0: id uk-unknown-0 names no trial"),
            "{err}"
        );
    }

    #[test]
    fn a_repeated_id_names_both_positions() {
        let err = load_str(
            r#"{"version":1,"expected_failures":[{"id":"a","reason":"r"},{"id":"b","reason":"r"},{"id":"a","reason":"r"}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("entry 2 repeats id a (first listed as entry 0)"),
            "{err}"
        );
    }

    fn load_str(text: &str) -> Result<ExpectedFailures, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("xf.json");
        std::fs::write(&path, text).unwrap();
        ExpectedFailures::load(&path)
    }

    #[test]
    fn missing_reason_names_the_entry_index() {
        let err =
            load_str(r#"{"version":1,"expected_failures":[{"id":"a","reason":"r"},{"id":"b"}]}"#)
                .unwrap_err()
                .to_string();
        assert!(err.contains("entry 1 (b) has no \"reason\""), "{err}");
    }

    #[test]
    fn wrong_version_and_unknown_field_are_rejected() {
        assert!(load_str(r#"{"version":2,"expected_failures":[]}"#).is_err());
        assert!(load_str(r#"{"version":1,"expected_failures":[],"x":1}"#).is_err());
        assert!(load_str(r#"{"expected_failures":[]}"#).is_err());
        assert!(load_str(r#"{"version":1,"expected_failures":[]}"#)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn unknown_id_is_rejected_against_the_trial_list() {
        let xf =
            load_str(r#"{"version":1,"expected_failures":[{"id":"uk-9","reason":"r"}]}"#).unwrap();
        let names = ["unique_key::uk-1", "unique_key::uk-9"];
        assert!(xf.check_ids(names.iter().copied()).is_ok());
        let err = xf
            .check_ids(["unique_key::uk-1"].iter().copied())
            .unwrap_err();
        assert_eq!(err.exit_code(), crate::exit::USAGE);
        assert!(err.to_string().contains("entry 0: id uk-9"), "{err}");
    }
}
