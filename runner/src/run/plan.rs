//! Step 1 of a run: check the options, load the expected failures and the vectors, name every
//! trial, and decide what is selected (or print the `--list` and stop).

use std::path::Path;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use awa_conformance_vectors::VectorSet;
use libtest_mimic::{FormatSetting, Trial};

use crate::cli::RunArgs;
use crate::error::Error;
use crate::expected::ExpectedFailures;
use crate::outcome::{
    RunContext, PROVENANCE_CONTRACT_VERSION, PROVENANCE_DATABASE, PROVENANCE_SERVER_VERSION,
};
use crate::report::NOT_AVAILABLE;
use crate::suites::{db, offline};
use crate::vector_set::load_vectors;

/// What the later steps of a run need from its plan.
pub(super) struct Plan {
    /// When the run started (for its duration).
    pub(super) started: Instant,
    /// The same, RFC 3339 UTC, for the provenance.
    pub(super) started_at: String,
    /// The run's shared state (results, provenance, expected failures, stop requests).
    pub(super) ctx: Arc<RunContext>,
    /// The verified vector set.
    pub(super) set: VectorSet,
    /// `embedded` or the `--vectors-dir` path.
    pub(super) vectors_source: String,
    /// Whether the selection holds a SQL case (only then is a database opened).
    pub(super) db_selected: bool,
}

/// How planning ended.
#[expect(
    clippy::large_enum_variant,
    reason = "built once per run; boxing buys nothing"
)]
pub(super) enum Planned {
    /// `--list` printed the selected trials: nothing runs.
    Listed,
    /// Run: the plan, and the offline trials (already built; they need no database).
    Run(Plan, Vec<Trial>),
}

/// Plan the run (step 1): every failure here comes before anything ran, so no report is
/// written for it.
pub(super) fn plan(args: &RunArgs) -> Result<Planned, Error> {
    let started = Instant::now();
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    check_usage(args)?;
    // A report that cannot be written is a usage error now, not a lost run later.
    targets(args).check()?;
    let expected = match &args.expected_failures {
        Some(path) => ExpectedFailures::load(path)?,
        None => ExpectedFailures::default(),
    };
    let (set, vectors_source) = load_vectors(args.vectors_dir.as_deref())?;
    let ctx = RunContext::with_case_timeout(expected, args.case_timeout());
    ctx.set_provenance(PROVENANCE_SERVER_VERSION, NOT_AVAILABLE.to_owned());
    ctx.set_provenance(PROVENANCE_CONTRACT_VERSION, NOT_AVAILABLE.to_owned());
    ctx.set_provenance(PROVENANCE_DATABASE, NOT_AVAILABLE.to_owned());
    let lt = &args.libtest;

    // Names first: the full list (for expected-failure IDs) and whether any SQL case is selected.
    let offline_trials = offline::trials(&ctx, &set);
    let listed_db = db::trials(&ctx, None, "listing only", &set);
    let listed_adapter: Vec<Trial> = match &args.adapter {
        // Listing names must not start a producer process.
        Some(_) => crate::adapter::trial_names(&set)
            .into_iter()
            .map(|name| ctx.ignored(crate::adapter::SUITE, name, "listing only".to_owned()))
            .collect(),
        None => Vec::new(),
    };
    // The producer's cases are listed without starting it, like the adapter's.
    let listed_producer = crate::producer::listed(&ctx, &set, args.producer_launch().as_ref());
    let all_names: Vec<&str> = offline_trials
        .iter()
        .chain(&listed_db)
        .chain(&listed_adapter)
        .chain(&listed_producer)
        .map(Trial::name)
        .collect();
    // Names are the identity of a case (filters, expected failures, reports): no duplicates.
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = all_names.iter().find(|n| !seen.insert(**n)) {
        return Err(Error::Harness {
            detail: format!("two trials are named {dup}; every case name must be unique"),
        });
    }
    ctx.expected_failures()
        .check_ids(all_names.iter().copied())?;
    let db_selected = listed_db
        .iter()
        .chain(&listed_producer)
        .any(|t| !lt.is_filtered_out(t));
    let selected = offline_trials
        .iter()
        .chain(&listed_db)
        .chain(&listed_adapter)
        .chain(&listed_producer)
        .filter(|t| !lt.is_filtered_out(t))
        .count();

    if lt.list {
        // libtest-mimic's own listing panics on a closed pipe (`| head`); print it ourselves,
        // in its format, so `--exact <printed name>` runs exactly that trial.
        let trials: Vec<Trial> = offline_trials
            .into_iter()
            .chain(listed_db)
            .chain(listed_adapter)
            .chain(listed_producer)
            .collect();
        list(lt, &trials)?;
        return Ok(Planned::Listed);
    }
    if selected == 0 {
        return Err(Error::Usage(nothing_selected(lt)));
    }
    Ok(Planned::Run(
        Plan {
            started,
            started_at,
            ctx,
            set,
            vectors_source,
            db_selected,
        },
        offline_trials,
    ))
}

