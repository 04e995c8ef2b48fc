//! What a producer case does, carried by the case itself: its steps (each an enqueue request,
//! the reference `insert_job` call for the same logical request, and the outcome it must end
//! in), the queue widths and lock it needs, and what it needs of the target and the producer
//! ([`Need`]). The engine only runs a plan; whether a case applies, and why not, comes from
//! its needs, never from its name.

use awa_conformance_vectors::to_hex as hex;

use awa_conformance_core::{self as core, Route, RouteSource, Width};
use serde_json::{json, Value as Json};

use super::cases::{self, Case, Kind, RefusalKind, FUTURE, UNIQUE_KEY_STATES};
use crate::contract::call::InsertJob;
use crate::contract::expect::{self, Expectation};
use crate::contract::features::Feature;
use crate::contract::judge;
use crate::contract::space::Expect;
use crate::outcome::CaseFailure;
use crate::protocol::{Job, PartitionInputs, UniqueInputs};

/// The kind every probe job has.
pub const PROBE_KIND: &str = "awa_conformance.probe";
/// The advisory lock (`GLOBAL_KEY_LOCK`, 0) that serializes the cases of global unique keys
/// across concurrent runs ("awak"; ADR 0047).
pub const GLOBAL_KEY_LOCK: i32 = 0x6177_616b;

/// What a case needs beyond a contract database and a producer that enqueues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The producer's `errors` capability: the case's answer is a refusal.
    Errors,
    /// The producer's `bulk` capability and the staged bulk path (§14).
    Bulk,
    /// A concurrency key: digest and concurrency shard (contract v1, not released Awa).
    ConcurrencyKey,
    /// The 4096-byte key limit (ZA003, contract v1).
    KeyLimit,
    /// `unique_states` bound as text and refused when not 8 bits (22026, contract v1).
    TextUniqueStates,
}

impl Case {
    /// The declared capability whose cases this one counts among (`producer::coverage`):
    /// `bulk`, `errors` (an expected refusal) or `enqueue`.
    #[must_use]
    pub fn capability(&self) -> &'static str {
        match &self.kind {
            Kind::Bulk(_) => crate::protocol::BULK_CAPABILITY,
            Kind::Refusal(_) => crate::protocol::ERRORS_CAPABILITY,
            Kind::Field(_) if self.needs_errors() => crate::protocol::ERRORS_CAPABILITY,
            _ => crate::protocol::ENQUEUE_CAPABILITY,
        }
    }

    /// The features this case checks ([`Feature`]): what the run's verdict names per
    /// feature (ADR 0062). Decided by what the case sends, never by its name.
    #[must_use]
    pub fn features(&self) -> Vec<Feature> {
        match &self.kind {
            Kind::Route(r) => vec![match (&r.ordering_key, &r.concurrency_key) {
                (Some(_), None) => Feature::OrderingKey,
                (None, Some(_)) => Feature::ConcurrencyKey,
                // Both keys (the ordering key wins) or neither (the rotor).
                _ => Feature::Precedence,
            }],
            Kind::Unique(_) | Kind::States { .. } => vec![Feature::Uniqueness],
            Kind::Partition { unique, .. } => {
                let mut f = vec![Feature::Partitions];
                if *unique {
                    f.push(Feature::Uniqueness);
                }
                f
            }
            Kind::Payload(p) => {
                let mut f = vec![Feature::Payload];
                if p.unique {
                    f.push(Feature::Uniqueness);
                }
                f
            }
            Kind::Refusal(_) => vec![Feature::Refusals],
            Kind::Field(_) if self.needs_errors() => vec![Feature::Refusals],
            Kind::Field(_) => vec![Feature::Payload],
            Kind::Bulk(_) => vec![Feature::Bulk],
        }
    }

    /// What this case needs ([`Need`]).
    #[must_use]
    pub fn needs(&self) -> Vec<Need> {
        let mut n = Vec::new();
        match &self.kind {
            Kind::Bulk(_) => n.push(Need::Bulk),
            Kind::Route(r) if r.concurrency_key.is_some() => n.push(Need::ConcurrencyKey),
            Kind::States {
                mask, scheduled, ..
            } if expect::claims(*mask, if *scheduled { "scheduled" } else { "available" }) => {
                n.push(Need::Errors);
            }
            Kind::Refusal(kind) => {
                n.push(Need::Errors);
                match kind {
                    RefusalKind::ConcurrencyKeyTooLong => {
                        n.extend([Need::ConcurrencyKey, Need::KeyLimit]);
                    }
                    RefusalKind::Keys {
                        concurrency_key, ..
                    } => {
                        if concurrency_key.is_some() {
                            n.push(Need::ConcurrencyKey);
                        }
                        n.push(Need::KeyLimit);
                    }
                    RefusalKind::OrderingKeyTooLong => n.push(Need::KeyLimit),
                    RefusalKind::UniqueStates(_) => n.push(Need::TextUniqueStates),
                    RefusalKind::Duplicate => {}
                }
            }
            Kind::Field(_) if self.needs_errors() => n.push(Need::Errors),
            _ => {}
        }
        n
    }
}

