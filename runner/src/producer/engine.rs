//! The engine's steps for one case: prepare the run-scoped queue, ask `insert_job` itself
//! (rolled back), ask the producer, read the stored job back, judge, remove every row.
//!
//! One [`Session`] holds the producer and the runner's own connection behind one lock: the
//! producer takes one request at a time, so cases run one after the other whatever the
//! number of test threads.

use awa_conformance_vectors::to_hex as hex;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use awa_conformance_core::{self as core, Route, RouteSource, Width};
use serde_json::{json, Value as Json};
use tokio_postgres::Client;

use super::cases::{self, BulkCase, Case, Kind, RefusalKind, FUTURE, UNIQUE_KEY_STATES};
use super::judge::{self, Expected, Observed, Records};
use super::wire::{
    BulkAnswer, BulkRefusal, BulkRequest, EnqueueAnswer, EnqueueRequest, Hello, Job,
    PartitionInputs, Refusal, UniqueInputs, BULK_CAPABILITY, ERRORS_CAPABILITY,
};
use super::{Producer, ProducerFault};
use crate::outcome::{CaseFailure, Verdict};
use crate::suites::db::DbSetup;

/// The kind every probe job has.
pub const PROBE_KIND: &str = "awa_conformance.probe";
/// The advisory lock (`GLOBAL_KEY_LOCK`, 0) that serializes the cases of global unique keys
/// across concurrent runs ("awak"; ADR 0047).
pub const GLOBAL_KEY_LOCK: i32 = 0x6177_616b;
/// How much of the producer's stderr a case message carries (the JSON report too).
const STDERR_IN_MESSAGE: usize = 4096;

/// The arguments of the reference `insert_job` call (README's prepared-statement form).
#[derive(Debug, Clone)]
struct RefCall {
    queue: String,
    priority: i16,
    run_at: Option<String>,
    unique_key: Option<Vec<u8>>,
    unique_states: Option<String>,
    ordering_key: Option<Vec<u8>>,
    concurrency_key: Option<Vec<u8>>,
}

/// What a step must end in.
#[derive(Debug, Clone)]
enum Outcome {
    Stored(Box<Expected>),
    Refused(RefusalKind),
}

/// One enqueue of a case.
#[derive(Debug, Clone)]
struct Step {
    job: Job,
    call: RefCall,
    outcome: Outcome,
}

/// Everything a case does.
#[derive(Debug)]
struct Plan {
    /// `queue_meta` rows to create first.
    widths: Vec<(String, i16)>,
    steps: Vec<Step>,
    /// The advisory lock of a global unique key.
    lock: Option<(i32, i32)>,
}

struct Inner {
    producer: Box<dyn Producer>,
    client: Option<Client>,
    seq: u64,
    cases: u64,
    /// The job ids the producer answered in the current case (ADR 0049: its clean-up finds
    /// them wherever they landed).
    answered: Vec<i64>,
    /// Requests in a row that ended in a timeout (reset by any answer).
    timeouts_in_a_row: u32,
}

/// Called once, with the message, when the producer has timed out on the limit of requests
/// in a row ([`Session::limit_timeouts`]): the caller stops the run.
pub type OnUnresponsive = Arc<dyn Fn(String) + Send + Sync>;

/// `--max-consecutive-timeouts` and what to do when it is reached.
struct TimeoutLimit {
    limit: u32,
    on_reached: OnUnresponsive,
    reached: bool,
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

/// What the engine checks against: the contract's `insert_job`, or released Awa's
/// `insert_job_compat` (the compat profile, docs/released-awa.md).
#[derive(Debug, Clone)]
enum Target {
    /// `insert_job` is the reference; `job_routing` reads the stored job.
    Contract,
    /// Released Awa under queue storage: `insert_job_compat` is the reference; the stored job
    /// is read from queue storage (the quoted schema).
    Released { storage: String },
    /// Released Awa on the canonical engine, which keeps no enqueue shard: every case is not
    /// applicable, with this reason.
    Unreadable(String),
}

impl Target {
    fn of(db: &DbSetup) -> Self {
        match &db.compat {
            None => Self::Contract,
            Some(_) => match crate::suites::db::compat::storage(db) {
                Ok(Ok(storage)) => Self::Released { storage },
                Ok(Err(why)) | Err(crate::outcome::CaseFailure { message: why, .. }) => {
                    Self::Unreadable(why)
                }
            },
        }
    }

    fn records(&self) -> Records {
        match self {
            Self::Contract => Records::CONTRACT,
            Self::Released { .. } | Self::Unreadable(_) => Records::RELEASED,
        }
    }
}

/// Why `case` cannot be checked on released Awa: it needs what arrives with `insert_job`.
fn released_reason(case: &Case) -> Option<&'static str> {
    const NO_CONCURRENCY: &str = "released Awa has no concurrency key (no digest, no \
        concurrency shard); it arrives with awa.insert_job";
    match &case.kind {
        Kind::Bulk(_) => Some(
            "released Awa has no staged bulk path (bulk_staging, publish_batch: contract §14 \
             arrives with awa.insert_job)",
        ),
        Kind::Route(r) if r.concurrency_key.is_some() => Some(NO_CONCURRENCY),
        Kind::Refusal(RefusalKind::ConcurrencyKeyTooLong)
        | Kind::Refusal(RefusalKind::Keys {
            concurrency_key: Some(_),
            ..
        }) => Some(NO_CONCURRENCY),
        Kind::Refusal(RefusalKind::OrderingKeyTooLong | RefusalKind::Keys { .. }) => Some(
            "released Awa sets no key length limit (ZA003 key_too_long arrives with \
             awa.insert_job)",
        ),
        Kind::Refusal(RefusalKind::UniqueStates(_)) => Some(
            "released insert_job_compat takes unique_states as bit(8), and a text bit string \
             of another length is padded or truncated, never refused (22026 arrives with \
             awa.insert_job)",
        ),
        _ => None,
    }
}

