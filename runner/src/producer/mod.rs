//! The producer engine: check what a producer really stores when it enqueues through
//! `<schema>.insert_job`, end to end, against the vectors and against `insert_job` itself.
//!
//! A [`Producer`] is anything that can enqueue a logical job ([`crate::protocol::EnqueueRequest`]) and
//! answer with the job id or a refusal ([`crate::protocol::EnqueueAnswer`]), the way toml-test-harness
//! is generic over its `Decoder`. Two implementations exist: a program speaking JSON lines
//! ([`process::SubprocessProducer`], `awa-conformance --producer CMD`) and, in the Python
//! bindings, a Python callable.
//!
//! # The engine's steps, per case
//! 1. [`cases::cases`] builds the cases from the vectors (trial names
//!    `producer::<family>::<id>[::w<width>][::<step>]`).
//! 2. On its own connection (the runner's role) the engine prepares a run-scoped queue
//!    `awa_conformance_<run>_p<n>_…` and its width (`queue_meta`): the producer role cannot
//!    write `queue_meta`, and should not need to.
//! 3. It computes the third answer: what `insert_job` itself returns for the same logical
//!    request, bound as the contract's recipe says, in a transaction that is rolled back.
//! 4. It asks the producer to enqueue (bounded by the enqueue timeout).
//! 5. It reads the stored job back through `job_routing` as its own role.
//! 6. It judges stored vs vector vs `insert_job` ([`judge`]), naming the layer of a mismatch.
//! 7. It removes every row of the case's queues (and their claims), and what the producer
//!    wrote elsewhere: every row of the run's temporary login (the producer's login unless
//!    `--producer-dsn` is given) and the answered jobs of the producer's login, never another
//!    login's (ADR 0049); whatever a killed run left is swept by the next run (the run-scoped
//!    names and login, and the liveness lock of the SQL suites).
//!
//! A producer declaring `bulk` is also sent whole batches (`producer::bulk::*`,
//! docs/contract.md §14, ADR 0045): every routing vector of a width in one batch, each row
//! judged as above, and a batch with a duplicate unique claim that must be refused naming its
//! row with no row of it committed.
//!
//! Unique keys that do not hash a queue are global (the claim ignores the queue): such cases
//! hold one advisory lock shared by every global-key case (bounded by `lock_timeout`, ADR
//! 0047) from before the reference call until their rows are gone, so two concurrent runs
//! never collide, even when a wrong producer stores another vector's key.
//!
//! # Using it as a library
//! [`check`] runs every case against a producer and returns one [`CaseResult`] per case,
//! with the same expected-failures semantics as the CLI; [`trials`] gives the same cases as
//! libtest-mimic trials (what `--producer` runs). Both, and the producer fuzzer, go through the
//! session's one loop, [`case_loop::CaseLoop`].

pub mod case_loop;
pub mod cases;
pub mod engine;
pub mod process;
pub mod steps;
pub mod validate;

use std::sync::Arc;
use std::time::Duration;

use awa_conformance_vectors::VectorSet;
use libtest_mimic::Trial;

use crate::contract::target::DbSetup;
use crate::expected::ExpectedFailures;
use crate::outcome::{CaseResult, RunContext};
pub use crate::protocol::{EnqueueAnswer, EnqueueRequest, Hello, DSN_ENV};
use case_loop::CaseLoop;
use engine::fit_lanes;

/// The provenance key naming the session settings the producer's login starts with
/// (`contract::target::CALLER_SETTINGS`).
pub const SESSION_PROVENANCE: &str = "producer_session";

/// The `suite` of every producer trial, and the first segment of its name.
pub const SUITE: &str = "producer";

/// The case that judges the producer as a whole after its cases ran: it answered at least one
/// case of every capability it declared (the coverage rule, as `adapter::coverage`).
pub const COVERAGE_CASE: &str = "producer::coverage";
/// The provenance key naming the payload fields a producer's verdict covers
/// ([`crate::protocol::Hello::fields_judged`]).
pub const FIELDS_PROVENANCE: &str = "producer_fields";
/// Environment variable carrying the contract schema name.
pub const SCHEMA_ENV: &str = "AWA_CONFORMANCE_SCHEMA";