impl Case {
    /// Why a producer that said `hello` cannot be sent this case's requests, if it cannot:
    /// one of them asks for a member or form its protocol does not define (ADR 0053).
    #[must_use]
    pub fn not_expressible(&self, hello: &crate::protocol::Hello) -> Option<String> {
        // The plan's requests do not depend on the scope's name, only on the case.
        let plan = self.plan(EXPRESSIBLE_SCOPE).ok()?;
        plan.steps
            .iter()
            .find_map(|step| step.job.not_expressible(hello))
    }
}

/// The scope a plan is built in only to look at its requests.
const EXPRESSIBLE_SCOPE: &str = "awa_conformance_0_p0_";

impl RefusalKind {
    /// The refusal the contract requires for this kind ([`judge::Refusal`]).
    #[must_use]
    pub fn refusal(&self) -> judge::Refusal {
        match self {
            Self::Duplicate => judge::Refusal::Duplicate,
            Self::OrderingKeyTooLong | Self::ConcurrencyKeyTooLong | Self::Keys { .. } => {
                judge::Refusal::KeyTooLong
            }
            Self::UniqueStates(_) => judge::Refusal::UniqueStatesNot8Bits,
        }
    }
}

pub use crate::contract::expect::Outcome;

/// One enqueue of a case.
#[derive(Debug, Clone)]
pub struct Step {
    /// The request the producer gets.
    pub job: Job,
    /// The same logical request as the reference `insert_job` call.
    pub call: InsertJob,
    /// What it must end in.
    pub outcome: Outcome,
}

/// Everything a case does.
#[derive(Debug)]
pub struct Plan {
    /// `queue_meta` rows to create first.
    pub widths: Vec<(String, i16)>,
    /// The enqueues, in order (none for a bulk case: it is one batch).
    pub steps: Vec<Step>,
    /// The advisory lock of a global unique key.
    pub lock: Option<(i32, i32)>,
}

impl Step {
    /// A step sending `job`, whose reference call is its one conversion
    /// ([`InsertJob::of_job`]): the producer and the reference get the same logical request.
    ///
    /// # Errors
    /// A harness error when the request does not convert (the case built it).
    pub fn of(job: Job, outcome: Outcome) -> Result<Self, CaseFailure> {
        let call = call_of(&job)?;
        Ok(Self { job, call, outcome })
    }
}

/// The reference call of `job` ([`InsertJob::of_job`]); a request that does not convert is
/// the harness's bug.
fn call_of(job: &Job) -> Result<InsertJob, CaseFailure> {
    InsertJob::of_job(job).map_err(|e| CaseFailure::harness(format!("the case's request: {e}")))
}

impl Plan {
    /// One step on a queue without a `queue_meta` row.
    fn one(step: Step) -> Self {
        Self {
            widths: Vec::new(),
            steps: vec![step],
            lock: None,
        }
    }

    /// One enqueue of `job` on a queue without a `queue_meta` row, which must be stored as
    /// `want`.
    fn stored(job: Job, want: Expectation) -> Result<Self, CaseFailure> {
        Ok(Self::one(Step::of(job, Outcome::Stored(Box::new(want)))?))
    }

