//! Several runs side by side: the model behind `awa-conformance report html|badge|diff|
//! compatibility`, read back from the JSON reports runs wrote (`runner/report.schema.json`).
//!
//! One model, four renderings, so the page, the badge, the PR comment and the compatibility
//! table never disagree about a report: [`Comparison::load`] reads the reports, and each
//! renderer ([`html`], [`badge`], [`diff`], [`compatibility`]) only lays out what it holds.
//! A column is a family or suite (`unique_key`, `sql::payload`, `producer::routing_precedence`),
//! a row an implementation (one report). Nothing here re-judges a case: a report's statuses are
//! the verdicts of the run that wrote it.

pub mod badge;
pub mod compatibility;
pub mod diff;
pub mod html;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::{REPORT_FORMAT, REPORT_FORMAT_VERSION};
use crate::contract::features::Coverage;

/// Why reports cannot be compared or rendered (exit 3: a bad input file names itself).
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// A report could not be read.
    #[error("{path}: cannot read the report: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A report is not a JSON report of this kit (format, version or a field).
    #[error(
        "{path}: not an awa-conformance JSON report (format {REPORT_FORMAT} version \
         {REPORT_FORMAT_VERSION}): {reason}; pass the file a run wrote with --report-json"
    )]
    NotAReport {
        /// The file.
        path: String,
        /// What is wrong, with serde's line and column.
        reason: String,
    },
    /// A report's verdict is not what its cases and exit code say: a report edited by hand
    /// or by a tool, which no renderer may show as it claims (a green badge over failed cases).
    #[error(
        "{path}: the verdict {verdict} disagrees with the report's own cases and exit code: \
         {reason}; the report was edited or is damaged: use the file the run wrote with \
         --report-json, or run again"
    )]
    VerdictDisagrees {
        /// The file.
        path: String,
        /// The verdict as the file states it, shown escaped (it may hold anything).
        verdict: String,
        /// What contradicts it.
        reason: String,
    },
    /// Writing an output failed.
    #[error("{path}: cannot write: {reason}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A template failed to render (a bug in the kit: the templates are compiled in).
    #[error("rendering {what} failed: {reason}")]
    Render {
        /// What was rendered.
        what: &'static str,
        /// Why.
        reason: String,
    },
}

/// A report as read back: the fields the page shows (unknown fields are ignored, so newer
/// reports of the same format version still load).
#[derive(Debug, Clone, Deserialize)]
pub struct ReportIn {
    /// Must be `awa-conformance-report`.
    pub format: String,
    /// Must be 1.
    pub format_version: u32,
    /// `conformant`, `nonconformant`, `error` or `interrupted`.
    pub verdict: String,
    /// The run's exit code.
    pub exit_code: u8,
    /// Where the results came from.
    pub provenance: ProvenanceIn,
    /// Harness problems not tied to a case.
    #[serde(default)]
    pub run_errors: Vec<String>,
    /// Every case.
    pub cases: Vec<CaseIn>,
    /// A producer or adapter run's per-feature section; only its catalogue counts are read,
    /// what happened is counted from the cases ([`ReportIn::coverage`]).
    #[serde(default)]
    pub features: Option<FeaturesIn>,
    /// The database side's per-feature section, read the same way
    /// ([`ReportIn::database_coverage`]).
    #[serde(default)]
    pub database_features: Option<FeaturesIn>,
}

/// The `features` section of a report, as far as the page reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct FeaturesIn {
    /// Per feature, the kit's cases.
    #[serde(default)]
    pub rows: Vec<crate::contract::features::FeatureRow>,
}

impl ReportIn {
    /// What the report's producer or adapter cases say per feature, counted by the kit's one
    /// rule from the cases themselves (never from the report's own words), against the
    /// catalogue counts its `features.rows` give; `None` for a run without such cases.
    #[must_use]
    pub fn coverage(&self) -> Option<crate::contract::features::Coverage> {
        self.coverage_of(crate::contract::features::Side::Producer)
    }

    /// The same for the report's `sql::` cases, against `database_features.rows`.
    #[must_use]
    pub fn database_coverage(&self) -> Option<crate::contract::features::Coverage> {
        self.coverage_of(crate::contract::features::Side::Database)
    }

