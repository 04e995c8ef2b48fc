//! The producer engine: one [`Session`] holds the producer and one lane per request the
//! producer accepts at once (`hello.max_in_flight`, ADR 0057); this file runs one case's
//! steps on a lane: prepare the run-scoped queue, ask `insert_job` itself (rolled back), ask
//! the producer, read the stored job back, hand all of it to the answer judge
//! (`contract::judge::answer`), count the rows, remove every row.
//!
//! Its rooms, bottom-up (a module uses only those before it, and this file's shared state):
//! 1. `exchange`: the producer process behind its slot: one request's round trip, faults and
//!    restarts, timeouts in a row;
//! 2. `reference`: what the engine checks against (the contract's `insert_job`, or released
//!    Awa's `insert_job_compat`), what a case needs that released Awa lacks, and the
//!    reference call, rolled back;
//! 3. `readback`: what a case stored (the job, the whole job, the rows a case left) and the
//!    job outside it that blocks its unique key;
//! 4. this file: a case's steps, the queue set-up and the clean-up;
//! 5. `bulk`: a staged batch's steps;
//! 6. `lanes`: scheduling and attribution (ADR 0057): a case beside others or alone (the
//!    gate), strays, confirming alone, the batch sweep, and the `Pipeline` that runs the
//!    selected cases ahead of their trials.
//!
//! Attribution comes first: a case judges only rows it can tell apart as its own (its
//! run-scoped queues, its answered ids). A row of the run's login outside every run-scoped
//! queue that no case answered (a stray) cannot be charged to one of several cases in
//! flight: the case that sees it drains the lanes, and it and every later case run alone
//! (the gate), where such a row is the case's own, as with one lane.

use crate::pg::SqlText;
use awa_conformance_vectors::to_hex as hex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use tokio_postgres::{Client, Statement};

use crate::pg::{Cached, Statements};

use super::cases::{Case, Kind, UNIQUE_KEY_STATES};
use super::steps::{base_job, route_step, unique_probe, Need, Outcome, Plan, Step};
use super::{Producer, ProducerFault, SUITE};
use crate::contract::call::{self, InsertJob};
use crate::contract::expect::Payload;
use crate::contract::judge::answer::{self, ReadBack, ReferenceProblem};
use crate::contract::judge::{self, Observed, Stored};
use crate::contract::sweep::{count_jobs_with, count_split_with, JobScope, Tables};
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::protocol::{
    EnqueueAnswer, EnqueueRequest, Hello, Job, BULK_CAPABILITY, ERRORS_CAPABILITY,
};
use crate::timings::{Phase, Timings, TimingsSection};

mod bulk;
mod exchange;
mod lanes;
mod readback;
mod reference;

pub use exchange::OnUnresponsive;
use exchange::{with_stderr, Slot, TimeoutLimit};
use lanes::Unswept;
pub use lanes::{fit_lanes, Pipeline};
use reference::{target_lacks, Target};

/// The most lanes a session opens, whatever the producer declares: each is a session of the
/// runner's own (and the producer opens about as many), and the server's connection slots
/// are shared with everything else on it.
pub const MAX_LANES: usize = 16;

/// How many cases run beside others leave their rows for one sweep of them all (ADR 0057):
/// one statement per table removes a batch's rows, where a case each cost a statement per
/// table; the rows left meanwhile are in queues of their own, which no other case reads or
/// counts.
pub const SWEEP_BATCH: usize = 32;

/// One lane: the runner's connection and the case running on it.
struct Inner {
    client: Option<Client>,
    /// The job ids the producer answered in the current case (ADR 0049: its clean-up finds
    /// them wherever they landed).
    answered: Vec<i64>,
    /// Whether the current case runs alone (no other case in flight): then every row of the
    /// run's login is its own, and its clean-up removes them all.
    alone: bool,
    /// Whether the current case, run beside others, saw a stray row (the run's login,
    /// outside every run-scoped queue, not answered by it): it is run again alone.
    strays_seen: bool,
    /// Whether the current case, run beside others, found what another case in flight may
    /// have caused (a row count off in its queues, an answered id with no row): a failure is
    /// then confirmed alone.
    doubt: bool,
    /// The statements prepared on `client`, by SQL text: each is prepared once per
    /// connection, not once per case (a round trip saved on every statement of every case).
    statements: Statements,
    /// The schema's tables as read on the current connection (the row count and the sweep
    /// share one catalog read: once per connection on a contract schema, once per case on
    /// released Awa).
    tables: Option<Tables>,
    /// Where the cases' time went, per phase (`--timings`).
    timings: Timings,
}