/// A producer and the runner's connection, shared by every producer case of a run.
pub struct Session {
    db: Arc<DbSetup>,
    target: Target,
    timeout: Duration,
    login: ProducerLogin,
    timeout_limit: Mutex<Option<TimeoutLimit>>,
    hello: Mutex<Hello>,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn typed_empty_object() -> Json {
    json!({"type": "object", "value": []})
}

fn base_job(queue: &str) -> Job {
    Job::plain(PROBE_KIND, queue, typed_empty_object())
}

fn base_call(queue: &str) -> RefCall {
    RefCall {
        queue: queue.to_owned(),
        priority: 2,
        run_at: None,
        unique_key: None,
        unique_states: None,
        ordering_key: None,
        concurrency_key: None,
    }
}

fn width(w: i16) -> Width {
    Width::new(i64::from(w))
        .unwrap_or_else(|_| Width::new(1).unwrap_or_else(|_| unreachable_width()))
}

#[expect(clippy::panic, reason = "1 is a valid width; this is never reached")]
fn unreachable_width() -> Width {
    panic!("width 1 refused")
}

fn expected(queue: &str, w: i16, route: Route, ordering_key: Option<&[u8]>) -> Expected {
    Expected {
        queue: queue.to_owned(),
        width: width(w),
        state: "available",
        priority: 2,
        route,
        ordering_key_digest: ordering_key.map(core::concurrency_digest),
        unique_key: None,
        unique_states: None,
        unique_intermediates: None,
        unique_near_misses: Vec::new(),
    }
}

const ROTOR: Route = Route {
    source: RouteSource::Rotor,
    enqueue_shard: None,
    concurrency_digest: None,
};

/// The plan of `case` in the run-scoped namespace `scope` (`awa_conformance_<run>_p<n>_`).
fn plan(case: &Case, scope: &str) -> Plan {
    let q = format!("{scope}q");
    match &case.kind {
        Kind::Route(r) => Plan {
            widths: vec![(q.clone(), i16::from(r.width))],
            steps: vec![route_step(&q, r)],
            lock: None,
        },
        Kind::Unique(u) => {
            let queue = u.by_queue.then_some(q.as_str());
            let key = if u.by_queue {
                core::unique_key(&u.kind, queue, u.args.as_ref(), u.period_bucket)
                    .map(|k| k.to_vec())
                    .unwrap_or_default()
            } else {
                u.vector_key.to_vec()
            };
            let preimage = if u.by_queue {
                core::unique_key_preimage(&u.kind, queue, u.args.as_ref(), u.period_bucket)
                    .unwrap_or_default()
            } else {
                u.preimage.clone()
            };
            let mut job = base_job(&q);
            job.kind.clone_from(&u.kind);
            job.args = u.args_typed.clone().unwrap_or_else(typed_empty_object);
            job.unique = Some(UniqueInputs {
                by_queue: u.by_queue,
                by_args: u.args.is_some(),
                period_bucket: u.period_bucket.map(|p| p.to_string()),
            });
            job.unique_states = Some(UNIQUE_KEY_STATES.to_owned());
            let mut call = base_call(&q);
            call.unique_key = Some(key.clone());
            call.unique_states = Some(UNIQUE_KEY_STATES.to_owned());
            let mut want = expected(&q, 1, ROTOR, None);
            want.unique_key = Some(key.clone());
            want.unique_states = Some(UNIQUE_KEY_STATES.to_owned());
            want.unique_intermediates = Some((u.canonical_args.clone(), preimage));
            want.unique_near_misses =
                judge::near_misses(&u.kind, queue, &q, u.args.as_ref(), u.period_bucket);
            // Not hashing a run-scoped queue, the key is global: serialize across runs. One
            // lock for every global key, not one per key (ADR 0047): a wrong producer stores
            // another vector's global key (1.0 written as 1), and must not meet that vector's
            // case in a concurrent run.
            let lock = (!u.by_queue).then_some((GLOBAL_KEY_LOCK, 0));
            Plan {
                widths: Vec::new(),
                steps: vec![Step {
                    job,
                    call,
                    outcome: Outcome::Stored(Box::new(want)),
                }],
                lock,
            }
        }
        Kind::States {
            mask,
            bits,
            scheduled,
        } => {
            let (job, call, want) = unique_probe(&q, bits, *scheduled);
            let bit = if *scheduled { 1u8 } else { 2u8 };
            let second = if mask & bit != 0 {
                Outcome::Refused(RefusalKind::Duplicate)
            } else {
                Outcome::Stored(Box::new(want.clone()))
            };
            Plan {
                widths: Vec::new(),
                steps: vec![
                    Step {
                        job: job.clone(),
                        call: call.clone(),
                        outcome: Outcome::Stored(Box::new(want)),
                    },
                    Step {
                        job,
                        call,
                        outcome: second,
                    },
                ],
                lock: None,
            }
        }
        Kind::Partition {
            key,
            partitions,
            partition,
        } => {
            let physical = core::physical_queue_name(&q, *partition);
            let mut job = base_job(&q);
            job.priority = Some(3);
            job.ordering_key_hex = Some(hex(key));
            job.partition = Some(PartitionInputs {
                key_hex: hex(key),
                partitions: *partitions,
            });
            let mut call = base_call(&physical);
            call.priority = 3;
            call.ordering_key = Some(key.clone());
            let route = core::route(width(1), Some(key), None).unwrap_or(ROTOR);
            let mut want = expected(&physical, 1, route, Some(key));
            want.priority = 3;
            Plan {
                widths: Vec::new(),
                steps: vec![Step {
                    job,
                    call,
                    outcome: Outcome::Stored(Box::new(want)),
                }],
                lock: None,
            }
        }
        // A bulk case is one batch, run by `Session::run_bulk`, never by steps.
        Kind::Bulk(_) => Plan {
            widths: Vec::new(),
            steps: Vec::new(),
            lock: None,
        },
        Kind::Refusal(kind) => {
            let long = vec![0xabu8; core::MAX_KEY_LEN + 1];
            let refused = |job: Job, call: RefCall| Step {
                job,
                call,
                outcome: Outcome::Refused(kind.clone()),
            };
            let steps = match kind {
                RefusalKind::Duplicate => {
                    let (job, call, want) = unique_probe(&q, UNIQUE_KEY_STATES, false);
                    vec![
                        Step {
                            job: job.clone(),
                            call: call.clone(),
                            outcome: Outcome::Stored(Box::new(want)),
                        },
                        refused(job, call),
                    ]
                }
                RefusalKind::OrderingKeyTooLong => {
                    let mut job = base_job(&q);
                    job.ordering_key_hex = Some(hex(&long));
                    let mut call = base_call(&q);
                    call.ordering_key = Some(long);
                    vec![refused(job, call)]
                }
                RefusalKind::ConcurrencyKeyTooLong => {
                    let mut job = base_job(&q);
                    job.concurrency_key_hex = Some(hex(&long));
                    let mut call = base_call(&q);
                    call.concurrency_key = Some(long);
                    vec![refused(job, call)]
                }
                RefusalKind::Keys {
                    ordering_key,
                    concurrency_key,
                } => {
                    let mut job = base_job(&q);
                    job.ordering_key_hex = ordering_key.as_deref().map(hex);
                    job.concurrency_key_hex = concurrency_key.as_deref().map(hex);
                    let mut call = base_call(&q);
                    call.ordering_key.clone_from(ordering_key);
                    call.concurrency_key.clone_from(concurrency_key);
                    vec![refused(job, call)]
                }
                RefusalKind::UniqueStates(bits) => {
                    let (job, call, _) = unique_probe(&q, bits, false);
                    vec![refused(job, call)]
                }
            };
            Plan {
                widths: Vec::new(),
                steps,
                lock: None,
            }
        }
    }
}

/// The one step of a routing case on `q`: the keys of `r`, judged against its route.
fn route_step(q: &str, r: &cases::RouteCase) -> Step {
    let w = i16::from(r.width);
    let mut job = base_job(q);
    job.ordering_key_hex = r.ordering_key.as_deref().map(hex);
    job.concurrency_key_hex = r.concurrency_key.as_deref().map(hex);
    let mut call = base_call(q);
    call.ordering_key.clone_from(&r.ordering_key);
    call.concurrency_key.clone_from(&r.concurrency_key);
    Step {
        job,
        call,
        outcome: Outcome::Stored(Box::new(expected(
            q,
            w,
            r.expect,
            r.ordering_key.as_deref(),
        ))),
    }
}

/// A unique job on `q` (by queue and args) with `bits` as its states, scheduled or not.
fn unique_probe(q: &str, bits: &str, scheduled: bool) -> (Job, RefCall, Expected) {
    let args = core::Value::Object(Vec::new());
    let key = core::unique_key(PROBE_KIND, Some(q), Some(&args), None)
        .map(|k| k.to_vec())
        .unwrap_or_default();
    let mut job = base_job(q);
    job.unique = Some(UniqueInputs {
        by_queue: true,
        by_args: true,
        period_bucket: None,
    });
    job.unique_states = Some(bits.to_owned());
    job.run_at = scheduled.then(|| FUTURE.to_owned());
    let mut call = base_call(q);
    call.unique_key = Some(key.clone());
    call.unique_states = Some(bits.to_owned());
    call.run_at.clone_from(&job.run_at);
    let mut want = expected(q, 1, ROTOR, None);
    want.state = if scheduled { "scheduled" } else { "available" };
    want.unique_key = Some(key);
    want.unique_states = Some(bits.to_owned());
    want.unique_intermediates = Some((
        Some(b"{}".to_vec()),
        core::unique_key_preimage(PROBE_KIND, Some(q), Some(&args), None).unwrap_or_default(),
    ));
    (job, call, want)
}

/// A database refusal as the reference call saw it.
#[derive(Debug, Clone)]
struct DbRefusal {
    sqlstate: String,
    code: Option<String>,
    message: String,
}

fn refusal_json(r: &DbRefusal) -> Json {
    json!({"sqlstate": r.sqlstate, "code": r.code, "message": r.message})
}

/// Whether a refusal is the one `kind` requires.
fn refusal_ok(kind: &RefusalKind, sqlstate: Option<&str>, code: Option<&str>) -> bool {
    match kind {
        RefusalKind::Duplicate => sqlstate == Some("23505"),
        RefusalKind::OrderingKeyTooLong
        | RefusalKind::ConcurrencyKeyTooLong
        | RefusalKind::Keys { .. } => {
            sqlstate == Some("ZA003") || (sqlstate.is_none() && code == Some("key_too_long"))
        }
        RefusalKind::UniqueStates(_) => {
            sqlstate == Some("22026")
                || (sqlstate.is_none() && code == Some("unique_states_not_8_bits"))
        }
    }
}

fn refusal_wanted(kind: &RefusalKind) -> &'static str {
    match kind {
        RefusalKind::Duplicate => "SQLSTATE 23505 (duplicate unique key)",
        RefusalKind::OrderingKeyTooLong
        | RefusalKind::ConcurrencyKeyTooLong
        | RefusalKind::Keys { .. } => {
            "SQLSTATE ZA003, or a client-side refusal with code key_too_long"
        }
        RefusalKind::UniqueStates(_) => {
            "SQLSTATE 22026, or a client-side refusal with code unique_states_not_8_bits"
        }
    }
}

