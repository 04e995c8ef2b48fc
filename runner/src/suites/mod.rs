//! The `run` action: load the vectors, build every suite's trials, run them, report.
//!
//! Order of work (each step's failure has its own exit code, see [`crate::exit`]):
//! 1. check the options (3), read the expected-failures file (3), load and verify the
//!    vector set (2);
//! 2. build the offline trials and the DB trials (listed without a database first, so that
//!    names are known and no cluster is started when the filter selects no SQL case);
//! 3. check the expected-failure IDs against the full, unfiltered trial list (3), and that
//!    the filter selects at least one case (3);
//! 4. from here on SIGINT/SIGTERM stop the run cleanly ([`crate::interrupt`]); connect (or
//!    start a throwaway cluster and install the reference schema) and preflight the
//!    contract schema and the environment (4 / 5) — only when a SQL case is selected; talk
//!    to the adapter (6);
//! 5. run with libtest-mimic on a thread of its own, its output passed through
//!    [`crate::console`] (`xfail`, closed stdout), each case bounded by `--case-timeout`;
//! 6. clean up the database, then write the reports (also after exits 4, 5, 6 and a stop)
//!    and the baseline. A run that executed no case is not a pass (3, or 4 without a
//!    database).

pub mod db;
pub mod offline;

use std::path::Path;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

use awa_conformance_vectors::VectorSet;
use libtest_mimic::{ColorSetting, FormatSetting, Trial};

use crate::cli::RunArgs;
use crate::console::{Console, Sink};
use crate::embedded::{EmbeddedCluster, EmbeddedError};
use crate::error::Error;
use crate::exit;
use crate::expected::ExpectedFailures;
use crate::interrupt::StopReason;
use crate::outcome::{
    RunContext, Status, PROVENANCE_CONTRACT_VERSION, PROVENANCE_DATABASE, PROVENANCE_LEVEL,
    PROVENANCE_SERVER_VERSION,
};
use crate::pg::{Dsn, Pg};
use crate::progress::Progress;
use crate::vector_set::load_vectors;
use crate::report::{
    redact::redact_secrets, Provenance, Report, Summary, Targets, Verdict, NOT_AVAILABLE,
};

/// A database the DB suites can use, or why there is none.
struct Database {
    setup: Option<Arc<db::DbSetup>>,
    /// Kept alive for the run; dropping it stops and removes the throwaway cluster.
    cluster: Option<EmbeddedCluster>,
    /// Why the SQL cases are ignored (when `setup` is `None`).
    reason: String,
}

impl Database {
    fn none(reason: String) -> Self {
        Self {
            setup: None,
            cluster: None,
            reason,
        }
    }

    /// Remove everything the run created (rows, login role), then the throwaway cluster.
    fn close(self) {
        if let Some(setup) = &self.setup {
            // Leftover run-scoped rows are untidy but say nothing about conformance: warn only.
            if let Err(e) = setup.cleanup() {
                warn(&format!(
                    "cleanup after the SQL suites failed: {e}; rows of queues named \
                     awa_conformance_{}_* may remain (the next run removes them)",
                    setup.run_id
                ));
            }
        }
        drop(self.cluster);
    }
}

/// One `awa-conformance: warning: …` line on stderr (stdout may carry libtest's JSON).
fn warn(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "awa-conformance: warning: {text}");
}

/// The reason every SQL case shows when no database is available, with how to get one.
fn no_database(why: &str) -> String {
    format!(
        "no database ({why}): pass --dsn URL (or set DATABASE_URL / PGHOST...), or install \
         PostgreSQL so a throwaway cluster can be started"
    )
}

/// "No database" as it ends a run: the SQL cases are ignored, unless a database is required.
fn without_database(ctx: &RunContext, args: &RunArgs, why: &str) -> Result<Database, Error> {
    ctx.set_provenance(PROVENANCE_DATABASE, "none".to_owned());
    if args.require_db {
        return Err(Error::Connect {
            detail: format!(
                "no database ({why}) and one is required (--require-db or AWA_REQUIRE_DB=1): \
                 pass --dsn URL (or set DATABASE_URL / PGHOST...)"
            ),
        });
    }
    Ok(Database::none(no_database(why)))
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
            return without_database(ctx, args, "no DSN given and --no-embedded");
        }
        None => match EmbeddedCluster::start_default() {
            Ok(cluster) => {
                crate::schema_install::install(
                    cluster.dsn(),
                    &args.schema,
                    &args.producer_role,
                    false,
                )?;
                ctx.set_provenance(PROVENANCE_DATABASE, "embedded".to_owned());
                (cluster.dsn().clone(), Some(cluster))
            }
            Err(e @ (EmbeddedError::NoBinaries | EmbeddedError::RootWithoutPostgresUser)) => {
                return without_database(ctx, args, &e.to_string());
            }
            Err(e) => {
                return Err(Error::DatabaseSetup {
                    detail: e.to_string(),
                })
            }
        },
    };
    // Ctrl-C is handled by the run (crate::interrupt): it cleans up, then drops the cluster.
    let pg = Pg::new(dsn)?;
    let setup = db::preflight(
        ctx,
        pg,
        &args.schema,
        &args.producer_role,
        args.libtest.test_threads,
    )?;
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
    if args.dsn.as_deref().is_some_and(|d| d.trim().is_empty()) {
        return Err(Error::Usage(
            "--dsn is empty: pass a postgres:// URL or key=value string, or leave --dsn out".into(),
        ));
    }
    if args.dsn.is_none()
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