    fn coverage_of(
        &self,
        side: crate::contract::features::Side,
    ) -> Option<crate::contract::features::Coverage> {
        use crate::contract::features::{Coverage, Feature, Side};
        let section = match side {
            Side::Producer => &self.features,
            Side::Database => &self.database_features,
        };
        let mut c = Coverage::of_rows(side, section.as_ref().map_or(&[][..], |f| &f.rows));
        for case in self
            .cases
            .iter()
            .filter(|c| Side::of_suite(&c.suite) == side)
        {
            let features: Vec<Feature> = case
                .features
                .iter()
                .filter_map(|f| Feature::from_id(f))
                .collect();
            // A status no report uses was refused when the report was read.
            if let Some(status) = crate::outcome::Status::named(&case.status) {
                c.add(&features, status.fate(case.skipped));
            }
        }
        // A database side whose every case was ignored never reached a database.
        let reached = side == Side::Producer || c.reached();
        (!c.is_empty() && reached).then_some(c)
    }
}

/// The provenance fields the page shows.
#[derive(Debug, Clone, Deserialize)]
pub struct ProvenanceIn {
    /// Kit version.
    pub kit_version: String,
    /// Contract version the kit tests.
    pub kit_contract_version: u32,
    /// Vector root hash.
    pub vectors_root_sha256: String,
    /// Server version or `n/a`.
    pub server_version: String,
    /// The checked schema's contract version, or `n/a` / `none (...)`.
    pub contract_version: String,
    /// `dsn (...)`, `embedded (...)`, `none`, `n/a`.
    pub database: String,
    /// Conformance level, `compat`, or `n/a`.
    pub level: String,
    /// Start time.
    pub started_at: String,
    /// Further provenance (`producer`, `released_awa`, ...).
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
}

/// One case as read back.
#[derive(Debug, Clone, Deserialize)]
pub struct CaseIn {
    /// `family::id`, `sql::suite::case`, `producer::family::...`.
    pub name: String,
    /// `offline` for the kit's own core checked against the vectors (every run has them).
    #[serde(default)]
    pub suite: String,
    /// One of [`STATUSES`].
    pub status: String,
    /// Why it failed, was not applicable, or was expected to fail.
    #[serde(default)]
    pub message: Option<String>,
    /// The layer a failure names (the report's `layer` field).
    #[serde(default)]
    pub layer: Option<String>,
    /// What the vector or reference says.
    #[serde(default)]
    pub expected: Option<Json>,
    /// What the implementation gave.
    #[serde(default)]
    pub actual: Option<Json>,
    /// The features a producer case checks.
    #[serde(default)]
    pub features: Vec<String>,
    /// The implementation answered `skipped`.
    #[serde(default)]
    pub skipped: bool,
}

/// The statuses a report uses, in the order the page lists them.
pub const STATUSES: [&str; 7] = [
    "passed",
    "failed",
    "errored",
    "expected_failure",
    "unexpected_pass",
    "not_applicable",
    "ignored",
];

/// The verdicts a report states (`runner/report.schema.json`); a report with any other is
/// refused by [`read`], so every renderer shows one of these words and nothing a file made up.
pub const VERDICTS: [&str; 4] = ["conformant", "nonconformant", "error", "interrupted"];

/// Whether a status is a problem (the run is nonconformant because of it).
#[must_use]
pub fn is_problem(status: &str) -> bool {
    matches!(status, "failed" | "errored" | "unexpected_pass")
}

/// One implementation: one report.
#[derive(Debug, Clone, Serialize)]
pub struct Implementation {
    /// What the page calls it: `LABEL=` given on the command line, else from the provenance.
    pub name: String,
    /// The report file it came from.
    pub source: String,
    /// The run's verdict and exit code.
    pub verdict: String,
    /// Exit code.
    pub exit_code: u8,
    /// Kit version that ran it.
    pub kit_version: String,
    /// `v1` (the checked schema's contract version) or released Awa's.
    pub contract: String,
    /// Conformance level.
    pub level: String,
    /// The provenance, flattened to `key: value` pairs for display.
    pub provenance: Vec<(String, String)>,
    /// Harness problems not tied to a case.
    pub run_errors: Vec<String>,
    /// Counts per status over all its cases.
    pub totals: BTreeMap<String, u64>,
    /// A producer or adapter run: the features checked whole and those not checked, by the kit's one
    /// rule over the report's cases (`core, uniqueness; bulk not checked (6 of 13 skipped)`).
    pub features: Option<String>,
    /// A producer or adapter run: the finding when it skipped cases of mandatory features.
    pub features_finding: Option<String>,
    /// A producer or adapter run: [`Self::features`] without the counts (docs/compatibility.md).
    #[serde(skip)]
    pub features_claimed: Option<String>,
    /// A run whose `sql::` cases reached a database: the database's features by the same rule
    /// (`core, uniqueness, payload; move-shard not checked (5 of 5 not applicable)`).
    pub database_features: Option<String>,
}