impl Inner {
    fn new() -> Self {
        Self {
            client: None,
            answered: Vec::new(),
            alone: true,
            strays_seen: false,
            doubt: false,
            statements: Statements::default(),
            tables: None,
            timings: Timings::default(),
        }
    }
}

/// `f` on `inner`, its time added to `phase`.
fn timed<T>(inner: &mut Inner, phase: Phase, f: impl FnOnce(&mut Inner) -> T) -> T {
    let t = Instant::now();
    let r = f(inner);
    inner.timings.add(phase, t.elapsed());
    r
}

/// The login a producer enqueues as, as far as the engine knows it (ADR 0049).
#[derive(Debug, Clone, Default)]
pub struct ProducerLogin {
    /// A login role only this run uses, given to the producer by the engine: every row it
    /// writes is the run's, and is removed after each case wherever it landed.
    pub run_scoped: Option<String>,
    /// The login an answered job id must have been enqueued by to be removed (the run-scoped
    /// login, else the user of the DSN the producer was given); `None`: answered ids outside
    /// the case's queues are not removed.
    pub answers: Option<String>,
}

/// A producer and the runner's connection, shared by every producer case of a run.
pub struct Session {
    db: Arc<DbSetup>,
    target: Target,
    timeout: Duration,
    login: ProducerLogin,
    timeout_limit: Mutex<Option<TimeoutLimit>>,
    hello: Mutex<Hello>,
    producer: Mutex<Slot>,
    /// One per request the producer accepts at once (at most [`MAX_LANES`]).
    lanes: Vec<Mutex<Inner>>,
    /// The lanes in use (`--test-threads 1` keeps one).
    active: AtomicUsize,
    /// Cases beside others hold it shared; a case that must run alone holds it exclusively,
    /// once the cases in flight are done.
    gate: RwLock<()>,
    /// Set once a stray row was seen, or a case failed beside others: every later case runs
    /// alone (ADR 0057).
    serial: AtomicBool,
    /// The cases in flight beside others now, for the context of a failure seen beside them.
    in_flight: Mutex<std::collections::BTreeSet<String>>,
    /// Cases started (the `p<n>` of their run-scoped queues).
    cases: AtomicU64,
    /// Per declared capability, the cases the producer answered and skipped (the coverage
    /// rule, [`judge::coverage`]).
    tallies: Mutex<std::collections::BTreeMap<String, judge::Tally>>,
    /// True once the run must stop: a failure is then not run again alone.
    stopped: Mutex<Option<Stopped>>,
    /// Cases run beside others whose rows wait for the batch sweep.
    unswept: Mutex<Unswept>,
    /// Cases that failed beside others and passed alone: another request in flight touched
    /// their rows, and which one cannot be told (judged by [`Self::coverage`]).
    unattributed: Mutex<Vec<String>>,
    /// Each finished case's own producer output (its tail, [`exchange::OUTPUT_KEPT`] bytes),
    /// until its trial takes it for the report ([`Session::take_output`]).
    outputs: Mutex<std::collections::HashMap<String, String>>,
    /// Lines another request in flight named, kept for the case that request belongs to.
    unclaimed: Mutex<Vec<String>>,
    /// The start of a line whose end the producer had not written yet when a case ended:
    /// a line is attributed whole, never split between two cases.
    partial: Mutex<String>,
}

/// Whether the run was asked to stop.
pub type Stopped = Arc<dyn Fn() -> bool + Send + Sync>;

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

use crate::sync::lock;

impl Session {
    /// Start a session: ask the producer for its hello (it must declare `enqueue`).
    ///
    /// # Errors
    /// [`crate::error::Error::Harness`] when the producer cannot start or its hello is wrong.
    pub fn start(
        producer: Box<dyn Producer>,
        db: Arc<DbSetup>,
        timeout: Duration,
    ) -> Result<Arc<Self>, crate::error::Error> {
        Self::start_as(producer, db, timeout, ProducerLogin::default())
    }