/// A run that executed no case checked nothing and is never a pass: the exit code and the
/// message, or `None` when some case ran.
fn nothing_checked(
    cases: &[crate::outcome::CaseResult],
    lt: &libtest_mimic::Arguments,
) -> Option<(u8, String)> {
    let executed = cases
        .iter()
        .any(|c| !matches!(c.status, Status::NotApplicable | Status::Ignored));
    if executed {
        return None;
    }
    if let Some(no_db) = cases.iter().find(|c| c.status == Status::Ignored) {
        return Some((
            exit::DATABASE_UNAVAILABLE,
            format!(
                "nothing was checked: every selected case needs a database: {}",
                no_db.message.as_deref().unwrap_or("no database")
            ),
        ));
    }
    let why = cases
        .first()
        .and_then(|c| c.message.as_deref())
        .unwrap_or("no case selected");
    let filter = lt
        .filter
        .as_deref()
        .map_or_else(String::new, |f| format!(" by filter {f:?}"));
    Some((
        exit::USAGE,
        format!(
            "nothing was checked: every one of the {} cases selected{filter} is not applicable \
             (e.g. {why}); `awa-conformance --list` prints every case name",
            cases.len()
        ),
    ))
}

/// What the signal watcher, the console and the trials thread tell the run.
enum Event {
    /// The run was asked to stop (the reason is in the context).
    Stop,
    /// libtest-mimic returned: whether it saw a failure (`Err`: it panicked).
    TrialsDone(Result<bool, String>),
}

/// What the trial phase produced.
#[derive(Default)]
struct Ran {
    /// libtest-mimic saw a failing trial.
    libtest_failed: bool,
    /// Trials removed by the filter.
    filtered_out: u64,
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
    let all_names: Vec<&str> = offline_trials
        .iter()
        .chain(&listed_db)
        .chain(&listed_adapter)
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
    let db_selected = listed_db.iter().any(|t| !lt.is_filtered_out(t));
    let selected = offline_trials
        .iter()
        .chain(&listed_db)
        .chain(&listed_adapter)
        .filter(|t| !lt.is_filtered_out(t))
        .count();

    if lt.list {
        // libtest-mimic's own listing panics on a closed pipe (`| head`); print it ourselves,
        // in its format, so `--exact <printed name>` runs exactly that trial.
        let trials: Vec<Trial> = offline_trials
            .into_iter()
            .chain(listed_db)
            .chain(listed_adapter)
            .collect();
        list(lt, &trials)?;
        return Ok(exit::SUCCESS);
    }
    if selected == 0 {
        return Err(Error::Usage(nothing_selected(lt)));
    }
    drop(listed_db);
    drop(listed_adapter);

    // From here on the run may create things in the database and start processes: a signal
    // must stop it cleanly instead of killing it.
    let (events_tx, events) = mpsc::channel::<Event>();
    {
        let ctx = Arc::clone(&ctx);
        let tx = events_tx.clone();
        if let Err(e) = crate::interrupt::on_signal(move |reason| {
            ctx.request_stop(reason);
            let _ = tx.send(Event::Stop);
        }) {
            warn(&format!("{e}; Ctrl-C will end the run without cleaning up"));
        }
    }
    let mut database = Database::none(no_database("no SQL case selected"));
    let outcome = execute(
        &ctx,
        args,
        &set,
        db_selected,
        offline_trials,
        &mut database,
        (&events_tx, &events),
    );
    // Whatever stopped the run, and whatever happens during cleanup: decided now.
    let stopped = ctx.stop_reason();
    database.close();
    crate::interrupt::clear();

