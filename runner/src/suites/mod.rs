//! The `run` action: load the vectors, build every suite's trials, run them, report.
//!
//! Order of work (each step's failure has its own exit code, see [`crate::exit`]):
//! 1. read the expected-failures file (2), load and verify the vector set (3);
//! 2. build the offline trials and the DB trials (listed without a database first, so that
//!    names are known and no cluster is started when the filter selects no SQL case);
//! 3. check the expected-failure IDs against the full, unfiltered trial list (2);
//! 4. connect (or start a throwaway cluster and install the reference schema) and preflight
//!    the contract schema (4 / 5) — only when a SQL case is selected;
//! 5. run with libtest-mimic, then write the reports and the baseline.

pub mod db;
pub mod offline;

use std::path::Path;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use awa_conformance_vectors::{check_ids, check_manifest, check_schema, VectorSet};
use libtest_mimic::{FormatSetting, Trial};

use crate::cli::RunArgs;
use crate::embedded::{EmbeddedCluster, EmbeddedError};
use crate::error::Error;
use crate::exit;
use crate::expected::ExpectedFailures;
use crate::outcome::{
    RunContext, Status, PROVENANCE_CONTRACT_VERSION, PROVENANCE_DATABASE, PROVENANCE_LEVEL,
    PROVENANCE_SERVER_VERSION,
};
use crate::pg::{Dsn, Pg};
use crate::progress::Progress;
use crate::report::{
    redact::redact_secrets, Provenance, Report, Summary, Targets, Verdict, NOT_AVAILABLE,
};

/// Load the vector set (embedded, or `--vectors-dir`) and verify its integrity: JSON Schema,
/// then content IDs (so an edited vector is named), then the manifest hashes.
pub fn load_vectors(dir: Option<&Path>) -> Result<(VectorSet, String), Error> {
    let invalid = |detail: String| Error::VectorsInvalid { detail };
    let (set, source) = match dir {
        Some(dir) => (
            VectorSet::load_dir(dir).map_err(|e| invalid(e.to_string()))?,
            dir.display().to_string(),
        ),
        None => (
            awa_conformance_vectors::v1().map_err(|e| invalid(e.to_string()))?,
            "embedded".to_owned(),
        ),
    };
    check_schema(&set).map_err(|e| invalid(e.to_string()))?;
    check_ids(&set).map_err(|e| invalid(e.to_string()))?;
    check_manifest(&set).map_err(|e| invalid(e.to_string()))?;
    Ok((set, source))
}

/// A database the DB suites can use, or why there is none.
struct Database {
    setup: Option<Arc<db::DbSetup>>,
    /// Kept alive for the run; dropping it stops and removes the throwaway cluster.
    cluster: Option<EmbeddedCluster>,
    /// Why the SQL cases are ignored (when `setup` is `None`).
    reason: String,
}

/// The reason every SQL case shows when no database is available, with how to get one.
fn no_database(why: &str) -> String {
    format!(
        "no database ({why}): pass --dsn URL (or set DATABASE_URL / PGHOST...), or install \
         PostgreSQL so a throwaway cluster can be started"
    )
}