/// Why a producer could not answer a request: a harness error of that case (the engine
/// restarts the producer and goes on).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProducerFault {
    /// The producer could not be started.
    #[error("cannot start producer `{cmd}`: {reason}")]
    Start {
        /// The command.
        cmd: String,
        /// The OS error.
        reason: String,
    },
    /// No valid hello (or it does not declare `enqueue` with protocol 2).
    #[error("the producer sent no valid hello: {0}; the first stdout line must be {{\"type\":\"hello\",\"protocol\":2,\"capabilities\":[\"enqueue\",...]}} (docs/adapter-protocol.md)")]
    Hello(String),
    /// No answer within the timeout.
    #[error("the producer did not answer within {}s (--adapter-timeout)", .0.as_secs_f64())]
    Timeout(Duration),
    /// The producer exited, crashed or closed a pipe.
    #[error("the producer crashed: {0}")]
    Crashed(String),
    /// The request was in flight when the runner restarted the producer for another request's
    /// fault (a timeout, a crash): not this request's fault, and no answer.
    #[error("not answered: the runner restarted the producer for a fault of another request in flight ({0}), which cut this request off; it says nothing about this request")]
    CutOff(String),
    /// A line that is not a valid answer to the outstanding request.
    #[error("protocol violation: {0} (docs/adapter-protocol.md, \"Enqueue: producers\")")]
    Protocol(String),
    /// The run was asked to stop while waiting.
    #[error("stopped: the run was asked to stop")]
    Stopped,
    /// Anything else (e.g. a Python exception in the callable).
    #[error("{0}")]
    Other(String),
}

/// An enqueue request sent and not answered yet ([`Producer::send`]).
pub type Pending = process::Pending<EnqueueAnswer>;

/// Something that enqueues jobs the way a producer does. One request is outstanding at a
/// time, unless its hello declares `max_in_flight` ([`Producer::send`]); every method returns
/// within the bound it is given (or its own start-up bound).
pub trait Producer: Send {
    /// The producer's hello (starting it if it is not running yet).
    ///
    /// # Errors
    /// [`ProducerFault`] when it cannot start or sends no valid hello.
    fn hello(&mut self) -> Result<Hello, ProducerFault>;

    /// Enqueue `request.job`, committed before answering, within `timeout`.
    ///
    /// # Errors
    /// [`ProducerFault`] on a crash, hang or garbage answer (a harness error of the case).
    fn enqueue(
        &mut self,
        request: &EnqueueRequest,
        timeout: Duration,
    ) -> Result<EnqueueAnswer, ProducerFault>;

    /// Send `request` and return the wait for its answer, which needs no access to the
    /// producer: a producer whose hello declares `max_in_flight` above 1 is sent more requests
    /// meanwhile (ADR 0057). By default the request is answered before this returns.
    ///
    /// # Errors
    /// [`ProducerFault`] when the request cannot be sent; the wait returns the answer's
    /// faults, as [`Producer::enqueue`] does.
    fn send(
        &mut self,
        request: &EnqueueRequest,
        timeout: Duration,
    ) -> Result<Pending, ProducerFault> {
        let answer = self.enqueue(request, timeout);
        Ok(Box::new(move || answer))
    }

    /// Stage and publish `request.jobs` as one batch (docs/contract.md §14), committed before
    /// answering, within `timeout`. Only asked of a producer that declares `bulk`.
    ///
    /// # Errors
    /// [`ProducerFault`] on a crash, hang or garbage answer; by default, that this producer
    /// answers no bulk request.
    fn bulk(
        &mut self,
        request: &crate::protocol::BulkRequest,
        timeout: Duration,
    ) -> Result<crate::protocol::BulkAnswer, ProducerFault> {
        let _ = (request, timeout);
        Err(ProducerFault::Other(
            "this producer answers no bulk request; declare the capability `bulk` only with \
             a producer that does"
                .to_owned(),
        ))
    }

    /// Start afresh after a fault (new process, new hello). `cause` is that fault: the
    /// requests still in flight are cut off ([`ProducerFault::CutOff`]) and say so.
    ///
    /// # Errors
    /// As [`Producer::hello`].
    fn restart(&mut self, cause: &ProducerFault) -> Result<Hello, ProducerFault>;

    /// Diagnostics the producer wrote since the last call (a subprocess's stderr), attached
    /// to the case they belong to.
    fn take_diagnostics(&mut self) -> String {
        String::new()
    }

    /// End the producer cleanly (`stop`), within its start-up bound.
    ///
    /// # Errors
    /// It did not exit cleanly in time.
    fn stop(&mut self) -> Result<(), ProducerFault> {
        Ok(())
    }
}