    let cases = ctx.results();
    let mut run_errors = ctx.run_errors();
    let (ran, error) = match outcome {
        Ok(ran) => (ran, None),
        Err(e) if stopped.is_some() || e.exit_code() >= exit::DATABASE_UNAVAILABLE => {
            run_errors.push(e.to_string());
            (Ran::default(), Some(e))
        }
        // Usage and vector problems stop the run before anything ran: no report.
        Err(e) => return Err(e),
    };
    let mut exit_code = exit_code_for(&cases, &run_errors, ran.libtest_failed);
    if let Some(e) = &error {
        exit_code = e.exit_code();
    } else if exit_code == exit::SUCCESS {
        if let Some((code, message)) = nothing_checked(&cases, lt) {
            exit_code = code;
            report_error(&message);
            run_errors.push(message);
        }
    }
    if let Some(reason) = stopped {
        exit_code = reason.exit_code();
        warn(&format!(
            "{}: cases in flight finished, the rest did not run; the database was cleaned up",
            reason.describe()
        ));
    }
    let report = build_report(
        &ctx,
        &set,
        vectors_source,
        started_at,
        argv,
        Summary::of(
            &cases,
            ran.filtered_out,
            started.elapsed().as_secs_f64() * 1000.0,
        ),
        exit_code,
        stopped.is_some(),
        run_errors,
        cases,
    );
    if let Some(path) = &args.write_baseline {
        if error.is_none() {
            ctx.expected_failures()
                .write_baseline(path, &report.cases)?;
        }
    }
    let written = report.write_all(&Targets {
        json: args.report_json.as_deref(),
        junit: args.junit.as_deref(),
        markdown: args.markdown.as_deref(),
    });
    // After an error before the trials the error line alone says it all.
    if lt.format != Some(FormatSetting::Json) && error.is_none() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{}", report.summary_line());
    }
    match (error, written) {
        // The run's own error is the one to report; a failed report write comes second.
        (Some(e), Err(w)) => {
            report_error(&w.to_string());
            if stopped.is_some() {
                report_error(&e.to_string());
                return Ok(exit_code);
            }
            Err(e)
        }
        (Some(e), Ok(())) if stopped.is_none() => Err(e),
        (Some(e), Ok(())) => {
            report_error(&e.to_string());
            Ok(exit_code)
        }
        (None, Err(w)) if stopped.is_some() => {
            report_error(&w.to_string());
            Ok(exit_code)
        }
        (None, Err(w)) => Err(w),
        (None, Ok(())) => Ok(exit_code),
    }
}

/// One `awa-conformance: error: …` line on stderr.
fn report_error(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "awa-conformance: error: {text}");
}

/// Open the database, talk to the adapter, run every trial. Stops early (`Ok`) when the
/// run is asked to stop; `database` is filled in as soon as it exists, so the caller can
/// clean it up whatever happens here.
fn execute(
    ctx: &Arc<RunContext>,
    args: &RunArgs,
    set: &VectorSet,
    db_selected: bool,
    offline_trials: Vec<Trial>,
    database: &mut Database,
    (events_tx, events): (&mpsc::Sender<Event>, &mpsc::Receiver<Event>),
) -> Result<Ran, Error> {
    if db_selected {
        *database = open_database(ctx, args)?;
    }
    if ctx.stop_reason().is_some() {
        return Ok(Ran::default());
    }
    let db_trials = db::trials(ctx, database.setup.as_ref(), &database.reason, set);
    let adapter_trials = match &args.adapter {
        None => Vec::new(),
        Some(cmd) => {
            let stopped = || ctx.stop_reason().is_some();
            let limits = crate::adapter::Limits {
                timeout: args.adapter_timeout(),
                max_line: crate::adapter::MAX_LINE_BYTES,
                stopped: &stopped,
            };
            let session =
                match crate::adapter::exchange_with(cmd, args.dsn.as_deref(), set, &limits) {
                    Ok(session) => session,
                    Err(crate::adapter::AdapterError::Stopped { .. }) => return Ok(Ran::default()),
                    Err(e) => return Err(e.into()),
                };
            for problem in &session.problems {
                ctx.record_run_error(format!("adapter: {problem}"));
            }
            ctx.set_provenance(
                "adapter",
                format!("{} {}", session.hello.name, session.hello.version),
            );
            crate::adapter::trials(ctx, set, &Arc::new(session))
        }
    };
    let trials: Vec<Trial> = offline_trials
        .into_iter()
        .chain(db_trials)
        .chain(adapter_trials)
        .collect();
    run_trials(
        ctx,
        args,
        &set.manifest.root_sha256,
        trials,
        database,
        (events_tx, events),
    )
}