    /// One enqueue of `job`, stored with the state and priority its reference call asks for
    /// (a case whose request sets them field by field: payload and field classes).
    fn stored_as_asked(job: Job, want: Expectation) -> Result<Self, CaseFailure> {
        let call = call_of(&job)?;
        let want = Expectation {
            state: call.expected_state(),
            priority: call.priority,
            ..want
        };
        Ok(Self::one(Step {
            job,
            call,
            outcome: Outcome::Stored(Box::new(want)),
        }))
    }
}

/// `{}` in the typed form of the producer protocol.
#[must_use]
pub fn typed_empty_object() -> Json {
    json!({"type": "object", "value": []})
}

/// A plain probe job on `queue` with empty args.
#[must_use]
pub fn base_job(queue: &str) -> Job {
    Job::plain(PROBE_KIND, queue, typed_empty_object())
}

/// A case's width as the core's type; an invalid one is the harness's bug, never width 1.
fn width(w: i16) -> Result<Width, CaseFailure> {
    Width::new(i64::from(w)).map_err(|e| CaseFailure::harness(format!("case width {w}: {e}")))
}

/// What a job on `queue` of width `w` routed as `route` must be.
fn expected(
    queue: &str,
    w: i16,
    route: Route,
    ordering_key: Option<&[u8]>,
) -> Result<Expectation, CaseFailure> {
    Ok(Expectation::routed(queue, width(w)?, route, ordering_key))
}

/// A core computation the case depends on failed: the harness's bug (the inputs are the
/// vectors'), never an empty key.
fn core_err(what: &str, e: &core::Error) -> CaseFailure {
    CaseFailure::harness(format!("{what}: {e}"))
}

const ROTOR: Route = Route {
    source: RouteSource::Rotor,
    enqueue_shard: None,
    concurrency_digest: None,
};

impl Case {
    /// The plan of this case in the run-scoped namespace `scope`
    /// (`awa_conformance_<run>_p<n>_`).
    ///
    /// # Errors
    /// A harness error when a core computation on the vector's inputs fails.
    pub fn plan(&self, scope: &str) -> Result<Plan, CaseFailure> {
        plan(self, scope)
    }
}