/// Selects cases by trial name.
pub type CaseFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Default of `--max-consecutive-timeouts`: one slow request is a fault of its case, three in
/// a row (each after a fresh restart) a producer that no longer answers.
pub const DEFAULT_MAX_CONSECUTIVE_TIMEOUTS: u32 = 3;

/// How a run starts its producer: the command line's producer options, typed (the front
/// hall builds it from `--producer` and its companions; nothing here reads the command line).
#[derive(Clone)]
pub struct Launch {
    /// The producer's shell command.
    pub cmd: String,
    /// The DSN given to the producer as written (`--producer-dsn`), if any.
    pub producer_dsn: Option<String>,
    /// The run's DSN as written (`--dsn`), if any; `DATABASE_URL` is read when it is `None`.
    pub run_dsn: Option<String>,
    /// Bound on each wait for the producer (`--adapter-timeout`).
    pub timeout: Duration,
    /// `--max-consecutive-timeouts`.
    pub max_consecutive_timeouts: u32,
    /// `--validate-producer`: the protocol smoke test only.
    pub validate: bool,
}

impl std::fmt::Debug for Launch {
    // The DSNs may hold passwords: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("cmd", &self.cmd)
            .field("timeout", &self.timeout)
            .field("max_consecutive_timeouts", &self.max_consecutive_timeouts)
            .field("validate", &self.validate)
            .finish_non_exhaustive()
    }
}

/// Options of a producer check.
#[derive(Clone)]
pub struct CheckOptions {
    /// Bound on each enqueue (the CLI's `--adapter-timeout`).
    pub enqueue_timeout: Duration,
    /// Which cases to run, by trial name (`None`: all).
    pub filter: Option<CaseFilter>,
    /// Stop after the producer timed out on this many requests in a row (the CLI's
    /// `--max-consecutive-timeouts`); the cases not run are left out of the results, and a
    /// harness error `producer::unresponsive` says why.
    pub max_consecutive_timeouts: u32,
    /// The kit's own calls of the functions under test keep the server's defaults instead of
    /// the callers' settings (the CLI's `--plain-sessions`; docs/contract.md §12.4).
    pub plain_sessions: bool,
}

impl std::fmt::Debug for CheckOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckOptions")
            .field("enqueue_timeout", &self.enqueue_timeout)
            .field("filter", &self.filter.is_some())
            .field("max_consecutive_timeouts", &self.max_consecutive_timeouts)
            .field("plain_sessions", &self.plain_sessions)
            .finish()
    }
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            enqueue_timeout: crate::adapter::DEFAULT_TIMEOUT,
            filter: None,
            max_consecutive_timeouts: DEFAULT_MAX_CONSECUTIVE_TIMEOUTS,
            plain_sessions: false,
        }
    }
}

/// Every producer trial name, known without starting the producer (`--list`, expected
/// failures).
#[must_use]
pub fn trial_names(vectors: &VectorSet) -> Vec<String> {
    cases::cases(vectors)
        .into_iter()
        .map(|c| c.name)
        .chain(std::iter::once(COVERAGE_CASE.to_owned()))
        .collect()
}

/// Connect to `dsn` (a libpq URI or key=value string) and preflight the contract schema
/// `schema` the way a run does (environment, catalog, leftovers of killed runs): the `db` of
/// [`check`]. Call [`DbSetup::cleanup`] when done (it removes anything a case left).
///
/// # Errors
/// [`crate::error::Error`] with the run's exit-code classes: a bad DSN (usage), an
/// unreachable database (4), a missing or wrong contract schema (5).
pub fn connect(
    dsn: &str,
    schema: &str,
    producer_role: &str,
) -> Result<Arc<DbSetup>, crate::error::Error> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let dsn = crate::pg::Dsn::parse(dsn, crate::pg::DsnSource::Flag, &env)?;
    let pg = crate::pg::Pg::new(dsn)?;
    let ctx = RunContext::new(ExpectedFailures::default());
    let schema = crate::pg::SchemaName::new(schema).map_err(crate::error::Error::Usage)?;
    Ok(crate::contract::open::preflight(
        &ctx,
        pg,
        &schema,
        producer_role,
        Some(1),
        true,
        crate::contract::server::untested_server_allowed_by_env(),
    )?)
}