/// A row of `released_job.sql` as the judge reads it (released Awa records no route source
/// and no ordering key).
fn released_observed(r: &tokio_postgres::Row) -> Observed {
    Observed {
        job_id: r.try_get(0).ok(),
        queue: r.try_get(1).ok(),
        state: r.try_get(2).ok(),
        priority: r.try_get(3).ok(),
        enqueue_shard: r.try_get(4).ok().flatten(),
        route_source: None,
        concurrency_digest: None,
        ordering_key_digest: None,
        unique_key: r.try_get(5).ok().flatten(),
        unique_states: r.try_get(6).ok().flatten(),
    }
}

fn is_harness_error(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(d) => matches!(d.code().code().get(..2), Some("08" | "53" | "57" | "58")),
    }
}

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
        Ok(Arc::new(Self {
            target: Target::of(&db),
            db,
            timeout,
            login,
            timeout_limit: Mutex::new(None),
            hello: Mutex::new(hello),
            inner: Mutex::new(Inner {
                producer,
                client: None,
                seq: 0,
                cases: 0,
                answered: Vec::new(),
                timeouts_in_a_row: 0,
            }),
        }))
    }

    /// After `limit` requests in a row that timed out, call `on_reached` once with a message
    /// naming the count (`--max-consecutive-timeouts`); every later case errors at once
    /// instead of waiting for the timeout again.
    pub fn limit_timeouts(&self, limit: u32, on_reached: OnUnresponsive) {
        *lock(&self.timeout_limit) = Some(TimeoutLimit {
            limit,
            on_reached,
            reached: false,
        });
    }

    /// The message of a run stopped by the timeout limit, once it was reached.
    #[must_use]
    pub fn unresponsive(&self) -> Option<String> {
        let limit = lock(&self.timeout_limit);
        limit
            .as_ref()
            .filter(|l| l.reached)
            .map(|l| unresponsive_message(l.limit, self.timeout))
    }

    /// Count a request's end towards the timeout limit.
    fn count_timeout(&self, inner: &mut Inner, timed_out: bool) {
        if !timed_out {
            inner.timeouts_in_a_row = 0;
            return;
        }
        inner.timeouts_in_a_row += 1;
        let mut slot = lock(&self.timeout_limit);
        if let Some(l) = slot.as_mut() {
            if !l.reached && inner.timeouts_in_a_row >= l.limit {
                l.reached = true;
                (l.on_reached)(unresponsive_message(l.limit, self.timeout));
            }
        }
    }

    /// The producer's hello (the latest, after a restart).
    #[must_use]
    pub fn hello(&self) -> Hello {
        lock(&self.hello).clone()
    }

    /// Why `case` does not apply to this producer, if it does not.
    #[must_use]
    pub fn not_applicable(&self, case: &Case) -> Option<String> {
        match &self.target {
            Target::Contract => {}
            Target::Unreadable(why) => return Some(why.clone()),
            Target::Released { .. } => {
                if let Some(why) = released_reason(case) {
                    return Some(why.to_owned());
                }
            }
        }
        let hello = self.hello();
        if matches!(case.kind, Kind::Bulk(_)) {
            return (!hello.has(BULK_CAPABILITY)).then(|| {
                format!(
                    "producer {} does not declare capability {BULK_CAPABILITY} (staged batches, \
                     docs/contract.md §14)",
                    hello.implementation.name
                )
            });
        }
        let refusal = match &case.kind {
            Kind::Refusal(_) => true,
            Kind::States {
                mask, scheduled, ..
            } => mask & if *scheduled { 1 } else { 2 } != 0,
            _ => false,
        };
        (refusal && !hello.has(ERRORS_CAPABILITY)).then(|| {
            format!(
                "producer {} does not declare capability {ERRORS_CAPABILITY} (cases whose \
                 answer is a refusal)",
                hello.implementation.name
            )
        })
    }

    /// End the producer (`stop`); returns a problem to record, if any.
    pub fn finish(&self) -> Option<String> {
        let mut inner = lock(&self.inner);
        inner.client = None;
        inner.producer.stop().err().map(|e| e.to_string())
    }

    /// Run one case: its steps, then remove every row it created, whatever happened.
    ///
    /// # Errors
    /// A finding, or a harness error (producer fault, database trouble).
    pub fn run(&self, case: &Case) -> Result<Verdict, CaseFailure> {
        let mut inner = lock(&self.inner);
        inner.cases += 1;
        inner.answered.clear();
        let scope = format!("{}_p{}_", self.db.prefix(), inner.cases);
        let plan = plan(case, &scope);
        let outcome = match &case.kind {
            Kind::Bulk(bulk) => self.run_bulk(&mut inner, case, bulk, &scope),
            _ => self.run_plan(&mut inner, case, &plan),
        };
        let cleanup = self.cleanup(&mut inner, &scope, plan.lock);
        let stderr = inner.producer.take_diagnostics();
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
        }
        inner
            .client
            .as_ref()
            .ok_or_else(|| CaseFailure::harness("no connection"))
    }

    /// The message of a case whose unique key a job outside the case holds: that job (id,
    /// queue, key, enqueuing login) and the statement that removes it (ADR 0049). The run
    /// never removes it itself: it is not the run's.
    fn blocked(&self, inner: &mut Inner, key: Option<&[u8]>, refusal: &str) -> String {
        let key_hex = key.map_or_else(|| "NULL".to_owned(), hex);
        let head = format!(
            "a job outside this case already holds the unique key {key_hex} the case needs \
             (insert_job: {refusal})"
        );
        let (Target::Contract, Some(key)) = (&self.target, key) else {
            return format!(
                "{head}; it is not this run's, so the run leaves it: remove the job holding \
                 that key, then rerun"
            );
        };
        let s = self.db.schema.quoted();
        let found = self.client(inner).and_then(|client| {
            self.db
                .pg
                .block_on(client.query_opt(
                    &include_str!("../../sql/blocking_job.sql").replace("@S@", s),
                    &[&key],
                ))
                .map_err(|e| CaseFailure::harness(e.to_string()))?
                .map_err(|e| self.db_err("looking up the job that holds the key", &e))
        });
        match found {
            Ok(Some(row)) => {
                let id: i64 = row.get(0);
                let queue: Option<String> = row.get(1);
                let login: Option<String> = row.get(2);
                format!(
                    "{head}: job {id} in queue {}, enqueued by login {}. It is not this \
                     run's, so the run leaves it. If nothing else needs it, remove it and \
                     rerun:\n  WITH claim AS (DELETE FROM {s}.job_unique_claims WHERE job_id \
                     = {id}) DELETE FROM {s}.contract_jobs WHERE id = {id};",
                    queue
                        .as_deref()
                        .map_or_else(|| "(no job row, only its claim)".to_owned(), sql_literal),
                    login
                        .as_deref()
                        .map_or_else(|| "(unknown)".to_owned(), sql_literal),
                )
            }
            Ok(None) => format!("{head}; no claim holds it any more: rerun"),
            Err(e) => format!("{head}; {}", e.message),
        }
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
        let s = self.db.schema.quoted();
        {
            let client = self.client(inner)?;
            let prepared = self.db.pg.block_on(async {
                if let Some((k1, k2)) = plan.lock {
                    client
                        .query_one(include_str!("../../sql/producer_lock.sql"), &[&k1, &k2])
                        .await
                        .map_err(|e| self.db_err("taking the lock of a global unique key", &e))?;
                }
                for (queue, w) in &plan.widths {
                    client
                        .execute(
                            &include_str!("../../sql/queue_meta_insert.sql").replace("@S@", s),
                            &[queue, w],
                        )
                        .await
                        .map_err(|e| self.db_err("setting queue_meta.enqueue_shards", &e))?;
                }
                Ok::<(), CaseFailure>(())
            });
            prepared.map_err(|e| CaseFailure::harness(e.to_string()))??;
        }
        for step in &plan.steps {
            if let Some(v) = self.run_step(inner, case, step)? {
                return Ok(v);
            }
        }
        Ok(Verdict::Passed)
    }

    /// The reference call in a rolled-back transaction: `insert_job`, or on released Awa
    /// `insert_job_compat` with the job read back from queue storage before the rollback.
    fn reference(
        &self,
        inner: &mut Inner,
        call: &RefCall,
        kind: &str,
    ) -> Result<Result<Observed, DbRefusal>, CaseFailure> {
        let s = self.db.schema.quoted();
        let storage = self.storage()?;
        let client = self.client(inner)?;
        self.db
            .pg
            .block_on(async {
                client
                    .batch_execute("BEGIN")
                    .await
                    .map_err(|e| self.db_err("BEGIN", &e))?;
                let observed = match storage {
                    None => client
                        .query_one(
                            &include_str!("../../sql/insert_job_call.sql").replace("@S@", s),
                            &[
                                &kind,
                                &call.queue,
                                &"{}",
                                &call.priority,
                                &25i16,
                                &call.run_at,
                                &"{}",
                                &Vec::<String>::new(),
                                &call.unique_key,
                                &call.unique_states,
                                &call.ordering_key,
                                &call.concurrency_key,
                                &"{}",
                            ],
                        )
                        .await
                        .map(|r| Observed {
                            job_id: r.try_get(0).ok(),
                            queue: r.try_get(1).ok(),
                            state: r.try_get(2).ok(),
                            priority: r.try_get(3).ok(),
                            enqueue_shard: r.try_get(4).ok(),
                            route_source: r.try_get(5).ok(),
                            concurrency_digest: r.try_get(6).ok().flatten(),
                            ordering_key_digest: None,
                            unique_key: r.try_get(7).ok().flatten(),
                            unique_states: None,
                        }),
                    Some(storage) => self.reference_released(client, storage, call, kind).await,
                };
                client
                    .batch_execute("ROLLBACK")
                    .await
                    .map_err(|e| self.db_err("ROLLBACK", &e))?;
                match observed {
                    Ok(o) => Ok(Ok(o)),
                    Err(e) if is_harness_error(&e) => {
                        Err(self.db_err("the reference insert_job call", &e))
                    }
                    Err(e) => {
                        let d = e.as_db_error();
                        let code = d
                            .and_then(|d| d.detail())
                            .and_then(|t| serde_json::from_str::<Json>(t).ok())
                            .and_then(|j| j.get("code").and_then(Json::as_str).map(str::to_owned));
                        Ok(Err(DbRefusal {
                            sqlstate: d.map(|d| d.code().code().to_owned()).unwrap_or_default(),
                            code,
                            message: d.map(|d| d.message().to_owned()).unwrap_or_default(),
                        }))
                    }
                }
            })
            .map_err(|e| CaseFailure::harness(e.to_string()))?
    }

    /// Released Awa's reference, inside the caller's transaction: `insert_job_compat` bound
    /// as the released SDKs bind it (a job with `run_at` starts `scheduled`), then the job as
    /// queue storage (`storage`, quoted) keeps it.
    async fn reference_released(
        &self,
        client: &Client,
        storage: &str,
        call: &RefCall,
        kind: &str,
    ) -> Result<Observed, tokio_postgres::Error> {
        let state = if call.run_at.is_some() {
            "scheduled"
        } else {
            "available"
        };
        let compat = crate::suites::db::compat::Call {
            kind: kind.to_owned(),
            queue: call.queue.clone(),
            args: "{}".to_owned(),
            state,
            priority: call.priority,
            max_attempts: 25,
            run_at: call.run_at.clone(),
            tags: Vec::new(),
            unique_key: call.unique_key.clone(),
            unique_states: call.unique_states.clone(),
            ordering_key: call.ordering_key.clone(),
        };
        let insert = client
            .prepare(&crate::suites::db::compat::insert_sql(&self.db))
            .await?;
        let job_id = crate::suites::db::compat::insert(client, &insert, &compat)
            .await?
            .job_id;
        let stored = client
            .query_opt(
                &include_str!("../../sql/released_job.sql").replace("@Q@", storage),
                &[&job_id],
            )
            .await?;
        Ok(stored.map(|r| released_observed(&r)).unwrap_or_default())
    }

    /// The quoted queue-storage schema on released Awa, `None` on a contract database.
    fn storage(&self) -> Result<Option<&str>, CaseFailure> {
        match &self.target {
            Target::Contract => Ok(None),
            Target::Released { storage } => Ok(Some(storage)),
            // `not_applicable` keeps every case of such a session from running.
            Target::Unreadable(why) => Err(CaseFailure::harness(why.clone())),
        }
    }

    fn read(&self, inner: &mut Inner, job_id: i64) -> Result<Observed, CaseFailure> {
        let s = self.db.schema.quoted();
        let storage = self.storage()?;
        let client = self.client(inner)?;
        if let Some(storage) = storage {
            let sql = include_str!("../../sql/released_job.sql").replace("@Q@", storage);
            let row = self
                .db
                .pg
                .block_on(client.query_opt(&sql, &[&job_id]))
                .map_err(|e| CaseFailure::harness(e.to_string()))?
                .map_err(|e| self.db_err("reading the stored job from queue storage", &e))?;
            return Ok(row.map(|r| released_observed(&r)).unwrap_or_default());
        }
        let sql = include_str!("../../sql/job_routing_call.sql").replace("@S@", s);
        let row = self
            .db
            .pg
            .block_on(client.query_one(&sql, &[&job_id]))
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| self.db_err("reading the stored job through job_routing", &e))?;
        let get = |e: tokio_postgres::Error| self.db_err("decoding job_routing", &e);
        Ok(Observed {
            job_id: row.try_get(0).map_err(get)?,
            queue: row.try_get(1).map_err(get)?,
            enqueue_shard: row.try_get(2).map_err(get)?,
            route_source: row.try_get(3).map_err(get)?,
            concurrency_digest: row.try_get(4).map_err(get)?,
            ordering_key_digest: row.try_get(5).map_err(get)?,
            unique_key: row.try_get(6).map_err(get)?,
            unique_states: row.try_get(7).map_err(get)?,
            state: row.try_get(8).map_err(get)?,
            priority: row.try_get(9).map_err(get)?,
        })
    }

    /// Ask the producer; a fault is a harness error, after which the producer is restarted.
    fn ask(&self, inner: &mut Inner, case: &Case, job: &Job) -> Result<EnqueueAnswer, CaseFailure> {
        inner.seq += 1;
        let request = EnqueueRequest {
            seq: inner.seq,
            case: case.name.clone(),
            schema: self.db.schema.as_str().to_owned(),
            job: job.clone(),
        };
        self.gave_up()?;
        let answer = inner.producer.enqueue(&request, self.timeout);
        self.count_timeout(inner, matches!(answer, Err(ProducerFault::Timeout(_))));
        if let Ok(EnqueueAnswer::Enqueued { job_id, .. }) = &answer {
            inner.answered.push(*job_id);
        }
        answer.map_err(|fault| self.fault(inner, fault))
    }

    /// Ask the producer for one batch; a fault is a harness error, as in [`Self::ask`].
    fn ask_bulk(
        &self,
        inner: &mut Inner,
        case: &Case,
        jobs: Vec<Job>,
    ) -> Result<BulkAnswer, CaseFailure> {
        inner.seq += 1;
        let request = BulkRequest {
            seq: inner.seq,
            case: case.name.clone(),
            schema: self.db.schema.as_str().to_owned(),
            jobs,
        };
        self.gave_up()?;
        let answer = inner.producer.bulk(&request, self.timeout);
        self.count_timeout(inner, matches!(answer, Err(ProducerFault::Timeout(_))));
        if let Ok(BulkAnswer::Published(ids)) = &answer {
            inner.answered.extend_from_slice(ids);
        }
        answer.map_err(|fault| self.fault(inner, fault))
    }

    /// A harness error instead of a request once the timeout limit was reached.
    fn gave_up(&self) -> Result<(), CaseFailure> {
        match self.unresponsive() {
            Some(message) => Err(CaseFailure::harness(format!("not asked: {message}"))),
            None => Ok(()),
        }
    }

    /// The harness error of a producer fault, after restarting the producer.
    fn fault(&self, inner: &mut Inner, fault: ProducerFault) -> CaseFailure {
        if matches!(fault, ProducerFault::Stopped) {
            return CaseFailure::harness(format!(
                "the run was asked to stop and the producer did not answer the request in flight \
                 within {}s (the grace a case in flight gets to finish)",
                super::process::IN_FLIGHT_GRACE.as_secs()
            ));
        }
        let restarted = match inner.producer.restart() {
            Ok(h) => {
                *lock(&self.hello) = h;
                "restarted".to_owned()
            }
            Err(e) => format!("restart failed too: {e}"),
        };
        CaseFailure::harness(format!(
            "{fault} (the producer was {restarted}; the run goes on)"
        ))
    }

    /// A bulk case: one batch through the producer's `bulk` request (docs/contract.md §14).
    fn run_bulk(
        &self,
        inner: &mut Inner,
        case: &Case,
        bulk: &BulkCase,
        scope: &str,
    ) -> Result<Verdict, CaseFailure> {
        let q = format!("{scope}q");
        match bulk {
            BulkCase::Routes { width, rows } => {
                self.run_plan(
                    inner,
                    case,
                    &Plan {
                        widths: vec![(q.clone(), i16::from(*width))],
                        steps: Vec::new(),
                        lock: None,
                    },
                )?;
                let mut batch = Vec::with_capacity(rows.len());
                for (k, (id, r)) in rows.iter().enumerate() {
                    let step = route_step(&q, r);
                    let Outcome::Stored(want) = &step.outcome else {
                        return Err(CaseFailure::harness("a routing row that expects no job"));
                    };
                    let reference = match self.reference(inner, &step.call, &step.job.kind)? {
                        Ok(o) => o,
                        Err(r) => {
                            return Err(CaseFailure::mismatch(
                                format!(
                                    "row {} (vector {id}): layer: database semantics: insert_job \
                                     itself refuses a valid request (in a rolled-back transaction)",
                                    k + 1
                                ),
                                json!({"outcome": "accepted"}),
                                json!({"insert_job": refusal_json(&r)}),
                            ))
                        }
                    };
                    judge::judge_reference(case, want, &reference, self.target.records())
                        .map_err(|f| at_row(f, k, id))?;
                    batch.push((step.job.clone(), want.clone(), reference));
                }
                let jobs: Vec<Job> = batch.iter().map(|(j, _, _)| j.clone()).collect();
                match self.ask_bulk(inner, case, jobs)? {
                    BulkAnswer::Published(ids) if ids.len() == batch.len() => {
                        for (k, (id, (job_id, (_, want, reference)))) in rows
                            .iter()
                            .map(|(id, _)| id)
                            .zip(ids.iter().zip(&batch))
                            .enumerate()
                        {
                            let stored = self.read(inner, *job_id)?;
                            judge::judge_stored(
                                case,
                                want,
                                &stored,
                                Some(reference),
                                None,
                                self.target.records(),
                            )
                            .map_err(|f| at_row(f, k, id))?;
                        }
                        Ok(Verdict::Passed)
                    }
                    BulkAnswer::Published(ids) => Err(CaseFailure::mismatch(
                        format!(
                            "the producer answered {} job ids for a batch of {} jobs",
                            ids.len(),
                            batch.len()
                        ),
                        json!({"job_ids": batch.len()}),
                        json!({"job_ids": ids}),
                    )),
                    other => bulk_unexpected(other, json!({"outcome": "published"})),
                }
            }
            BulkCase::UniqueConflict => {
                let (dup, _, _) = unique_probe(&q, UNIQUE_KEY_STATES, false);
                let jobs = vec![base_job(&q), dup.clone(), dup];
                let want = json!({"refused": {"sqlstate": "ZA006", "code": "bulk_unique_conflict", "row": 3}});
                match self.ask_bulk(inner, case, jobs)? {
                    BulkAnswer::Refused(r)
                        if r.sqlstate.as_deref() == Some("ZA006")
                            && r.code.as_deref() == Some("bulk_unique_conflict")
                            && r.row == Some(3) =>
                    {
                        let client = self.client(inner)?;
                        let left = self
                            .db
                            .pg
                            .block_on(self.db.count_scope_rows_on(client, scope))
                            .map_err(|e| CaseFailure::harness(e.to_string()))?
                            .map_err(|e| {
                                CaseFailure::harness(format!("counting the case's rows: {e}"))
                            })?;
                        if left == 0 {
                            Ok(Verdict::Passed)
                        } else {
                            Err(CaseFailure::mismatch(
                                format!(
                                    "the batch was refused, but {left} row(s) of it were \
                                     committed: stage and publish in one transaction and roll \
                                     it back on a refusal"
                                ),
                                json!({"rows_left": 0}),
                                json!({"rows_left": left}),
                            ))
                        }
                    }
                    BulkAnswer::Refused(r) => Err(CaseFailure::mismatch(
                        format!(
                            "wrong refusal: {}; required ZA006 bulk_unique_conflict at row 3 \
                             (rows 2 and 3 take the same unique claim)",
                            describe_bulk_refusal(&r)
                        ),
                        want,
                        json!({"refused": r}),
                    )),
                    BulkAnswer::Published(ids) => Err(CaseFailure::mismatch(
                        "layer: SQL call encoding: a batch whose rows 2 and 3 take the same \
                         unique claim was published (the producer sent other unique keys or \
                         states, or did not publish through publish_batch)",
                        want,
                        json!({"job_ids": ids}),
                    )),
                    other => bulk_unexpected(other, want),
                }
            }
        }
    }

    /// One step; `Some(verdict)` ends the case early (skipped by the producer).
    fn run_step(
        &self,
        inner: &mut Inner,
        case: &Case,
        step: &Step,
    ) -> Result<Option<Verdict>, CaseFailure> {
        let reference = self.reference(inner, &step.call, &step.job.kind)?;
        let reference_ok =
            match (&step.outcome, &reference) {
                (Outcome::Stored(want), Ok(r)) => {
                    judge::judge_reference(case, want, r, self.target.records())?;
                    Some(r.clone())
                }
                (Outcome::Stored(_), Err(r)) if r.sqlstate == "23505" => {
                    return Err(CaseFailure::harness(self.blocked(
                        inner,
                        step.call.unique_key.as_deref(),
                        &r.message,
                    )))
                }
                (Outcome::Stored(_), Err(r)) => return Err(CaseFailure::mismatch(
                    "layer: database semantics: insert_job itself refuses a valid request (in a \
                     rolled-back transaction)",
                    json!({"outcome": "accepted"}),
                    json!({"insert_job": refusal_json(r)}),
                )),
                (Outcome::Refused(kind), Err(r))
                    if refusal_ok(kind, Some(&r.sqlstate), r.code.as_deref()) =>
                {
                    None
                }
                (Outcome::Refused(kind), r) => {
                    return Err(CaseFailure::mismatch(
                        format!(
                            "layer: database semantics: insert_job itself does not refuse as \
                         required ({})",
                            refusal_wanted(kind)
                        ),
                        json!({"refused": refusal_wanted(kind)}),
                        json!({"insert_job": match r {
                            Ok(o) => o.to_json(),
                            Err(r) => refusal_json(r),
                        }}),
                    ))
                }
            };
        let answer = self.ask(inner, case, &step.job)?;
        let request = serde_json::to_value(&step.job).unwrap_or(Json::Null);
        match (&step.outcome, answer) {
            (_, EnqueueAnswer::Skipped(reason)) => Ok(Some(Verdict::NotApplicable(format!(
                "skipped by the producer: {reason}"
            )))),
            (_, EnqueueAnswer::Error(msg)) => Err(CaseFailure::mismatch(
                format!("the producer reported an error for this request: {msg}"),
                match &step.outcome {
                    Outcome::Stored(_) => json!({"outcome": "enqueued"}),
                    Outcome::Refused(k) => json!({"refused": refusal_wanted(k)}),
                },
                json!({"error": msg, "request": request}),
            )),
            (Outcome::Stored(want), EnqueueAnswer::Enqueued { job_id, trace }) => {
                let stored = self.read(inner, job_id)?;
                judge::judge_stored(
                    case,
                    want,
                    &stored,
                    reference_ok.as_ref(),
                    trace.as_ref(),
                    self.target.records(),
                )?;
                Ok(None)
            }
            (Outcome::Stored(want), EnqueueAnswer::Refused(r)) => Err(CaseFailure::mismatch(
                format!(
                    "the producer refused a valid request ({})",
                    describe_refusal(&r)
                ),
                json!({"outcome": "enqueued", "expected": want.to_json()}),
                json!({"refused": r, "request": request}),
            )),
            (Outcome::Refused(kind), EnqueueAnswer::Refused(r)) => {
                if refusal_ok(kind, r.sqlstate.as_deref(), r.code.as_deref()) {
                    Ok(None)
                } else {
                    Err(CaseFailure::mismatch(
                        format!(
                            "wrong refusal: {}; required {}",
                            describe_refusal(&r),
                            refusal_wanted(kind)
                        ),
                        json!({"refused": refusal_wanted(kind)}),
                        json!({"refused": r}),
                    ))
                }
            }
            (Outcome::Refused(kind), EnqueueAnswer::Enqueued { job_id, .. }) => {
                let stored = self.read(inner, job_id)?;
                let what = match kind {
                    RefusalKind::UniqueStates(bits) => format!(
                        "layer: SQL call encoding: unique_states '{bits}' was accepted and \
                         stored as {:?} (a ::bit(8) cast padded or truncated it; bind text \
                         through ::varbit so the database refuses it, or refuse it client-side)",
                        stored.unique_states.as_deref().unwrap_or("NULL")
                    ),
                    RefusalKind::Duplicate => "layer: SQL call encoding: the duplicate was \
                        accepted although insert_job refuses the same request: the producer \
                        sent another unique key or states"
                        .to_owned(),
                    _ => "layer: SQL call encoding: a key over 4096 bytes was accepted although \
                          insert_job refuses it: the producer sent other bytes (truncated?)"
                        .to_owned(),
                };
                Err(CaseFailure::mismatch(
                    what,
                    json!({"refused": refusal_wanted(kind)}),
                    json!({"stored": stored.to_json(), "request": request}),
                ))
            }
        }
    }

    /// Remove every row of the case's queues (and their claims), and what the producer's
    /// login wrote anywhere else (ADR 0049), then release its lock.
    fn cleanup(
        &self,
        inner: &mut Inner,
        scope: &str,
        key_lock: Option<(i32, i32)>,
    ) -> Result<(), CaseFailure> {
        let db = Arc::clone(&self.db);
        let answered = std::mem::take(&mut inner.answered);
        let by_login = crate::suites::db::ByLogin {
            run_login: self.login.run_scoped.as_deref(),
            answered: &answered,
            answer_login: self.login.answers.as_deref(),
        };
        let client = self.client(inner)?;
        self.db
            .pg
            .block_on(async {
                db.sweep_case_on(client, scope, by_login)
                    .await
                    .map_err(|e| CaseFailure::harness(format!("removing the case's rows: {e}")))?;
                if let Some((k1, k2)) = key_lock {
                    client
                        .query_one(include_str!("../../sql/producer_unlock.sql"), &[&k1, &k2])
                        .await
                        .map_err(|e| {
                            self.db_err("releasing the lock of a global unique key", &e)
                        })?;
                }
                Ok(())
            })
            .map_err(|e| CaseFailure::harness(e.to_string()))?
    }
}

