//! Machine- and human-readable reports of one run: JSON, JUnit XML and a Markdown summary.
//!
//! All three are rendered from one [`Report`] value, so they never disagree. The JSON shape
//! is specified by `runner/report.schema.json`; every report carries the run's provenance
//! (kit version, vector root hash, server and contract versions, start time, redacted argv).

pub mod baseline;
pub mod foreign;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod page;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

/// What one side of a run checked, per feature ([`crate::contract::features`]): the JSON
/// report's `features` (a producer or adapter) and `database_features` (the `sql::` cases),
/// the verdict line's feature lines, Markdown, JUnit, the page and the badge.
#[derive(Debug, Clone, Serialize)]
pub struct FeaturesSection {
    /// One line: `core, uniqueness; bulk not checked (6 of 13 skipped)`.
    pub checked: String,
    /// Every mandatory feature was checked whole.
    pub core: bool,
    /// The finding when the producer skipped a case of a mandatory feature (the run is then
    /// nonconformant); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// Per feature: the kit's cases, and how many were checked, skipped, not applicable,
    /// errored and not selected.
    pub rows: Vec<crate::contract::features::FeatureRow>,
}

impl FeaturesSection {
    /// The section of `coverage`, `None` when the run had no featured case.
    #[must_use]
    pub fn of(coverage: &crate::contract::features::Coverage) -> Option<Self> {
        (!coverage.is_empty()).then(|| Self {
            checked: coverage.summary(),
            core: coverage.core_checked(),
            finding: coverage.mandatory_skips(),
            rows: coverage.rows(),
        })
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
    /// What a producer or adapter run checked, per feature; absent when no producer or
    /// adapter case was in the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub features: Option<FeaturesSection>,
    /// What the run's `sql::` cases checked of the database, per feature, by the same rule
    /// with the database's own core; absent when no `sql::` case ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_features: Option<FeaturesSection>,
    /// Every recorded case, sorted by name.
    pub cases: Vec<CaseResult>,
    /// The producer engine's time per phase (`--timings`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<crate::timings::TimingsSection>,
}

/// How the caller names the report options in its messages.
#[derive(Debug, Clone, Copy)]
pub struct OptionNames {
    /// The JSON report's option.
    pub json: &'static str,
    /// The JUnit report's option.
    pub junit: &'static str,
    /// The Markdown summary's option.
    pub markdown: &'static str,
}

/// The runner's command-line options.
pub const CLI_OPTIONS: OptionNames = OptionNames {
    json: "--report-json",
    junit: "--junit",
    markdown: "--markdown",
};

/// Where to write which report.
#[derive(Debug, Clone)]
pub struct Targets<'a> {
    /// `--report-json`.
    pub json: Option<&'a Path>,
    /// `--junit`.
    pub junit: Option<&'a Path>,
    /// `--markdown` (`-` = stdout).
    pub markdown: Option<&'a Path>,
    /// How messages name the three options.
    pub names: OptionNames,
    /// Other files the run writes (`--write-baseline`, `--logfile`), with their options:
    /// [`Targets::check`] checks them with the reports.
    pub others: Vec<(&'static str, &'a Path)>,
}

impl Default for Targets<'_> {
    fn default() -> Self {
        Self {
            json: None,
            junit: None,
            markdown: None,
            names: CLI_OPTIONS,
            others: Vec::new(),
        }
    }
}

impl<'a> Targets<'a> {
    /// Every file to write, with its option (`--markdown -`, stdout, is not a file).
    fn files(&self) -> Vec<(&'static str, &'a Path)> {
        let markdown = self.markdown.filter(|p| *p != Path::new("-"));
        [
            (self.names.json, self.json),
            (self.names.junit, self.junit),
            (self.names.markdown, markdown),
        ]
        .into_iter()
        .filter_map(|(option, path)| Some((option, path?)))
        .chain(self.others.iter().copied())
        .collect()
    }