    /// [`Self::start`] for a producer that enqueues as `login` (ADR 0049): after each case
    /// the engine also removes what that login wrote outside the case's queues.
    ///
    /// # Errors
    /// As [`Self::start`].
    pub fn start_as(
        mut producer: Box<dyn Producer>,
        db: Arc<DbSetup>,
        timeout: Duration,
        login: ProducerLogin,
    ) -> Result<Arc<Self>, crate::error::Error> {
        let hello = producer.hello().map_err(|e| crate::error::Error::Harness {
            detail: with_stderr(&e.to_string(), &producer.take_diagnostics()),
        })?;
        hello
            .check_enqueue()
            .map_err(|e| crate::error::Error::Harness { detail: e })?;
        let lanes = hello.in_flight().clamp(1, MAX_LANES);
        Ok(Arc::new(Self {
            target: Target::of(&db),
            db,
            timeout,
            login,
            timeout_limit: Mutex::new(None),
            hello: Mutex::new(hello),
            producer: Mutex::new(Slot {
                producer,
                seq: 0,
                generation: 0,
                timeouts_in_a_row: 0,
            }),
            lanes: (0..lanes).map(|_| Mutex::new(Inner::new())).collect(),
            active: AtomicUsize::new(lanes),
            gate: RwLock::new(()),
            serial: AtomicBool::new(false),
            in_flight: Mutex::new(std::collections::BTreeSet::new()),
            cases: AtomicU64::new(0),
            tallies: Mutex::new(std::collections::BTreeMap::new()),
            stopped: Mutex::new(None),
            unswept: Mutex::new(Unswept::default()),
            unattributed: Mutex::new(Vec::new()),
            outputs: Mutex::new(std::collections::HashMap::new()),
            unclaimed: Mutex::new(Vec::new()),
            partial: Mutex::new(String::new()),
        }))
    }

    /// Tell the session how to know that the run was asked to stop.
    pub fn watch_stop(&self, stopped: Stopped) {
        *lock(&self.stopped) = Some(stopped);
    }

    fn stopping(&self) -> bool {
        lock(&self.stopped).as_ref().is_some_and(|f| f())
    }

    /// The producer output kept for `case` (bounded), once: for its trial to record.
    #[must_use]
    pub fn take_output(&self, case: &str) -> Option<String> {
        lock(&self.outputs).remove(case)
    }

    /// Of the output `taken` while `case` ran, the lines that are the case's: those naming
    /// its request (the request carries the case's name, so a producer ties its log lines to
    /// it by writing the name), those named by nobody, and those an earlier case took that
    /// name it. Lines naming another case are kept back for that case.
    ///
    /// Best effort: the producer's stderr and its answers are two pipes, so a line written
    /// for a request may arrive after its case ended; it is then kept back, never given to
    /// another case.
    fn own_output(&self, case: &str, taken: &str) -> String {
        let taken = {
            let mut partial = lock(&self.partial);
            let mut whole = std::mem::take(&mut *partial);
            whole.push_str(taken);
            if let Some(end) = whole.rfind('\n') {
                *partial = whole.split_off(end + 1);
            } else {
                *partial = std::mem::take(&mut whole);
            }
            whole
        };
        let taken = taken.as_str();
        let mut unclaimed = lock(&self.unclaimed);
        let mut own: Vec<String> = Vec::new();
        unclaimed.retain(|line| {
            let mine = exchange::names_case(line, case);
            if mine {
                own.push(line.clone());
            }
            !mine
        });
        let any_case = format!("{SUITE}::");
        for line in taken.lines() {
            if exchange::names_case(line, case) || !line.contains(&any_case) {
                own.push(line.to_owned());
            } else {
                unclaimed.push(line.to_owned());
            }
        }
        // Lines naming a case that never takes them (not selected, already finished) go.
        let excess = unclaimed.len().saturating_sub(exchange::UNCLAIMED_KEPT);
        unclaimed.drain(..excess);
        own.join("\n")
    }

    /// The producer's hello (the latest, after a restart).
    #[must_use]
    pub fn hello(&self) -> Hello {
        lock(&self.hello).clone()
    }

    /// Why `case` does not apply to this producer, if it does not.
    #[must_use]
    pub fn not_applicable(&self, case: &Case) -> Option<String> {
        if let Some(why) = target_lacks(&self.target, case) {
            return Some(why);
        }
        let hello = self.hello();
        // A request the producer's protocol cannot express (ADR 0053) is never sent.
        if let Some(why) = case.not_expressible(&hello) {
            return Some(why);
        }
        let needs = case.needs();
        if needs.contains(&Need::Bulk) {
            return (!hello.has(BULK_CAPABILITY)).then(|| {
                format!(
                    "producer {} does not declare capability {BULK_CAPABILITY} (staged batches, \
                     docs/contract.md §14)",
                    hello.implementation.name
                )
            });
        }
        (needs.contains(&Need::Errors) && !hello.has(ERRORS_CAPABILITY)).then(|| {
            format!(
                "producer {} does not declare capability {ERRORS_CAPABILITY} (cases whose \
                 answer is a refusal)",
                hello.implementation.name
            )
        })
    }