/// A case the page can drill into: anything not passed and not ignored.
#[derive(Debug, Clone, Serialize)]
pub struct Detail {
    /// Index into [`Comparison::implementations`].
    pub implementation: usize,
    /// Its column.
    pub column: String,
    /// Full case name.
    pub name: String,
    /// Status.
    pub status: String,
    /// The layer a failure names (the report's `layer` field), if any.
    pub layer: Option<String>,
    /// The message: the reason, the failure, or why it does not apply.
    pub message: Option<String>,
    /// Expected value.
    pub expected: Option<Json>,
    /// Actual value.
    pub actual: Option<Json>,
    /// The vector ID in the case name (`uk-057a37507d72`), when the case checks a vector.
    pub vector: Option<String>,
}

/// Several reports side by side.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// One per report, in command-line order.
    pub implementations: Vec<Implementation>,
    /// Families and suites, sorted: the columns.
    pub columns: Vec<String>,
    /// `cells[implementation][column]`: counts per status (absent: not run).
    pub cells: Vec<Vec<Option<BTreeMap<String, u64>>>>,
    /// Every case worth drilling into, per implementation in report order.
    pub details: Vec<Detail>,
    /// Per implementation, the name and status of every case (for [`diff`]).
    #[serde(skip)]
    pub statuses: Vec<BTreeMap<String, String>>,
}

/// The column a case belongs to: `sql::<suite>`, `producer::<family>`, `adapter::<family>`,
/// or `core::<family>` for the offline checks of the kit's own core (`suite` `offline`), which
/// every run makes and which say nothing about the database or producer it checked.
#[must_use]
pub fn column(name: &str, suite: &str) -> String {
    let mut parts = name.split("::");
    let first = parts.next().unwrap_or_default();
    match (first, parts.next()) {
        ("sql" | "producer" | "adapter", Some(second)) => format!("{first}::{second}"),
        _ if suite == "offline" => format!("{CORE}{first}"),
        _ => first.to_owned(),
    }
}

/// The prefix of the kit core's columns.
pub const CORE: &str = "core::";

/// The vector ID a case name carries (`<family prefix>-<12 hex>`), if any.
#[must_use]
pub fn vector_id(name: &str) -> Option<String> {
    name.split("::")
        .find(|part| {
            part.split_once('-').is_some_and(|(prefix, hex)| {
                !prefix.is_empty()
                    && prefix.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                    && hex.len() == 12
                    && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            })
        })
        .map(str::to_owned)
}

/// The name the provenance gives an implementation.
fn default_name(r: &ReportIn) -> String {
    let p = &r.provenance;
    if let Some(producer) = p.extra.get("producer") {
        return producer.clone();
    }
    if let Some(adapter) = p.extra.get("adapter") {
        return adapter.clone();
    }
    if let Some(released) = p.extra.get("released_awa") {
        return format!("released Awa: {released}");
    }
    if p.level != super::NOT_AVAILABLE {
        return format!(
            "contract schema ({}, PostgreSQL {})",
            p.level, p.server_version
        );
    }
    "reference core (offline vectors)".to_owned()
}

/// A command-line report argument: `FILE` or `LABEL=FILE`.
#[derive(Debug, Clone)]
pub struct Source {
    /// The label, when given.
    pub label: Option<String>,
    /// The report file.
    pub path: PathBuf,
}

impl Source {
    /// Parse `LABEL=FILE` (a label is anything before the first `=` when the rest names an
    /// existing file) or `FILE`.
    #[must_use]
    pub fn parse(arg: &str) -> Self {
        if let Some((label, path)) = arg.split_once('=') {
            if !label.is_empty() && Path::new(path).is_file() && !Path::new(arg).is_file() {
                return Self {
                    label: Some(label.to_owned()),
                    path: PathBuf::from(path),
                };
            }
        }
        Self {
            label: None,
            path: PathBuf::from(arg),
        }
    }
}

