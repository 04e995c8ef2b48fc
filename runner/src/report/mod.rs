//! Machine- and human-readable reports of one run: JSON, JUnit XML and a Markdown summary.
//!
//! All three are rendered from one [`Report`] value, so they never disagree. The JSON shape
//! is specified by `runner/report.schema.json`; every report carries the run's provenance
//! (kit version, vector root hash, server and contract versions, start time, redacted argv).

pub mod baseline;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod redact;
pub mod shorten;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::Error;
use crate::outcome::{CaseResult, Status};

/// `format` field of a JSON report.
pub const REPORT_FORMAT: &str = "awa-conformance-report";
/// `format_version` field of a JSON report.
pub const REPORT_FORMAT_VERSION: u32 = 1;
/// Provenance value for facts that do not apply to this run (e.g. no database).
pub const NOT_AVAILABLE: &str = "n/a";

/// Where the results came from.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    /// `awa-conformance` version (CARGO_PKG_VERSION).
    pub kit_version: String,
    /// Contract version the kit tests (`awa_conformance_core::CONTRACT_VERSION`).
    pub kit_contract_version: u32,
    /// Root hash of the vector manifest that was checked.
    pub vectors_root_sha256: String,
    /// `embedded` or the `--vectors-dir` path.
    pub vectors_source: String,
    /// PostgreSQL server version, or `n/a`.
    pub server_version: String,
    /// `awa.contract_version()` reported by the server, or `n/a`.
    pub contract_version: String,
    /// Database used (`dsn`, `embedded`, `none`), or `n/a`.
    pub database: String,
    /// The conformance level checked (docs/contract.md §12), e.g. `core+uniqueness`, or `n/a`.
    pub level: String,
    /// RFC 3339 UTC start time.
    pub started_at: String,
    /// Command line, with DSN passwords replaced by `***`.
    pub argv: Vec<String>,
    /// Any further provenance the suites recorded.
    pub extra: BTreeMap<String, String>,
}

/// Counts per status.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Cases recorded (every selected case).
    pub total: u64,
    /// Passed.
    pub passed: u64,
    /// Failed (nonconformant).
    pub failed: u64,
    /// Failed as listed in the expected-failures file.
    pub expected_failure: u64,
    /// Listed as expected failures but passed.
    pub unexpected_pass: u64,
    /// Not applicable to the implementation.
    pub not_applicable: u64,
    /// Not run (e.g. no database).
    pub ignored: u64,
    /// Harness errors.
    pub errored: u64,
    /// Trials removed by the filter / `--skip`.
    pub filtered_out: u64,
    /// Wall time of the run in milliseconds.
    pub duration_ms: f64,
}

impl Summary {
    /// Count `cases`.
    pub fn of(cases: &[CaseResult], filtered_out: u64, duration_ms: f64) -> Self {
        let mut s = Self {
            filtered_out,
            duration_ms,
            ..Self::default()
        };
        for case in cases {
            s.total += 1;
            *s.slot(case.status) += 1;
        }
        s
    }

    fn slot(&mut self, status: Status) -> &mut u64 {
        match status {
            Status::Passed => &mut self.passed,
            Status::Failed => &mut self.failed,
            Status::ExpectedFailure => &mut self.expected_failure,
            Status::UnexpectedPass => &mut self.unexpected_pass,
            Status::NotApplicable => &mut self.not_applicable,
            Status::Ignored => &mut self.ignored,
            Status::Errored => &mut self.errored,
        }
    }

    /// The count for one status.
    pub fn count(&self, status: Status) -> u64 {
        match status {
            Status::Passed => self.passed,
            Status::Failed => self.failed,
            Status::ExpectedFailure => self.expected_failure,
            Status::UnexpectedPass => self.unexpected_pass,
            Status::NotApplicable => self.not_applicable,
            Status::Ignored => self.ignored,
            Status::Errored => self.errored,
        }
    }
}