fn plan(case: &Case, scope: &str) -> Result<Plan, CaseFailure> {
    let q = format!("{scope}q");
    match &case.kind {
        Kind::Route(r) => Ok(Plan {
            widths: vec![(q.clone(), i16::from(r.width))],
            steps: vec![route_step(&q, r)?],
            lock: None,
        }),
        Kind::Unique(u) => {
            let queue = u.by_queue.then_some(q.as_str());
            // The expectation is the vector's (its own key and intermediates) unless the
            // run-scoped queue is hashed; the reference call computes its key from the
            // request's inputs, so the two meet only when both are right.
            let key = if u.by_queue {
                core::unique_key(&u.kind, queue, u.args.as_ref(), u.period_bucket)
                    .map_err(|e| core_err("the unique key of the case's queue", &e))?
                    .to_vec()
            } else {
                u.vector_key.to_vec()
            };
            let preimage = if u.by_queue {
                core::unique_key_preimage(&u.kind, queue, u.args.as_ref(), u.period_bucket)
                    .map_err(|e| core_err("the unique key pre-image of the case's queue", &e))?
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
            let mut want = expected(&q, 1, ROTOR, None)?;
            want.unique_key = Some(key);
            want.unique_states = Some(UNIQUE_KEY_STATES.to_owned());
            want.unique_intermediates = Some((u.canonical_args.clone(), preimage));
            want.unique_near_misses =
                judge::near_misses(&u.kind, queue, &q, u.args.as_ref(), u.period_bucket);
            // Not hashing a run-scoped queue, the key is global: serialize across runs. One
            // lock for every global key, not one per key (ADR 0047): a wrong producer stores
            // another vector's global key (1.0 written as 1), and must not meet that vector's
            // case in a concurrent run.
            let lock = (!u.by_queue).then_some((GLOBAL_KEY_LOCK, 0));
            Ok(Plan {
                lock,
                ..Plan::stored(job, want)?
            })
        }
        Kind::States {
            mask,
            bits,
            scheduled,
        } => {
            let (job, want) = unique_probe(&q, bits, *scheduled)?;
            let first = if *scheduled { "scheduled" } else { "available" };
            let second = if expect::claims(*mask, first) {
                Outcome::Refused(judge::Refusal::Duplicate)
            } else {
                Outcome::Stored(Box::new(want.clone()))
            };
            Ok(Plan {
                widths: Vec::new(),
                steps: vec![
                    Step::of(job.clone(), Outcome::Stored(Box::new(want)))?,
                    Step::of(job, second)?,
                ],
                lock: None,
            })
        }
        Kind::Partition {
            key,
            partitions,
            partition,
            unique,
        } => {
            // The physical queue is the vector's; the reference call derives its own from
            // the request's partition inputs (§13).
            let physical = core::physical_queue_name(&q, *partition);
            let mut job = base_job(&q);
            job.priority = Some(3);
            job.ordering_key_hex = Some(hex(key));
            job.partition = Some(PartitionInputs {
                key_hex: hex(key),
                partitions: *partitions,
            });
            let route = core::route(width(1)?, Some(key), None)
                .map_err(|e| core_err("the route of the partition key", &e))?;
            let mut want = expected(&physical, 1, route, Some(key))?;
            want.priority = 3;
            if *unique {
                // By queue: the key hashes the physical queue, never the logical one (§13).
                unique_by_queue(&mut job, &mut want, (&physical, &q), false)?;
            }
            Plan::stored(job, want)
        }
        Kind::Payload(p) => {
            let mut job = p.job.clone();
            job.queue.clone_from(&q);
            // A stored class of another member on top (the producer fuzzer's draw): the
            // request and the expectation follow what it sends, the queue included.
            if let Some(class) = &p.class {
                class.apply(&mut job);
            }
            let stored_on = job.queue.clone();
            let mut want = expected(&stored_on, 1, ROTOR, None)?;
            if p.unique {
                unique_by_queue(&mut job, &mut want, (&stored_on, &stored_on), true)?;
            }
            Plan::stored_as_asked(job, want)
        }
        Kind::Field(class) => {
            let mut job = base_job(&q);
            class.apply(&mut job);
            match class.expect {
                Expect::Stored => {
                    let want = expected(&job.queue, 1, ROTOR, None)?;
                    Plan::stored_as_asked(job, want)
                }
                Expect::Refused(_) => Ok(Plan::one(Step::of(
                    job,
                    Outcome::Refused(judge::Refusal::OutOfDomain),
                )?)),
            }
        }
        // A bulk case is one batch, run by `Session::run_bulk`, never by steps.
        Kind::Bulk(_) => Ok(Plan {
            widths: Vec::new(),
            steps: Vec::new(),
            lock: None,
        }),
        Kind::Refusal(kind) => {
            let long = hex(&vec![0xabu8; core::MAX_KEY_LEN + 1]);
            let refused = |job: Job| Step::of(job, Outcome::Refused(kind.refusal()));
            let keyed = |ordering: Option<String>, concurrency: Option<String>| {
                let mut job = base_job(&q);
                job.ordering_key_hex = ordering;
                job.concurrency_key_hex = concurrency;
                refused(job)
            };
            let steps = match kind {
                RefusalKind::Duplicate => {
                    let (job, want) = unique_probe(&q, UNIQUE_KEY_STATES, false)?;
                    vec![
                        Step::of(job.clone(), Outcome::Stored(Box::new(want)))?,
                        refused(job)?,
                    ]
                }
                RefusalKind::OrderingKeyTooLong => vec![keyed(Some(long), None)?],
                RefusalKind::ConcurrencyKeyTooLong => vec![keyed(None, Some(long))?],
                RefusalKind::Keys {
                    ordering_key,
                    concurrency_key,
                } => vec![keyed(
                    ordering_key.as_deref().map(hex),
                    concurrency_key.as_deref().map(hex),
                )?],
                RefusalKind::UniqueStates(bits) => {
                    let (job, _) = unique_probe(&q, bits, false)?;
                    vec![refused(job)?]
                }
            };
            Ok(Plan {
                widths: Vec::new(),
                steps,
                lock: None,
            })
        }
    }
}

/// The one step of a routing case on `q`: the keys of `r`, judged against its route.
///
/// # Errors
/// A harness error for a width outside 1..=64.
pub fn route_step(q: &str, r: &cases::RouteCase) -> Result<Step, CaseFailure> {
    let w = i16::from(r.width);
    let mut job = base_job(q);
    job.ordering_key_hex = r.ordering_key.as_deref().map(hex);
    job.concurrency_key_hex = r.concurrency_key.as_deref().map(hex);
    Step::of(
        job,
        Outcome::Stored(Box::new(expected(
            q,
            w,
            r.route,
            r.ordering_key.as_deref(),
        )?)),
    )
}

/// Make `job` unique by queue (and by its args when `by_args`), with the released default
/// states: `want` expects the key that hashes `queues.0`, the queue the job is stored on (for
/// a partitioned job the physical queue, never the logical `queues.1`), its intermediates,
/// and names the near misses.
///
/// # Errors
/// A harness error when the core cannot compute the key.
fn unique_by_queue(
    job: &mut Job,
    want: &mut Expectation,
    queues: (&str, &str),
    by_args: bool,
) -> Result<(), CaseFailure> {
    let (stored_on, logical) = queues;
    let args = if by_args {
        Some(
            awa_conformance_vectors::decode_typed(&job.args, "args")
                .map_err(|e| CaseFailure::harness(format!("the case's args: {e}")))?,
        )
    } else {
        None
    };
    let args = args.as_ref();
    let key = core::unique_key(&job.kind, Some(stored_on), args, None)
        .map_err(|e| core_err("the case's unique key", &e))?
        .to_vec();
    let preimage = core::unique_key_preimage(&job.kind, Some(stored_on), args, None)
        .map_err(|e| core_err("the case's unique key pre-image", &e))?;
    let canonical = match args {
        Some(a) => {
            Some(core::canonical_json(a).map_err(|e| core_err("the case's canonical args", &e))?)
        }
        None => None,
    };
    job.unique = Some(UniqueInputs {
        by_queue: true,
        by_args,
        period_bucket: None,
    });
    job.unique_states = Some(UNIQUE_KEY_STATES.to_owned());
    want.unique_key = Some(key);
    want.unique_states = Some(UNIQUE_KEY_STATES.to_owned());
    want.unique_intermediates = Some((canonical, preimage));
    want.unique_near_misses = judge::near_misses(&job.kind, Some(stored_on), logical, args, None);
    if logical != stored_on {
        if let Ok(k) = core::unique_key(&job.kind, Some(logical), args, None) {
            want.unique_near_misses.push((
                "with the logical queue hashed instead of the physical queue: contract section 13"
                    .to_owned(),
                k.to_vec(),
            ));
        }
    }
    Ok(())
}

/// A unique job on `q` (by queue and args) with `bits` as its states, scheduled or not, and
/// what it must be stored as.
///
/// # Errors
/// A harness error when the core cannot compute the probe's key.
pub fn unique_probe(
    q: &str,
    bits: &str,
    scheduled: bool,
) -> Result<(Job, Expectation), CaseFailure> {
    let args = core::Value::Object(Vec::new());
    let key = core::unique_key(PROBE_KIND, Some(q), Some(&args), None)
        .map_err(|e| core_err("the probe's unique key", &e))?
        .to_vec();
    let mut job = base_job(q);
    job.unique = Some(UniqueInputs {
        by_queue: true,
        by_args: true,
        period_bucket: None,
    });
    job.unique_states = Some(bits.to_owned());
    job.run_at = scheduled.then(|| FUTURE.to_owned());
    let mut want = expected(q, 1, ROTOR, None)?;
    want.state = if scheduled { "scheduled" } else { "available" };
    want.unique_key = Some(key);
    want.unique_states = Some(bits.to_owned());
    want.unique_intermediates = Some((
        Some(b"{}".to_vec()),
        core::unique_key_preimage(PROBE_KIND, Some(q), Some(&args), None)
            .map_err(|e| core_err("the probe's pre-image", &e))?,
    ));
    Ok((job, want))
}