/// Check `producer` case by case on the checked database `db` and return one result per
/// case run, expected failures applied exactly as the CLI applies them (`unexpected_pass`
/// included). The producer is asked for its hello first and stopped at the end; if it does
/// not stop cleanly, a harness error `producer::stop` is added to the results.
///
/// # Errors
/// [`crate::error::Error::Harness`] when the producer cannot start or says no valid hello,
/// [`crate::error::Error::ExpectedFailures`] when an expected-failures entry names no case.
pub fn check(
    producer: Box<dyn Producer>,
    db: &Arc<DbSetup>,
    vectors: &VectorSet,
    expected: ExpectedFailures,
    options: &CheckOptions,
) -> Result<Vec<CaseResult>, crate::error::Error> {
    let all = cases::cases(vectors);
    expected.check_ids(all.iter().map(|c| c.name.as_str()))?;
    let ctx = RunContext::new(expected);
    declare_features(&ctx, &all);
    let session = engine::Session::start(producer, Arc::clone(db), options.enqueue_timeout)?;
    session.limit_timeouts(options.max_consecutive_timeouts, Arc::new(|_| {}));
    // The cases below run one after the other.
    session.limit_lanes(1);
    let selected = |name: &str| options.filter.as_ref().is_none_or(|f| f(name));
    let run = CaseLoop::new(session, &all, &selected, Arc::new(|| false));
    let chosen = all.into_iter().filter(|c| selected(&c.name));
    let unresponsive = run.each(chosen, |case, outcome| {
        if let Some(output) = outcome.output {
            ctx.attach_output(&case.name, output);
        }
        ctx.record(SUITE, case.name, outcome.verdict, outcome.elapsed_ms);
    });
    let concluded = run.conclude(selected(COVERAGE_CASE));
    if let Some(verdict) = concluded.coverage {
        ctx.record(SUITE, COVERAGE_CASE.to_owned(), verdict, 0.0);
    }
    // Each a harness error of the check (results are sorted by name, so the order here does
    // not matter). A finding no case carries needs requests in flight beside each other, which
    // one at a time cannot have; were it to arise, it is never a silent pass.
    for (what, problem) in [
        ("unresponsive", unresponsive),
        ("unattributed", concluded.unattributed),
        ("stop", concluded.stop_problem),
    ] {
        if let Some(problem) = problem {
            ctx.record(
                SUITE,
                format!("{SUITE}::{what}"),
                Err(crate::outcome::CaseFailure::harness(problem)),
                0.0,
            );
        }
    }
    Ok(ctx.results())
}

/// Which producer cases a run selects, and how many may be in flight.
pub struct Selection<'a> {
    /// Whether the trial named so is selected (libtest's filters).
    pub selected: &'a dyn Fn(&str) -> bool,
    /// `--test-threads` as given: 1 keeps one case in flight whatever the producer declares.
    pub test_threads: Option<usize>,
}

/// The producer cases as trials of `ctx` (what `--producer` runs): ignored without a
/// database, not applicable when the producer lacks a capability a case needs, and each
/// trial's verdict from the session's one loop ([`CaseLoop::run`]: with several lanes the
/// selected cases run ahead of their trials, that many in flight, and each trial waits for
/// its own case's verdict).
#[must_use]
pub fn trials(
    ctx: &Arc<RunContext>,
    run: Option<&Arc<CaseLoop>>,
    no_db_reason: &str,
    all: Vec<cases::Case>,
) -> Vec<Trial> {
    declare_features(ctx, &all);
    all.into_iter()
        .map(|case| {
            let Some(run) = run else {
                return ctx.ignored(SUITE, case.name, no_db_reason.to_owned());
            };
            if let Some(why) = run.not_applicable(&case) {
                return ctx.not_applicable(SUITE, case.name, why);
            }
            let run = Arc::clone(run);
            let name = case.name.clone();
            // Inline, not on a case thread: the producer's lanes are shared, so a case waiting
            // for a lane must not count that wait against its own --case-timeout; every wait
            // inside is bounded (enqueue timeout, lock_timeout, statement_timeout).
            let ctx_for_output = Arc::clone(ctx);
            ctx.pure_trial(SUITE, name, move || {
                let outcome = run.run(&case);
                if let Some(output) = outcome.output {
                    ctx_for_output.attach_output(&case.name, output);
                }
                outcome.verdict
            })
        })
        .collect()
}

