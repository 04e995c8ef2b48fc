//! Step 3 of a run: talk to the adapter, then run every trial with libtest-mimic on a thread
//! of its own, its output filtered through [`Console`], each case bounded.

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use libtest_mimic::{ColorSetting, FormatSetting, Trial};

use crate::cli::RunArgs;
use crate::console::{Console, Sink};
use crate::error::Error;
use crate::interrupt::StopReason;
use crate::outcome::{
    RunContext, PROVENANCE_CONTRACT_VERSION, PROVENANCE_DATABASE, PROVENANCE_LEVEL,
    PROVENANCE_SERVER_VERSION,
};
use crate::progress::Progress;
use crate::report::NOT_AVAILABLE;
use crate::suites::db;

use super::database::Database;
use super::plan::Plan;
use super::warn;

/// What the signal watcher, the console and the trials thread tell the run.
enum Event {
    /// The run was asked to stop (the reason is in the context).
    Stop,
    /// libtest-mimic returned: whether it saw a failure (`Err`: it panicked).
    TrialsDone(Result<bool, String>),
}

/// The run's event channel: signals, a closed stdout and the end of the trials arrive here.
pub(super) struct Events {
    tx: mpsc::Sender<Event>,
    rx: mpsc::Receiver<Event>,
}

impl Events {
    /// The channel, with SIGINT/SIGTERM turned into a clean stop of the run.
    pub(super) fn watch_signals(ctx: &Arc<RunContext>) -> Self {
        let (tx, rx) = mpsc::channel::<Event>();
        let ctx = Arc::clone(ctx);
        let signal_tx = tx.clone();
        if let Err(e) = crate::interrupt::on_signal(move |reason| {
            ctx.request_stop(reason);
            let _ = signal_tx.send(Event::Stop);
        }) {
            warn(&format!("{e}; Ctrl-C will end the run without cleaning up"));
        }
        Self { tx, rx }
    }
}

/// What the trial phase produced.
#[derive(Default)]
pub(super) struct Ran {
    /// libtest-mimic saw a failing trial.
    pub(super) libtest_failed: bool,
    /// Trials removed by the filter.
    pub(super) filtered_out: u64,
}

/// Talk to the adapter, run every trial (step 3). Stops early (`Ok`) when the run is asked
/// to stop.
pub(super) fn execute(
    plan: &Plan,
    args: &RunArgs,
    offline_trials: Vec<Trial>,
    database: &Database,
    events: &Events,
) -> Result<Ran, Error> {
    let (ctx, set) = (&plan.ctx, &plan.set);
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
                match crate::adapter::exchange_with(cmd, args.db.dsn.as_deref(), set, &limits) {
                    Ok(session) => session,
                    Err(crate::adapter::AdapterError::Stopped { .. }) => return Ok(Ran::default()),
                    Err(e) => return Err(e.into()),
                };
            for problem in &session.problems {
                ctx.record_run_error(format!("adapter: {problem}"));
            }
            ctx.set_provenance(
                "adapter",
                format!(
                    "{} {}",
                    session.hello.implementation.name, session.hello.implementation.version
                ),
            );
            crate::adapter::trials(ctx, set, &Arc::new(session))
        }
    };
    let (producer_trials, producer) = match args.producer_launch() {
        None => (Vec::new(), None),
        Some(launch) => {
            let selected =
                |name: &str| !args.libtest.is_filtered_out(&Trial::test(name, || Ok(())));
            crate::producer::run_trials(
                ctx,
                &launch,
                database.setup.as_ref(),
                &database.reason,
                set,
                &crate::producer::Selection {
                    selected: &selected,
                    test_threads: args.libtest.test_threads,
                },
            )?
        }
    };
    let trials: Vec<Trial> = offline_trials
        .into_iter()
        .chain(db_trials)
        .chain(adapter_trials)
        .chain(producer_trials)
        .collect();
    let ran = run_trials(
        ctx,
        args,
        &set.manifest.root_sha256,
        trials,
        database,
        events,
    );
    if let Some(run) = producer {
        // After every producer case: its verdict needs all their answers, so it is no trial
        // of its own; it is recorded (and reported) as a case when the filter selects it.
        // The probe trial only asks the filter; it never runs.
        let probe = Trial::test(crate::producer::COVERAGE_CASE, || Ok(()));
        let coverage_selected =
            ctx.stop_reason().is_none() && !args.libtest.is_filtered_out(&probe);
        if args.timings {
            let timings = run.session().timings();
            super::note(&timings.table());
            ctx.record_timings(timings);
        }
        let concluded = run.conclude(coverage_selected);
        if let Some(verdict) = concluded.coverage {
            if let Err(f) = &verdict {
                super::report_error(&format!(
                    "{} failed: {}",
                    crate::producer::COVERAGE_CASE,
                    f.message
                ));
            }
            ctx.record(
                crate::producer::SUITE,
                crate::producer::COVERAGE_CASE.to_owned(),
                verdict,
                0.0,
            );
        }
        if let Some(touched) = concluded.unattributed {
            // A finding no selected case carries: never a silent pass.
            super::report_error(&touched);
            ctx.record_run_error(format!("producer: {touched}"));
        }
        if let Some(problem) = concluded.stop_problem {
            ctx.record_run_error(format!("producer: {problem}"));
        }
    }
    ran
}

/// Run the trials with libtest-mimic on a thread of its own, its output filtered through
/// [`Console`]; returns when they are done, or (bounded) after the run was asked to stop.
fn run_trials(
    ctx: &Arc<RunContext>,
    args: &RunArgs,
    root_sha256: &str,
    trials: Vec<Trial>,
    database: &Database,
    events: &Events,
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
        // The server's version string is the server's to write: shown inert.
        let line = crate::redact::for_terminal(&provenance_line(ctx, root_sha256));
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    let sink = match &lt.logfile {
        Some(path) => Sink::File(path.into()),
        None => Sink::Stdout,
    };
    let on_closed = {
        let ctx = Arc::clone(ctx);
        let tx = events.tx.clone();
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
    let tx = events.tx.clone();
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
            None => events.rx.recv().ok(),
            Some(d) => events
                .rx
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
    // libtest has closed its end of the pipe: the wait is only for the copy to reach a slow
    // reader of stdout. After it nothing more is copied, so the `--markdown -` summary that
    // follows is never interleaved with trial lines.
    let drained = |console: Console| {
        if !console.finish(Duration::from_secs(60)) {
            warn("the trial output did not reach stdout within 60s; the rest of it is not shown (the reports hold every case)");
        }
    };
    match done {
        Some(Ok(libtest_failed)) => {
            drained(console);
            Ok(Ran {
                libtest_failed,
                filtered_out,
            })
        }
        Some(Err(panic)) => {
            drained(console);
            Err(Error::Harness { detail: panic })
        }
        None => {
            // Abandoned trials may still print: the console (dropped here) stops copying.
            drop(console);
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