/// Options libtest-mimic accepts but that make no sense here, and other combinations clap
/// cannot express.
fn check_usage(args: &RunArgs) -> Result<(), Error> {
    let lt = &args.libtest;
    if lt.bench {
        return Err(Error::Usage(
            "--bench: awa-conformance has no benchmarks; drop the flag".into(),
        ));
    }
    if lt.test_threads == Some(0) {
        return Err(Error::Usage(
            "--test-threads 0: give at least 1, or leave it out for one per CPU".into(),
        ));
    }
    if args.markdown.as_deref() == Some(Path::new("-")) && lt.format == Some(FormatSetting::Json) {
        return Err(Error::Usage(
            "--markdown - writes to stdout, which --format json already uses; pass a file path"
                .into(),
        ));
    }
    // An empty DSN must never quietly mean "no database" (and so a throwaway cluster).
    if args.db.dsn.as_deref().is_some_and(|d| d.trim().is_empty()) {
        return Err(Error::Usage(
            "--dsn is empty: pass a postgres:// URL or key=value string, or leave --dsn out".into(),
        ));
    }
    if args.db.dsn.is_none()
        && std::env::var_os("DATABASE_URL").is_some_and(|d| d.to_string_lossy().trim().is_empty())
    {
        return Err(Error::Usage(
            "DATABASE_URL is set but empty: set it to a DSN, or unset it (an empty DSN never \
             means \"start a throwaway cluster\")"
                .into(),
        ));
    }
    Ok(())
}

/// Words people type as a subcommand that the command line reads as a filter instead.
const MISTYPED: &[(&str, &str)] = &[
    ("verify", "awa-conformance vectors verify"),
    ("regenerate", "awa-conformance vectors regenerate"),
    ("vectors", "awa-conformance vectors list"),
    ("install", "awa-conformance schema install"),
    ("print", "awa-conformance schema print"),
    ("status", "awa-conformance schema status"),
    ("uninstall", "awa-conformance schema uninstall"),
    ("version", "awa-conformance --version"),
    ("help", "awa-conformance --help"),
];

/// The usage error of a selection that matches no case: what was asked, and how to find names.
fn nothing_selected(lt: &libtest_mimic::Arguments) -> String {
    let mut asked = Vec::new();
    if let Some(filter) = &lt.filter {
        asked.push(if lt.exact {
            format!("filter {filter:?} (--exact)")
        } else {
            format!("filter {filter:?}")
        });
    }
    for skip in &lt.skip {
        asked.push(format!("--skip {skip:?}"));
    }
    if lt.ignored {
        asked.push("--ignored (no case is ignored up front)".to_owned());
    }
    let asked = if asked.is_empty() {
        "the selection".to_owned()
    } else {
        asked.join(", ")
    };
    let hint = lt
        .filter
        .as_deref()
        .and_then(|f| MISTYPED.iter().find(|(word, _)| *word == f))
        .map(|(word, meant)| {
            format!("; `{word}` is not a subcommand here (did you mean `{meant}`?)")
        })
        .unwrap_or_default();
    format!(
        "no case matches {asked}, so nothing would be checked{hint}; `awa-conformance --list` \
         prints every case name"
    )
}

/// `--list`: `[kind] name: test` per selected trial (only flagged-ignored ones with `--ignored`).
fn list(lt: &libtest_mimic::Arguments, trials: &[Trial]) -> Result<(), Error> {
    let mut text = String::new();
    for trial in trials.iter().filter(|t| !lt.is_filtered_out(t)) {
        if lt.ignored && !trial.has_ignored_flag() {
            continue;
        }
        if !trial.kind().is_empty() {
            text.push_str(&format!("[{}] ", trial.kind()));
        }
        text.push_str(trial.name());
        text.push_str(if trial.is_bench() {
            ": bench\n"
        } else {
            ": test\n"
        });
    }
    crate::console::print(&text, "cannot write the list to")
}

/// The files a run writes, checked up front ([`Targets::check`], from the plan) and then
/// written by `report::finish`.
pub(super) fn targets(args: &RunArgs) -> crate::report::Targets<'_> {
    let mut others = Vec::new();
    if let Some(path) = &args.write_baseline {
        others.push(("--write-baseline", path.as_path()));
    }
    if let Some(path) = &args.libtest.logfile {
        others.push(("--logfile", std::path::Path::new(path.as_str())));
    }
    crate::report::Targets {
        json: args.report_json.as_deref(),
        junit: args.junit.as_deref(),
        markdown: args.markdown.as_deref(),
        names: crate::report::CLI_OPTIONS,
        others,
    }
}