/// Find or start the database and preflight the contract schema.
fn open_database(ctx: &Arc<RunContext>, args: &RunArgs) -> Result<Database, Error> {
    let dsn = Dsn::resolve(args.dsn.as_deref())?;
    let (dsn, cluster) = match dsn {
        Some(dsn) => {
            ctx.set_provenance(
                PROVENANCE_DATABASE,
                format!("dsn ({})", dsn.source().as_str()),
            );
            (dsn, None)
        }
        None if args.no_embedded => {
            ctx.set_provenance(PROVENANCE_DATABASE, "none".to_owned());
            return Ok(Database {
                setup: None,
                cluster: None,
                reason: no_database("no DSN given and --no-embedded"),
            });
        }
        None => match EmbeddedCluster::start_default() {
            Ok(cluster) => {
                crate::schema_install::install(cluster.dsn(), &args.schema, &args.producer_role)?;
                ctx.set_provenance(PROVENANCE_DATABASE, "embedded".to_owned());
                (cluster.dsn().clone(), Some(cluster))
            }
            Err(e @ (EmbeddedError::NoBinaries | EmbeddedError::RootWithoutPostgresUser)) => {
                ctx.set_provenance(PROVENANCE_DATABASE, "none".to_owned());
                return Ok(Database {
                    setup: None,
                    cluster: None,
                    reason: no_database(&e.to_string()),
                });
            }
            Err(e) => {
                return Err(Error::DatabaseSetup {
                    detail: e.to_string(),
                })
            }
        },
    };
    let pg = Pg::new(dsn)?;
    if let Some(cluster) = &cluster {
        // Ctrl-C must not leave a cluster behind; the watcher lives on the door's runtime.
        pg.block_on(async { cluster.stop_on_ctrl_c(&tokio::runtime::Handle::current()) })?;
    }
    let setup = db::preflight(ctx, pg, &args.schema, &args.producer_role)?;
    Ok(Database {
        setup: Some(setup),
        cluster,
        reason: String::new(),
    })
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
    if args.markdown.as_deref() == Some(Path::new("-")) && lt.format == Some(FormatSetting::Json) {
        return Err(Error::Usage(
            "--markdown - writes to stdout, which --format json already uses; pass a file path"
                .into(),
        ));
    }
    Ok(())
}