/// Declare the features of `all`, every producer case of the vectors, on `ctx`
/// ([`RunContext::declare_features`]): the catalogue the run's per-feature verdict counts
/// against, selected or not.
pub fn declare_features(ctx: &RunContext, all: &[cases::Case]) {
    for case in all {
        ctx.declare_features(
            crate::contract::features::Side::Producer,
            &case.name,
            case.features(),
        );
    }
}

/// The producer's trial names as ignored trials, for `--list` and the expected-failures
/// check (the producer is not started); empty without `--producer`.
#[must_use]
pub fn listed(ctx: &Arc<RunContext>, vectors: &VectorSet, launch: Option<&Launch>) -> Vec<Trial> {
    let Some(launch) = launch else {
        return Vec::new();
    };
    let names = if launch.validate {
        validate::trial_names()
    } else {
        trial_names(vectors)
    };
    names
        .into_iter()
        .map(|name| ctx.ignored(SUITE, name, "listing only".to_owned()))
        .collect()
}

/// The DSN a producer is given, and the login the engine knows it enqueues as (ADR 0049):
/// `--producer-dsn` as written (its user's answered jobs are removed, nothing else it
/// writes outside the case's queues); else, on a contract database where the runner can
/// create it, the run's temporary login role (a member of the producer role only, used by
/// nothing else, so every row it writes is removed wherever it landed); else the run's
/// `--dsn` or `DATABASE_URL` as written (so TLS files and options pass through), else the
/// door's own connection string (a throwaway cluster, or `PG*` variables), each with its
/// user's answered jobs removed.
fn producer_dsn(launch: &Launch, db: &DbSetup) -> (String, engine::ProducerLogin) {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let user_of = |dsn: &str| {
        crate::pg::Dsn::parse(dsn, crate::pg::DsnSource::Flag, &env)
            .ok()
            .map(|d| d.user().to_owned())
            .filter(|u| !u.is_empty())
    };
    if let Some(dsn) = &launch.producer_dsn {
        let answers = user_of(dsn);
        return (
            dsn.clone(),
            engine::ProducerLogin {
                run_scoped: None,
                answers,
            },
        );
    }
    let written = launch.run_dsn.clone().or_else(|| {
        std::env::var("DATABASE_URL")
            .ok()
            .filter(|d| !d.trim().is_empty())
    });
    if db.compat.is_none() {
        if let Ok(login) = db.run_login() {
            let dsn = written.as_deref().map_or_else(
                || login.conninfo.clone(),
                |w| as_login(w, &login.role, &login.password),
            );
            return (
                dsn,
                engine::ProducerLogin {
                    run_scoped: Some(login.role.clone()),
                    answers: Some(login.role),
                },
            );
        }
    }
    let dsn = written.unwrap_or_else(|| db.pg.dsn().conninfo());
    let answers = user_of(&dsn).or_else(|| Some(db.pg.dsn().user().to_owned()));
    (
        dsn,
        engine::ProducerLogin {
            run_scoped: None,
            answers,
        },
    )
}

/// The run's DSN as written (a `postgres://` URL or a libpq key=value string, so its TLS files
/// and options pass through, and a producer that reads only URLs still gets one), logging
/// in as `user` with `password` instead. Both are the runner's own (`[0-9a-z_]`), so they
/// need no escaping.
fn as_login(written: &str, user: &str, password: &str) -> String {
    let written = written.trim();
    let scheme = ["postgresql://", "postgres://"]
        .into_iter()
        .find(|s| written.starts_with(s));
    let Some(scheme) = scheme else {
        // libpq: a later keyword overrides an earlier one.
        return format!("{written} user='{user}' password='{password}'");
    };
    let rest = written.get(scheme.len()..).unwrap_or("");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let hosts = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    // A `user=`/`password=` query parameter would override the userinfo: drop them.
    let tail = match tail.split_once('?') {
        None => tail.to_owned(),
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|p| !p.starts_with("user=") && !p.starts_with("password="))
                .collect();
            if kept.is_empty() {
                path.to_owned()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
    };
    format!("{scheme}{user}:{password}@{hosts}{tail}")
}