/// The verdict of a run, as the reports show it (the run decides it from its results, and its
/// exit code from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every selected case passed (exit 0).
    Conformant,
    /// A case failed or a listed expected failure passed (exit 1).
    Nonconformant,
    /// The run could not reach a verdict: an error, a harness problem, or nothing checked
    /// (exits 2 to 6).
    Error,
    /// The run was stopped early (SIGINT, SIGTERM, closed stdout: exit 130, 143, 141); the
    /// cases it recorded are real, the rest did not run.
    Interrupted,
}

impl Verdict {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Conformant => "conformant",
            Verdict::Nonconformant => "nonconformant",
            Verdict::Error => "error",
            Verdict::Interrupted => "interrupted",
        }
    }
}

/// Everything the reports show.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Always [`REPORT_FORMAT`].
    pub format: &'static str,
    /// Always [`REPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// Conformant, nonconformant, or error.
    pub verdict: Verdict,
    /// The process exit code of the run.
    pub exit_code: u8,
    /// Where the results came from.
    pub provenance: Provenance,
    /// Counts.
    pub summary: Summary,
    /// Harness problems not tied to one case.
    pub run_errors: Vec<String>,
    /// Every recorded case, sorted by name.
    pub cases: Vec<CaseResult>,
}

/// Where to write which report.
#[derive(Debug, Default, Clone)]
pub struct Targets<'a> {
    /// `--report-json`.
    pub json: Option<&'a Path>,
    /// `--junit`.
    pub junit: Option<&'a Path>,
    /// `--markdown` (`-` = stdout).
    pub markdown: Option<&'a Path>,
}

impl Report {
    /// The one line printed on stderr at the end of a run, e.g.
    /// `awa-conformance: conformant (exit 0): 1523 passed, 2 xfail, 0 failed, 0 errored,
    /// 0 not applicable, 0 ignored`.
    #[must_use]
    pub fn summary_line(&self) -> String {
        let s = &self.summary;
        let mut line = format!(
            "awa-conformance: {} (exit {}): {} passed, {} xfail, {} failed",
            self.verdict.as_str(),
            self.exit_code,
            s.passed,
            s.expected_failure,
            s.failed
        );
        if s.unexpected_pass > 0 {
            line.push_str(&format!(", {} unexpectedly passed", s.unexpected_pass));
        }
        line.push_str(&format!(
            ", {} errored, {} not applicable, {} ignored",
            s.errored, s.not_applicable, s.ignored
        ));
        line
    }

    /// Write every requested report. The Markdown summary is appended to an existing file
    /// (GitHub's `$GITHUB_STEP_SUMMARY` is shared by every step of a job).
    pub fn write_all(&self, targets: &Targets<'_>) -> Result<(), Error> {
        if let Some(path) = targets.json {
            write_file(path, &json::render(self)?)?;
        }
        if let Some(path) = targets.junit {
            write_file(path, &junit::render(self)?)?;
        }
        if let Some(path) = targets.markdown {
            let text = markdown::render(self);
            if path == Path::new("-") {
                crate::console::print(&text, "cannot write Markdown to")?;
            } else {
                append_file(path, &text)?;
            }
        }
        Ok(())
    }
}

/// Append `text` to `path` (created if missing), starting on a line of its own.
fn append_file(path: &Path, text: &str) -> Result<(), Error> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let io = |source| Error::Io {
        action: "cannot append the report to",
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    // A blank line after earlier content (best effort: a pipe or device cannot seek).
    let mut last = [0u8; 1];
    let separator = match file
        .seek(SeekFrom::End(-1))
        .and_then(|_| file.read_exact(&mut last))
    {
        Ok(()) if last == *b"\n" => "\n",
        Ok(()) => "\n\n",
        Err(_) => "",
    };
    file.write_all(format!("{separator}{text}").as_bytes())
        .map_err(io)
}

fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|source| Error::Io {
        action: "cannot write report",
        path: path.to_owned(),
        source,
    })
}

/// Escape a value for a one-line Markdown table cell or list item.
pub(crate) fn one_line(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}