/// Why a run stopped at `--max-consecutive-timeouts`.
fn unresponsive_message(limit: u32, timeout: Duration) -> String {
    format!(
        "the producer timed out (--adapter-timeout {}s) on {limit} requests in a row, each \
         after a restart (--max-consecutive-timeouts {limit}), so the run stopped and the \
         remaining cases did not run: fix the producer's hang (its stderr is attached to the \
         cases that timed out), or raise --adapter-timeout if it is only slow",
        timeout.as_secs_f64()
    )
}

/// `v` as an SQL string literal, as a message shows a queue or login.
fn sql_literal(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// `f` as the finding of row `k` (0-based) of a batch, from vector `id`.
fn at_row(mut f: CaseFailure, k: usize, id: &str) -> CaseFailure {
    f.message = format!("row {} (vector {id}): {}", k + 1, f.message);
    f
}

/// The verdict of a bulk answer that is a skip, an error or a refusal of a valid batch.
fn bulk_unexpected(answer: BulkAnswer, expected: Json) -> Result<Verdict, CaseFailure> {
    match answer {
        BulkAnswer::Skipped(reason) => Ok(Verdict::NotApplicable(format!(
            "skipped by the producer: {reason}"
        ))),
        BulkAnswer::Error(msg) => Err(CaseFailure::mismatch(
            format!("the producer reported an error for this batch: {msg}"),
            expected,
            json!({"error": msg}),
        )),
        BulkAnswer::Refused(r) => Err(CaseFailure::mismatch(
            format!(
                "the producer refused a valid batch ({})",
                describe_bulk_refusal(&r)
            ),
            expected,
            json!({"refused": r}),
        )),
        BulkAnswer::Published(ids) => Err(CaseFailure::mismatch(
            "the batch was published",
            expected,
            json!({"job_ids": ids}),
        )),
    }
}

fn describe_bulk_refusal(r: &BulkRefusal) -> String {
    format!(
        "sqlstate {}, code {}, row {}: {}",
        r.sqlstate.as_deref().unwrap_or("null"),
        r.code.as_deref().unwrap_or("null"),
        r.row.map_or_else(|| "null".to_owned(), |k| k.to_string()),
        r.message
    )
}

fn describe_refusal(r: &Refusal) -> String {
    format!(
        "sqlstate {}, code {}: {}",
        r.sqlstate.as_deref().unwrap_or("null"),
        r.code.as_deref().unwrap_or("null"),
        r.message
    )
}

/// `message`, then the tail of the producer's stderr when it wrote any.
fn with_stderr(message: &str, stderr: &str) -> String {
    let stderr = stderr.trim_end();
    if stderr.is_empty() {
        return message.to_owned();
    }
    let start = stderr.len().saturating_sub(STDERR_IN_MESSAGE);
    let start = (start..=stderr.len())
        .find(|i| stderr.is_char_boundary(*i))
        .unwrap_or(stderr.len());
    format!(
        "{message}\n  producer stderr:\n{}",
        stderr.get(start..).unwrap_or("")
    )
}