/// Run the trials with libtest-mimic on a thread of its own, its output filtered through
/// [`Console`]; returns when they are done, or (bounded) after the run was asked to stop.
fn run_trials(
    ctx: &Arc<RunContext>,
    args: &RunArgs,
    root_sha256: &str,
    trials: Vec<Trial>,
    database: &Database,
    (events_tx, events): (&mpsc::Sender<Event>, &mpsc::Receiver<Event>),
) -> Result<Ran, Error> {
    use std::io::IsTerminal;
    let lt = &args.libtest;
    let selected = trials.iter().filter(|t| !lt.is_filtered_out(t)).count() as u64;
    let filtered_out = trials.len() as u64 - selected;
    let json_output = lt.format == Some(FormatSetting::Json);
    let terse_output = lt.quiet || lt.format == Some(FormatSetting::Terse);
    if let Some(progress) = Progress::for_terminal(selected, json_output, terse_output) {
        ctx.set_progress(progress);
    }
    if database.setup.is_none()
        && trials
            .iter()
            .any(|t| t.name().starts_with("sql::") && !lt.is_filtered_out(t))
    {
        // stderr: stdout may carry libtest's JSON events.
        warn(&format!(
            "SQL cases will be shown as ignored: {}",
            database.reason
        ));
    }
    if lt.format.unwrap_or(FormatSetting::Pretty) == FormatSetting::Pretty && !lt.quiet {
        use std::io::Write;
        // stderr: stdout stays libtest's own output.
        let _ = writeln!(std::io::stderr(), "{}", provenance_line(ctx, root_sha256));
    }

    let sink = match &lt.logfile {
        Some(path) => Sink::File(path.into()),
        None => Sink::Stdout,
    };
    let on_closed = {
        let ctx = Arc::clone(ctx);
        let tx = events_tx.clone();
        move || {
            ctx.request_stop(StopReason::StdoutClosed);
            let _ = tx.send(Event::Stop);
        }
    };
    let console = Console::start(sink, Arc::clone(ctx), on_closed)?;
    let mut lt_run = lt.clone();
    lt_run.logfile = Some(console.logfile().to_owned());
    // libtest colours only a terminal; it now writes into a pipe, so decide for it.
    if lt.logfile.is_none()
        && lt.color.unwrap_or(ColorSetting::Auto) == ColorSetting::Auto
        && std::io::stdout().is_terminal()
    {
        lt_run.color = Some(ColorSetting::Always);
    }
    let tx = events_tx.clone();
    std::thread::Builder::new()
        .name("awa-trials".into())
        .spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                libtest_mimic::run(&lt_run, trials)
            }));
            let _ = tx.send(Event::TrialsDone(
                outcome
                    .map(|c| c.has_failed())
                    .map_err(|_| "libtest-mimic panicked".to_owned()),
            ));
        })
        .map_err(|e| Error::Harness {
            detail: format!("cannot start the trials thread: {e}"),
        })?;
    // Every case is bounded by --case-timeout; after a stop the rest end at once.
    let grace = args.case_timeout() + Duration::from_secs(5);
    let mut deadline: Option<Instant> = None;
    let done = loop {
        let event = match deadline {
            None => events.recv().ok(),
            Some(d) => events
                .recv_timeout(d.saturating_duration_since(Instant::now()))
                .ok(),
        };
        match event {
            Some(Event::TrialsDone(done)) => break Some(done),
            Some(Event::Stop) => {
                deadline.get_or_insert_with(|| Instant::now() + grace);
            }
            None => break None,
        }
    };
    ctx.finish_progress();
    match done {
        Some(Ok(libtest_failed)) => {
            console.finish(Duration::from_secs(5));
            Ok(Ran {
                libtest_failed,
                filtered_out,
            })
        }
        Some(Err(panic)) => Err(Error::Harness { detail: panic }),
        None => {
            ctx.record_run_error(format!(
                "cases still running {}s after the stop were abandoned",
                grace.as_secs()
            ));
            Ok(Ran {
                libtest_failed: true,
                filtered_out,
            })
        }
    }
}

/// The report of a run, from its recorded cases and provenance.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename them"
)]
fn build_report(
    ctx: &RunContext,
    set: &VectorSet,
    vectors_source: String,
    started_at: String,
    argv: &[String],
    summary: Summary,
    exit_code: u8,
    interrupted: bool,
    run_errors: Vec<String>,
    cases: Vec<crate::outcome::CaseResult>,
) -> Report {
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
    Report {
        format: crate::report::REPORT_FORMAT,
        format_version: crate::report::REPORT_FORMAT_VERSION,
        verdict: if interrupted {
            Verdict::Interrupted
        } else {
            Verdict::from_exit_code(exit_code)
        },
        exit_code,
        provenance,
        summary,
        run_errors,
        cases,
    }
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