/// Run the suites; returns the exit code.
pub fn run(args: &RunArgs, argv: &[String]) -> Result<u8, Error> {
    let started = Instant::now();
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    check_usage(args)?;
    let expected = match &args.expected_failures {
        Some(path) => ExpectedFailures::load(path)?,
        None => ExpectedFailures::default(),
    };
    let (set, vectors_source) = load_vectors(args.vectors_dir.as_deref())?;
    let ctx = RunContext::new(expected);
    ctx.set_provenance(PROVENANCE_SERVER_VERSION, NOT_AVAILABLE.to_owned());
    ctx.set_provenance(PROVENANCE_CONTRACT_VERSION, NOT_AVAILABLE.to_owned());
    ctx.set_provenance(PROVENANCE_DATABASE, NOT_AVAILABLE.to_owned());
    let lt = &args.libtest;

    // Names first: the full list (for expected-failure IDs) and whether any SQL case is selected.
    let offline_trials = offline::trials(&ctx, &set);
    let listed_db = db::trials(&ctx, None, "listing only", &set);
    let adapter_names = match &args.adapter {
        Some(_) => crate::adapter::trial_names(&set),
        None => Vec::new(),
    };
    let all_names: Vec<String> = offline_trials
        .iter()
        .chain(&listed_db)
        .map(|t| t.name().to_owned())
        .chain(adapter_names.iter().cloned())
        .collect();
    // Names are the identity of a case (filters, expected failures, reports): no duplicates.
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = all_names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(Error::Harness {
            detail: format!("two trials are named {dup}; every case name must be unique"),
        });
    }
    ctx.expected_failures()
        .check_ids(all_names.iter().map(String::as_str))?;
    let db_selected = listed_db.iter().any(|t| !lt.is_filtered_out(t));

    // ===== DB suites (crate::suites::db, owned by the DB side) =====
    let database = if lt.list || !db_selected {
        Database {
            setup: None,
            cluster: None,
            reason: no_database("no SQL case selected"),
        }
    } else {
        open_database(&ctx, args)?
    };
    let db_trials = if lt.list {
        listed_db
    } else {
        drop(listed_db);
        db::trials(&ctx, database.setup.as_ref(), &database.reason, &set)
    };
    // ===== end of DB suites =====

    // ===== producer adapter =====
    let adapter_trials = match &args.adapter {
        None => Vec::new(),
        // Listing names must not start a producer process.
        Some(_) if lt.list => adapter_names
            .into_iter()
            .map(|name| ctx.ignored(crate::adapter::SUITE, name, "listing only".to_owned()))
            .collect(),
        Some(cmd) => {
            let session = crate::adapter::exchange(cmd, args.dsn.as_deref(), &set)?;
            for problem in &session.problems {
                ctx.record_run_error(format!("adapter: {problem}"));
            }
            ctx.set_provenance(
                "adapter",
                format!("{} {}", session.hello.name, session.hello.version),
            );
            crate::adapter::trials(&ctx, &set, &Arc::new(session))
        }
    };

    let trials: Vec<Trial> = offline_trials
        .into_iter()
        .chain(db_trials)
        .chain(adapter_trials)
        .collect();
    let selected = trials.iter().filter(|t| !lt.is_filtered_out(t)).count() as u64;
    let filtered_out = trials.len() as u64 - selected;
    let json_output = lt.format == Some(FormatSetting::Json);
    let terse_output = lt.quiet || lt.format == Some(FormatSetting::Terse);
    if !lt.list && selected == 0 {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "awa-conformance: warning: no case matches the filter; `awa-conformance --list` \
             prints every case name"
        );
    }
    if !lt.list {
        if let Some(progress) = Progress::for_terminal(selected, json_output, terse_output) {
            ctx.set_progress(progress);
        }
        if database.setup.is_none() && db_selected {
            use std::io::Write;
            // stderr: stdout may carry libtest's JSON events.
            let _ = writeln!(
                std::io::stderr(),
                "awa-conformance: SQL cases will be shown as ignored: {}",
                database.reason
            );
        }
    }

    if !lt.list && lt.format.unwrap_or(FormatSetting::Pretty) == FormatSetting::Pretty && !lt.quiet
    {
        use std::io::Write;
        // stderr: stdout stays libtest's own output.
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            provenance_line(&ctx, &set.manifest.root_sha256)
        );
    }

    if lt.list {
        // libtest-mimic's own listing panics on a closed pipe (`| head`); print it ourselves,
        // in its format, so `--exact <printed name>` runs exactly that trial.
        list(lt, &trials)?;
        return Ok(exit::SUCCESS);
    }
    let conclusion = libtest_mimic::run(lt, trials);
    ctx.finish_progress();
    if let Some(setup) = &database.setup {
        // Leftover run-scoped rows are untidy but say nothing about conformance: warn only.
        if let Err(e) = setup.cleanup() {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "awa-conformance: warning: cleanup after the SQL suites failed: {e}; rows of \
                 queues named awa_conformance_{}_* may remain",
                setup.run_id
            );
        }
    }
    drop(database.cluster);

    let cases = ctx.results();
    let run_errors = ctx.run_errors();
    let exit_code = exit_code_for(&cases, &run_errors, conclusion.has_failed());
    let mut provenance_extra = ctx.provenance();
    let mut take = |key: &str| {
        provenance_extra
            .remove(key)
            .unwrap_or_else(|| NOT_AVAILABLE.to_owned())
    };
    let provenance = Provenance {
        kit_version: env!("CARGO_PKG_VERSION").to_owned(),
        kit_contract_version: awa_conformance_core::CONTRACT_VERSION,
        vectors_root_sha256: set.manifest.root_sha256.clone(),
        vectors_source,
        server_version: take(PROVENANCE_SERVER_VERSION),
        contract_version: take(PROVENANCE_CONTRACT_VERSION),
        database: take(PROVENANCE_DATABASE),
        level: take(PROVENANCE_LEVEL),
        started_at,
        argv: argv.iter().map(|a| redact_secrets(a)).collect(),
        extra: provenance_extra,
    };
    let summary = Summary::of(
        &cases,
        filtered_out,
        started.elapsed().as_secs_f64() * 1000.0,
    );
    let report = Report {
        format: crate::report::REPORT_FORMAT,
        format_version: crate::report::REPORT_FORMAT_VERSION,
        verdict: Verdict::from_exit_code(exit_code),
        exit_code,
        provenance,
        summary,
        run_errors,
        cases,
    };
    if let Some(path) = &args.write_baseline {
        ctx.expected_failures()
            .write_baseline(path, &report.cases)?;
    }
    report.write_all(&Targets {
        json: args.report_json.as_deref(),
        junit: args.junit.as_deref(),
        markdown: args.markdown.as_deref(),
    })?;
    Ok(exit_code)
}