/// The producer process of `launch` on `db`, made as every engine that starts one makes it
/// (the run's trials, fuzz): the DSN and the login the engine knows it enqueues as
/// ([`producer_dsn`]: where the runner can create it, the run's temporary login, whose
/// sessions start with the callers' settings), the process limits, and what its sessions
/// were set to, for the provenance (`producer_session`).
pub fn subprocess(
    launch: &Launch,
    db: &DbSetup,
    stopped: Arc<dyn Fn() -> bool + Send + Sync>,
) -> (process::SubprocessProducer, engine::ProducerLogin, String) {
    let (dsn, login) = producer_dsn(launch, db);
    let sessions = if login.run_scoped.is_some() {
        db.caller_settings_provenance()
    } else {
        "not set by the kit: the producer logs in as --producer-dsn or the run's own role"
            .to_owned()
    };
    let producer = process::SubprocessProducer::new(
        &launch.cmd,
        crate::protocol::producer_env(dsn, (SCHEMA_ENV, db.schema.as_str())),
        process::ProcessLimits {
            timeout: launch.timeout,
            max_line: crate::adapter::MAX_LINE_BYTES,
            stopped,
        },
    );
    (producer, login, sessions)
}

/// `--producer CMD`: start the producer (with a database) and build its trials; returns the
/// session so the run can stop the producer after the trials.
///
/// # Errors
/// [`crate::error::Error::Harness`] when the producer cannot start or sends no valid hello.
pub fn run_trials(
    ctx: &Arc<RunContext>,
    launch: &Launch,
    db: Option<&Arc<DbSetup>>,
    no_db_reason: &str,
    vectors: &VectorSet,
    selection: &Selection<'_>,
) -> Result<(Vec<Trial>, Option<Arc<CaseLoop>>), crate::error::Error> {
    let Some(db) = db else {
        // The same names `--list` shows: the protocol exchange's in validate mode.
        if launch.validate {
            let ignored = validate::trial_names()
                .into_iter()
                .map(|name| ctx.ignored(SUITE, name, no_db_reason.to_owned()))
                .collect();
            return Ok((ignored, None));
        }
        return Ok((trials(ctx, None, no_db_reason, cases::cases(vectors)), None));
    };
    let stopped: engine::Stopped = {
        let ctx = Arc::clone(ctx);
        Arc::new(move || ctx.stop_reason().is_some())
    };
    let (producer, login, sessions) = subprocess(launch, db, Arc::clone(&stopped));
    ctx.set_provenance(SESSION_PROVENANCE, sessions);
    if launch.validate {
        let mut producer = producer;
        let steps = validate::validate(
            &mut producer,
            db.schema.as_str(),
            &format!("{}_", db.prefix()),
            launch.timeout,
        );
        return Ok((validate::trials(ctx, steps), None));
    }
    let session =
        engine::Session::start_as(Box::new(producer), Arc::clone(db), launch.timeout, login)?;
    {
        let ctx = Arc::clone(ctx);
        session.limit_timeouts(
            launch.max_consecutive_timeouts,
            Arc::new(move |message| {
                ctx.record_run_error(format!("producer: {message}"));
                ctx.request_stop(crate::interrupt::StopReason::ProducerUnresponsive);
            }),
        );
    }
    if selection.test_threads == Some(1) {
        session.limit_lanes(1);
    }
    fit_lanes(ctx, &session, db, selection.test_threads);
    let hello = session.hello();
    ctx.set_provenance(
        SUITE,
        format!(
            "{} {}",
            hello.implementation.name, hello.implementation.version
        ),
    );
    ctx.set_provenance(FIELDS_PROVENANCE, hello.fields_judged());
    let all = cases::cases(vectors);
    let run = Arc::new(CaseLoop::new(session, &all, selection.selected, stopped));
    Ok((trials(ctx, Some(&run), no_db_reason, all), Some(run)))
}

#[cfg(test)]
mod tests {
    use super::as_login;

    #[test]
    fn the_run_login_keeps_the_written_dsn() {
        assert_eq!(
            as_login(
                "postgres://me:x@db:5433/x?sslmode=require&user=me",
                "r",
                "p"
            ),
            "postgres://r:p@db:5433/x?sslmode=require"
        );
        assert_eq!(
            as_login("postgresql://db/x", "r", "p"),
            "postgresql://r:p@db/x"
        );
        assert_eq!(
            as_login("postgres://h1,h2:7", "r", "p"),
            "postgres://r:p@h1,h2:7"
        );
        assert_eq!(
            as_login("host=db user=me sslrootcert=/ca.pem", "r", "p"),
            "host=db user=me sslrootcert=/ca.pem user='r' password='p'"
        );
    }
}