/// Read and check one report: the one reader behind `report html|badge|diff|compatibility`,
/// so what it refuses no renderer shows. A leading UTF-8 byte order mark (what some editors
/// and Windows tools write) is skipped.
///
/// # Errors
/// [`PageError::Read`] or [`PageError::NotAReport`], naming the file;
/// [`PageError::VerdictDisagrees`] when the verdict is not what the cases say ([`agreement`]).
pub fn read(path: &Path) -> Result<ReportIn, PageError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| PageError::Read {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let r: ReportIn = serde_json::from_str(text).map_err(|e| PageError::NotAReport {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    if r.format != REPORT_FORMAT || r.format_version != REPORT_FORMAT_VERSION {
        return Err(PageError::NotAReport {
            path: shown,
            reason: format!("format {:?} version {}", r.format, r.format_version),
        });
    }
    if let Some(bad) = r
        .cases
        .iter()
        .find(|c| !STATUSES.contains(&c.status.as_str()))
    {
        return Err(PageError::NotAReport {
            path: shown,
            reason: format!(
                "case {} has the unknown status {}",
                crate::inert::one_line(&bad.name),
                crate::inert::one_line(&format!("{:?}", bad.status))
            ),
        });
    }
    if let Err(reason) = agreement(&r) {
        return Err(PageError::VerdictDisagrees {
            path: shown,
            verdict: crate::inert::one_line(&format!("{:?}", r.verdict)).into_owned(),
            reason,
        });
    }
    Ok(r)
}

/// Whether a report's verdict and exit code are what a run would have concluded from its
/// cases and run errors (`runner/src/run/report.rs`, ADR 0005): `conformant` (exit 0) needs at
/// least one case checked (not only not-applicable or ignored ones), no case failed, errored
/// or unexpectedly passed, and no run error; `nonconformant` (exit 1) needs a case failed or
/// unexpectedly passed; `error` exits 2 to 6 and `interrupted` 130, 141 or 143, with any
/// cases (a run stopped or broken keeps what it recorded).
///
/// # Errors
/// What contradicts the verdict, in words.
pub fn agreement(r: &ReportIn) -> Result<(), String> {
    let count = |pred: &dyn Fn(&str) -> bool| r.cases.iter().filter(|c| pred(&c.status)).count();
    let problems = count(&is_problem);
    let failed = count(&|s| matches!(s, "failed" | "unexpected_pass"));
    let checked = count(&|s| !matches!(s, "not_applicable" | "ignored"));
    let exit = r.exit_code;
    match r.verdict.as_str() {
        "conformant" if problems > 0 => Err(format!(
            "{problems} of its {} cases failed, errored or unexpectedly passed",
            r.cases.len()
        )),
        "conformant" if checked == 0 => Err(format!(
            "none of its {} cases was checked (a run that checks nothing is never conformant)",
            r.cases.len()
        )),
        "conformant" if !r.run_errors.is_empty() => {
            Err(format!("it records {} run errors", r.run_errors.len()))
        }
        "conformant" if exit != crate::exit::SUCCESS => {
            Err(format!("its exit code is {exit}, not 0"))
        }
        "nonconformant" if failed == 0 => Err("no case failed or unexpectedly passed".to_owned()),
        "nonconformant" if exit != crate::exit::NONCONFORMANT => {
            Err(format!("its exit code is {exit}, not 1"))
        }
        "error" if (2..=6).contains(&exit) => Ok(()),
        "error" => Err(format!("its exit code is {exit}, not one of 2 to 6")),
        "interrupted"
            if [
                crate::exit::INTERRUPTED,
                crate::exit::STDOUT_CLOSED,
                crate::exit::TERMINATED,
            ]
            .contains(&exit) =>
        {
            Ok(())
        }
        "interrupted" => Err(format!("its exit code is {exit}, not 130, 141 or 143")),
        "conformant" | "nonconformant" => Ok(()),
        _ => Err(format!("it is none of {}", VERDICTS.join(", "))),
    }
}

impl Comparison {
    /// Read every report and build the model.
    ///
    /// # Errors
    /// The first report that cannot be read, naming it.
    pub fn load(sources: &[Source]) -> Result<Self, PageError> {
        let reports = sources
            .iter()
            .map(|s| Ok((s, read(&s.path)?)))
            .collect::<Result<Vec<_>, PageError>>()?;
        Ok(Self::build(reports.into_iter().map(|(s, r)| {
            (s.label.clone(), s.path.display().to_string(), r)
        })))
    }

    /// Build the model from reports already read: `(label, source, report)`.
    pub fn build(reports: impl IntoIterator<Item = (Option<String>, String, ReportIn)>) -> Self {
        let mut implementations = Vec::new();
        let mut per_impl: Vec<BTreeMap<String, BTreeMap<String, u64>>> = Vec::new();
        let mut details = Vec::new();
        let mut statuses = Vec::new();
        for (i, (label, source, r)) in reports.into_iter().enumerate() {
            let mut cells: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
            let mut totals: BTreeMap<String, u64> = BTreeMap::new();
            let mut names = BTreeMap::new();
            for c in &r.cases {
                let col = column(&c.name, &c.suite);
                *cells
                    .entry(col.clone())
                    .or_default()
                    .entry(c.status.clone())
                    .or_default() += 1;
                *totals.entry(c.status.clone()).or_default() += 1;
                names.insert(c.name.clone(), c.status.clone());
                if c.status != "passed" && c.status != "ignored" {
                    details.push(Detail {
                        implementation: i,
                        column: col,
                        name: c.name.clone(),
                        status: c.status.clone(),
                        layer: c.layer.clone(),
                        message: c.message.clone(),
                        expected: c.expected.clone(),
                        actual: c.actual.clone(),
                        vector: vector_id(&c.name),
                    });
                }
            }
            let p = &r.provenance;
            let mut provenance = vec![
                ("kit".to_owned(), p.kit_version.clone()),
                (
                    "kit contract".to_owned(),
                    format!("v{}", p.kit_contract_version),
                ),
                ("vectors root".to_owned(), p.vectors_root_sha256.clone()),
                ("server".to_owned(), p.server_version.clone()),
                ("database".to_owned(), p.database.clone()),
                ("started".to_owned(), p.started_at.clone()),
            ];
            provenance.extend(p.extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            // Counted once from the cases, then said three ways.
            let coverage = r.coverage();
            implementations.push(Implementation {
                name: label.unwrap_or_else(|| default_name(&r)),
                source,
                verdict: r.verdict.clone(),
                exit_code: r.exit_code,
                kit_version: p.kit_version.clone(),
                contract: if p.contract_version.chars().all(|c| c.is_ascii_digit())
                    && !p.contract_version.is_empty()
                {
                    format!("v{}", p.contract_version)
                } else {
                    p.contract_version.clone()
                },
                level: p.level.clone(),
                provenance,
                run_errors: r.run_errors.clone(),
                totals,
                features: coverage.as_ref().map(Coverage::summary),
                features_finding: coverage.as_ref().and_then(Coverage::mandatory_skips),
                features_claimed: coverage.as_ref().map(Coverage::claims),
                database_features: r.database_coverage().map(|c| c.summary()),
            });
            per_impl.push(cells);
            statuses.push(names);
        }
        // Problems first, then expected failures, then what does not apply: a reader looks
        // for what broke (stable: report order within each group).
        details.sort_by_key(|d| match d.status.as_str() {
            "failed" | "errored" | "unexpected_pass" => 0,
            "expected_failure" => 1,
            _ => 2,
        });
        let mut columns: Vec<String> = per_impl
            .iter()
            .flat_map(|cells| cells.keys().cloned())
            .collect();
        columns.sort();
        columns.dedup();
        let cells = per_impl
            .iter()
            .map(|row| columns.iter().map(|c| row.get(c).cloned()).collect())
            .collect();
        Self {
            implementations,
            columns,
            cells,
            details,
            statuses,
        }
    }
}

/// Write `text` to `path`, naming the file on failure.
///
/// # Errors
/// [`PageError::Write`].
pub fn write(path: &Path, text: &[u8]) -> Result<(), PageError> {
    std::fs::write(path, text).map_err(|e| PageError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_group_by_family_or_suite() {
        assert_eq!(
            column("unique_key::uk-057a37507d72", "offline"),
            "core::unique_key"
        );
        assert_eq!(column("sql::payload::args_typed", "db"), "sql::payload");
        assert_eq!(
            column(
                "producer::routing_precedence::rp-1a2b3c4d5e6f::w8",
                "producer"
            ),
            "producer::routing_precedence"
        );
        assert_eq!(
            column("producer::coverage", "producer"),
            "producer::coverage"
        );
    }

    #[test]
    fn vector_ids_are_found_in_names() {
        assert_eq!(
            vector_id("producer::partition::pt-0a1b2c3d4e5f::unique").as_deref(),
            Some("pt-0a1b2c3d4e5f")
        );
        assert_eq!(vector_id("sql::width::move_shard_helper"), None);
    }
}