    /// `producer::coverage` over the cases run so far: a finding when rows of a case were
    /// touched by another request in flight (`unattributed`), or when the producer skipped
    /// every case of a capability it declared ([`judge::coverage`]); not applicable when no
    /// case ran (nothing to judge as a whole, and never a pass).
    ///
    /// # Errors
    /// The coverage finding.
    pub fn coverage(&self) -> Result<Verdict, CaseFailure> {
        let tallies = lock(&self.tallies);
        if tallies.is_empty() {
            return Ok(Verdict::NotApplicable(
                "no producer case ran, so the producer as a whole was not judged; select its \
                 cases too (e.g. the filter producer::)"
                    .to_owned(),
            ));
        }
        if let Some(touched) = self.unattributed() {
            return Err(touched);
        }
        let program = format!("producer {}", self.hello().implementation.name);
        judge::coverage(&program, "cases", &tallies).map(|()| Verdict::Passed)
    }

    /// Where the cases run so far spent their time, per phase (`--timings`).
    #[must_use]
    pub fn timings(&self) -> TimingsSection {
        let mut all = Timings::default();
        for lane in &self.lanes {
            all.merge(&lock(lane).timings);
        }
        all.section()
    }

    /// End the producer (`stop`); returns a problem to record, if any (the rows of cases
    /// still waiting for a batch sweep are removed first).
    pub fn finish(&self) -> Option<String> {
        let swept = self
            .lanes
            .first()
            .map(|lane| self.sweep_unswept(&mut lock(lane), 1));
        for lane in &self.lanes {
            lock(lane).client = None;
        }
        if let Some(Err(e)) = swept {
            return Some(e.message);
        }
        lock(&self.producer)
            .producer
            .stop()
            .err()
            .map(|e| e.to_string())
    }

    /// Run one case: its steps, then remove every row it created, whatever happened.
    ///
    /// # Errors
    /// A finding, or a harness error (producer fault, database trouble).
    pub fn run(&self, case: &Case) -> Result<Verdict, CaseFailure> {
        self.run_on(0, case)
    }

    /// One run of `case` on the lane `inner`, its rows removed whatever happened.
    fn run_case(&self, inner: &mut Inner, case: &Case) -> Result<Verdict, CaseFailure> {
        inner.answered.clear();
        // The contract schema's tables are fixed (its SQL is installed, never grown by an
        // enqueue): read once per connection. Released Awa's queue storage may grow tables
        // of its own as jobs arrive, so there they are read again for every case.
        if !matches!(self.target, Target::Contract) {
            inner.tables = None;
        }
        let n = self.cases.fetch_add(1, Ordering::SeqCst) + 1;
        let scope = format!("{}_p{n}_", self.db.prefix());
        // Nothing ran yet when the plan cannot be made: there is nothing to clean up.
        let plan = case.plan(&scope)?;
        let outcome = match &case.kind {
            Kind::Bulk(bulk) => self.run_bulk(inner, case, bulk, &scope),
            _ => self.run_plan(inner, case, &plan).and_then(|v| {
                timed(inner, Phase::ReadBack, |i| {
                    self.count_rows(i, &plan, &scope, v)
                })
            }),
        };
        // Beside others, a case's rows wait for the batch sweep; a global unique key's are
        // removed at once (the next case holding the key needs its claim gone), and released
        // Awa's queue storage is swept case by case.
        let defer = !inner.alone && plan.lock.is_none() && matches!(self.target, Target::Contract);
        let cleanup = if defer {
            let mut unswept = lock(&self.unswept);
            unswept.scopes.push(scope);
            unswept.answered.append(&mut inner.answered);
            Ok(())
        } else {
            timed(inner, Phase::Sweep, |i| {
                self.cleanup(i, std::slice::from_ref(&scope), plan.lock)
            })
        };
        // The producer's output while the case ran: its own lines (those naming the case's
        // request, and the unnamed ones), kept with the case whether it passed or failed.
        let taken = lock(&self.producer).producer.take_diagnostics();
        let stderr = self.own_output(&case.name, &taken);
        if !stderr.trim().is_empty() {
            lock(&self.outputs).insert(case.name.clone(), exchange::tail(&stderr));
        }
        let outcome = match (outcome, cleanup) {
            (Ok(_), Err(e)) => Err(e),
            (o, _) => o,
        };
        outcome.map_err(|mut f| {
            f.message = with_stderr(&f.message, &stderr);
            f
        })
    }