    /// Check, before anything runs, that every report can be written and that no two name
    /// the same file (compared canonicalised, and by device and inode, so `./r.json`, a
    /// symlink to it and a hard link all count as the same): a report that cannot be written
    /// must not cost a whole run, nor be found out only after the verdict was printed.
    /// Nothing is left behind: an existing file is opened for appending (not truncated), a
    /// new one is created and removed again.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the option, the path and the fix.
    pub fn check(&self) -> Result<(), Error> {
        let mut seen: Vec<(&'static str, &Path, Identity)> = Vec::new();
        for (option, path) in self.files() {
            let identity = probe(option, path)?;
            if let Some((other, other_path, _)) = seen.iter().find(|(_, _, i)| i.same(&identity)) {
                return Err(Error::Usage(format!(
                    "{other} {} and {option} {} are the same file ({}): one would overwrite the \
                     other; give each its own path",
                    other_path.display(),
                    path.display(),
                    identity.canonical.display()
                )));
            }
            seen.push((option, path, identity));
        }
        Ok(())
    }
}

/// What makes two paths the same file.
struct Identity {
    /// The absolute path with every symlink resolved (of the parent, for a new file).
    canonical: PathBuf,
    /// Device and inode of an existing file (hard links share them).
    inode: Option<(u64, u64)>,
}

impl Identity {
    fn same(&self, other: &Identity) -> bool {
        self.canonical == other.canonical || (self.inode.is_some() && self.inode == other.inode)
    }
}

/// Whether `path` can be written (see [`Targets::check`]), and its identity.
fn probe(option: &'static str, path: &Path) -> Result<Identity, Error> {
    use std::os::unix::fs::MetadataExt;
    let usage = |what: String| Error::Usage(format!("{option} {}: {what}", path.display()));
    if path.as_os_str().is_empty() {
        return Err(Error::Usage(format!("{option} is empty: give a file path")));
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(usage(
            "is a directory; give a file path inside it".to_owned(),
        )),
        Ok(meta) => {
            std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| usage(format!("cannot be written ({e}); give a writable path")))?;
            Ok(Identity {
                // A pipe behind /dev/stdout has no path to resolve to: compare it as given.
                canonical: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()),
                inode: Some((meta.dev(), meta.ino())),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !parent.is_dir() {
                return Err(usage(format!(
                    "directory {} does not exist; create it first or give another path",
                    parent.display()
                )));
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| usage(format!("cannot be created ({e}); give a writable path")))?;
            // The probe is removed: a run that stops before its reports leaves nothing.
            let _ = std::fs::remove_file(path);
            let canonical = std::fs::canonicalize(parent)
                .unwrap_or_else(|_| parent.to_owned())
                .join(path.file_name().unwrap_or_default());
            Ok(Identity {
                canonical,
                inode: None,
            })
        }
        Err(e) => Err(usage(format!("cannot be read ({e}); give another path"))),
    }
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
        if let Some(f) = &self.features {
            line.push_str(&format!(
                "\nawa-conformance: features checked: {}",
                f.checked
            ));
        }
        if let Some(f) = &self.database_features {
            line.push_str(&format!(
                "\nawa-conformance: database features checked: {}",
                f.checked
            ));
        }
        line
    }

    /// Write every requested report, each one even when another failed, and return the
    /// failures (each naming its option and path). The Markdown summary is appended to an
    /// existing file (GitHub's `$GITHUB_STEP_SUMMARY` is shared by every step of a job).
    ///
    /// A failed write is a harness error of the run ([`Report::record_unwritten`]), which the
    /// reports written after it already show; the JSON report comes last, so its `exit_code`
    /// is always the process's.
    pub fn write_all(&mut self, targets: &Targets<'_>) -> Vec<Error> {
        let names = targets.names;
        let mut failed = Vec::new();
        if let Some(path) = targets.markdown {
            let text = markdown::render(self);
            let written = if path == Path::new("-") {
                crate::console::print_io(&text)
            } else {
                append_file(path, &text)
            };
            self.settle(written, names.markdown, path, &mut failed);
        }
        if let Some(path) = targets.junit {
            let written = junit::render(self)
                .map_err(std::io::Error::other)
                .and_then(|text| std::fs::write(path, text));
            self.settle(written, names.junit, path, &mut failed);
        }
        if let Some(path) = targets.json {
            let written = json::render(self)
                .map_err(std::io::Error::other)
                .and_then(|text| std::fs::write(path, text));
            self.settle(written, names.json, path, &mut failed);
        }
        failed
    }

    fn settle(
        &mut self,
        written: std::io::Result<()>,
        option: &'static str,
        path: &Path,
        failed: &mut Vec<Error>,
    ) {
        if let Err(source) = written {
            let e = Error::ReportNotWritten {
                option,
                path: path.to_owned(),
                source,
            };
            self.record_unwritten(&e);
            failed.push(e);
        }
    }

    /// Record that an output of the run (a report, the baseline) was not written: a run
    /// error, and exit 6 unless the run already ended with an error or was stopped (those
    /// codes outrank it, see [`crate::exit`]).
    pub fn record_unwritten(&mut self, error: &Error) {
        self.run_errors.push(error.to_string());
        if matches!(self.verdict, Verdict::Conformant | Verdict::Nonconformant) {
            self.verdict = Verdict::Error;
            self.exit_code = crate::exit::HARNESS;
        }
    }
}

/// Append `text` to `path` (created if missing), starting on a line of its own.
fn append_file(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
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
}