/// The one-line provenance summary printed before the trials in pretty output, e.g.
/// `awa-conformance 0.1.0 · vectors root efef…0cb4 · server 15.18 · contract v1 · database dsn (env)`.
fn provenance_line(ctx: &RunContext, root_sha256: &str) -> String {
    let p = ctx.provenance();
    let get = |k: &str| p.get(k).map_or(NOT_AVAILABLE, String::as_str).to_owned();
    let short = match (
        root_sha256.get(..4),
        root_sha256.get(root_sha256.len().saturating_sub(4)..),
    ) {
        (Some(head), Some(tail)) if root_sha256.len() > 8 => format!("{head}…{tail}"),
        _ => root_sha256.to_owned(),
    };
    let contract = get(PROVENANCE_CONTRACT_VERSION);
    let contract = if contract.parse::<u32>().is_ok() {
        format!("v{contract}")
    } else {
        contract
    };
    format!(
        "awa-conformance {} · vectors root {short} · server {} · contract {contract} · database {} \
         · level {}",
        env!("CARGO_PKG_VERSION"),
        get(PROVENANCE_SERVER_VERSION),
        get(PROVENANCE_DATABASE),
        get(PROVENANCE_LEVEL),
    )
}

/// `--list`: `[kind] name: test` per selected trial (only flagged-ignored ones with `--ignored`).
fn list(lt: &libtest_mimic::Arguments, trials: &[Trial]) -> Result<(), Error> {
    use std::io::Write;
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
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            action: "cannot write the list to",
            path: "stdout".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// The run's exit code: harness errors (6) outrank nonconformance (1). libtest's own
/// failure flag is consulted too, so a failing trial that somehow recorded nothing still
/// fails the run (libtest-mimic's 101 becomes our 1).
fn exit_code_for(
    cases: &[crate::outcome::CaseResult],
    run_errors: &[String],
    libtest_failed: bool,
) -> u8 {
    if !run_errors.is_empty() || cases.iter().any(|c| c.status == Status::Errored) {
        exit::HARNESS
    } else if libtest_failed || cases.iter().any(|c| c.status.is_nonconformant()) {
        exit::NONCONFORMANT
    } else {
        exit::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::CaseResult;

    fn case(status: Status) -> CaseResult {
        CaseResult {
            name: "x".into(),
            suite: "s".into(),
            status,
            message: None,
            expected: None,
            actual: None,
            duration_ms: 0.0,
        }
    }

    #[test]
    fn exit_code_priorities() {
        let ok = [
            case(Status::Passed),
            case(Status::ExpectedFailure),
            case(Status::Ignored),
        ];
        assert_eq!(exit_code_for(&ok, &[], false), exit::SUCCESS);
        // libtest-mimic's failure (its exit code would be 101) becomes our 1.
        assert_eq!(exit_code_for(&ok, &[], true), exit::NONCONFORMANT);
        assert_eq!(
            exit_code_for(&[case(Status::Failed)], &[], true),
            exit::NONCONFORMANT
        );
        assert_eq!(
            exit_code_for(&[case(Status::UnexpectedPass)], &[], true),
            exit::NONCONFORMANT
        );
        let mixed = [case(Status::Failed), case(Status::Errored)];
        assert_eq!(exit_code_for(&mixed, &[], true), exit::HARNESS);
        assert_eq!(exit_code_for(&ok, &["lost".into()], false), exit::HARNESS);
    }
}