    fn client<'a>(&self, inner: &'a mut Inner) -> Result<&'a Client, CaseFailure> {
        if inner.client.as_ref().is_none_or(Client::is_closed) {
            let c = self
                .db
                .pg
                .block_on(self.db.pg.connect())
                .map_err(|e| CaseFailure::harness(e.to_string()))?
                .map_err(|e| CaseFailure::harness(e.to_string()))?;
            inner.client = Some(c);
            // Statements prepared on the old connection do not exist on the new one.
            inner.statements.clear();
            inner.tables = None;
        }
        inner
            .client
            .as_ref()
            .ok_or_else(|| CaseFailure::harness("no connection"))
    }

    /// The session's connection (opened again if it closed) with its statements.
    fn conn<'a>(&self, inner: &'a mut Inner) -> Result<Cached<'a>, CaseFailure> {
        self.client(inner)?;
        let client = inner
            .client
            .as_ref()
            .ok_or_else(|| CaseFailure::harness("no connection"))?;
        Ok(Cached::new(client, &inner.statements))
    }

    /// `sql` prepared on the session's connection, once per connection.
    fn prepared(&self, inner: &mut Inner, sql: &str) -> Result<Statement, CaseFailure> {
        let conn = self.conn(inner)?;
        self.db
            .pg
            .block_on(conn.statement(sql))
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| self.db_err("preparing a statement", &e))
    }

    fn db_err(&self, what: &str, e: &tokio_postgres::Error) -> CaseFailure {
        CaseFailure::harness(format!("{what}: {}", self.db.pg.describe(e)))
    }

    fn run_plan(
        &self,
        inner: &mut Inner,
        case: &Case,
        plan: &Plan,
    ) -> Result<Verdict, CaseFailure> {
        timed(inner, Phase::SetUp, |inner| self.set_up(inner, plan))?;
        for step in &plan.steps {
            if let Some(v) = self.run_step(inner, case, step)? {
                return Ok(v);
            }
        }
        Ok(Verdict::Passed)
    }

    /// The case's global-key lock and its queues' widths, in one round trip.
    fn set_up(&self, inner: &mut Inner, plan: &Plan) -> Result<(), CaseFailure> {
        let s = self.db.schema.quoted();
        {
            let lock = match plan.lock {
                Some(_) => Some(self.prepared(inner, include_str!("../../sql/producer_lock.sql"))?),
                None => None,
            };
            let width = self.prepared(
                inner,
                &include_str!("../../sql/queue_meta_insert.sql").in_schema(s),
            )?;
            let client = self.client(inner)?;
            // The lock first, then the widths, pipelined (join polls them in order, and each
            // statement is sent on its first poll): one round trip.
            let prepared = self.db.pg.block_on(async {
                let taken = async {
                    match (plan.lock, &lock) {
                        (Some((k1, k2)), Some(st)) => client
                            .query_one(st, &[&k1, &k2])
                            .await
                            .map(|_| ())
                            .map_err(|e| self.db_err("taking the lock of a global unique key", &e)),
                        _ => Ok(()),
                    }
                };
                let widths = futures_util::future::try_join_all(plan.widths.iter().map(
                    |(queue, w)| async {
                        client
                            .execute(&width, &[queue, w])
                            .await
                            .map_err(|e| self.db_err("setting queue_meta.enqueue_shards", &e))
                    },
                ));
                let (taken, widths) = futures_util::future::join(taken, widths).await;
                taken.and(widths.map(|_| ()))
            });
            prepared.map_err(|e| CaseFailure::harness(e.to_string()))??;
        }
        Ok(())
    }

    /// One step: the reference call, the producer's answer and what it stored, each judged by
    /// the answer judge (`contract::judge::answer`); `Some(verdict)` ends the case early
    /// (skipped by the producer).
    fn run_step(
        &self,
        inner: &mut Inner,
        case: &Case,
        step: &Step,
    ) -> Result<Option<Verdict>, CaseFailure> {
        let records = self.target.records();
        let reference = timed(inner, Phase::Reference, |i| self.reference(i, &step.call))?;
        let reference_ok = match timed(inner, Phase::Judge, |_| {
            answer::reference(case, &step.outcome, &reference, records)
        }) {
            Ok(r) => r,
            Err(ReferenceProblem::Blocked(message)) => {
                return Err(CaseFailure::harness(self.blocked(
                    inner,
                    step.call.unique_key.as_deref(),
                    &message,
                )))
            }
            Err(ReferenceProblem::Failed(f)) => return Err(f),
        };
        // Revision 1.2: what the server makes of the payload asked, and the clock before the
        // producer's call (a defaulted run_at falls between it and the answer).
        let asked = match (&step.outcome, self.payload_read()) {
            (Outcome::Stored(_), true) => Some(timed(inner, Phase::Reference, |i| {
                self.asked(i, &step.call)
            })?),
            _ => None,
        };
        let reply = timed(inner, Phase::Producer, |i| self.ask(i, case, &step.job))?;
        let read = match (&step.outcome, &reply) {
            (Outcome::Stored(_), EnqueueAnswer::Enqueued { job_id, .. }) => {
                let (routing, whole) = timed(inner, Phase::ReadBack, |i| {
                    self.read_back(i, *job_id, asked.is_some())
                })?;
                inner.doubt |= routing.job_id.is_none();
                let payload = match (asked, whole) {
                    (Some((asked, from)), Some(whole)) => {
                        let (whole, to) = whole?;
                        Some(Box::new((
                            Payload::asked(&step.call, asked, (&from, &to)),
                            whole,
                        )))
                    }
                    _ => None,
                };
                ReadBack::Stored { routing, payload }
            }
            (Outcome::Refused(_), EnqueueAnswer::Enqueued { job_id, .. }) => {
                let routing = self.read(inner, *job_id)?;
                inner.doubt |= routing.job_id.is_none();
                // `ask` recorded this answer already: a second occurrence is an earlier job's id.
                let repeated = inner.answered.iter().filter(|&&id| id == *job_id).count() > 1;
                ReadBack::Accepted { routing, repeated }
            }
            _ => ReadBack::Nothing,
        };
        let request = serde_json::to_value(&step.job).unwrap_or(Json::Null);
        timed(inner, Phase::Judge, |_| {
            answer::answer(
                case,
                &step.outcome,
                &request,
                step.call.unique_states.as_deref(),
                reference_ok.as_ref(),
                reply,
                read,
                records,
            )
        })
    }

    /// Remove every row of the case's queues (and their claims), and what the producer's
    /// login wrote anywhere else (ADR 0049), then release its lock.
    fn cleanup(
        &self,
        inner: &mut Inner,
        scopes: &[String],
        key_lock: Option<(i32, i32)>,
    ) -> Result<(), CaseFailure> {
        let db = Arc::clone(&self.db);
        let answered = std::mem::take(&mut inner.answered);
        // Beside other cases, the run's login's rows outside this case's queues may be
        // theirs: only the case's answered ids are removed there (a stray stays, for the
        // count that sends its case to run alone, ADR 0057).
        let by_login = crate::contract::sweep::ByLogin {
            run_login: self.login.run_scoped.as_deref().filter(|_| inner.alone),
            answered: &answered,
            answer_login: self.login.answers.as_deref(),
            created_since: Some(self.db.began),
        };
        let unlock = match key_lock {
            Some(_) => Some(self.prepared(inner, include_str!("../../sql/producer_unlock.sql"))?),
            None => None,
        };
        let (conn, tables) = self.client_and_tables(inner)?;
        let client = conn.client;
        self.db
            .pg
            .block_on(async {
                crate::contract::sweep::sweep_with(conn, &db, tables, scopes, &[], by_login, None)
                    .await
                    .map_err(|e| CaseFailure::harness(format!("removing the case's rows: {e}")))?;
                if let (Some((k1, k2)), Some(unlock)) = (key_lock, &unlock) {
                    client.query_one(unlock, &[&k1, &k2]).await.map_err(|e| {
                        self.db_err("releasing the lock of a global unique key", &e)
                    })?;
                }
                Ok(())
            })
            .map_err(|e| CaseFailure::harness(e.to_string()))?
    }
}

/// `v` as an SQL string literal, as a message shows a queue or login.
fn sql_literal(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}
