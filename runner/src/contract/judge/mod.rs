//! The one judge: every comparison of an answer with what the contract requires.
//!
//! * a stored or returned job against its [`Expectation`], field by field, each mismatch
//!   labelled by the [`Layer`] it comes from ([`judge_stored`], [`judge_reference`],
//!   [`judge_routing`]), with near misses naming the mistake;
//! * a refusal against the one a request must get ([`Refusal`]), and a database error's
//!   fields against the error table ([`Rejection`], [`Member`]);
//! * an error that blames the harness rather than the implementation ([`is_harness_error`],
//!   [`query_fail`]);
//! * a computed answer against a vector's `expected` object ([`answer`]): the adapter
//!   protocol and fuzz;
//! * a program's declared capabilities against the cases it answered ([`coverage`]):
//!   `adapter::coverage` and `producer::coverage`.
//!
//! The SQL suites, the producer engine, the compat suites, fuzz and the adapter comparison
//! all call these; none of them compares on its own.
//!
//! Layers: the database computes routing (digest, shard, source) itself, so a producer can
//! only get routing wrong by sending other bytes, another queue or other states: those are
//! "SQL call encoding" (or "partition" for the physical queue). The unique key is the
//! producer's own computation: canonical JSON, pre-image, digest. When `insert_job` itself
//! disagrees with the vector the layer is "database semantics", whatever the producer did.

use awa_conformance_core::{self as core, Route, Width};
use serde_json::{json, Value as Json};

use super::call::InsertJob;
use super::expect::Expectation;
use crate::outcome::CaseFailure;
pub use crate::protocol::Trace;

pub mod answer;
mod coverage;
mod refusal;

pub use coverage::{coverage, Tally};
pub use refusal::{
    duplicate_claim, query_fail, rejection, Member, Refusal, Rejection, CLAIM_INDEX,
};

pub use crate::outcome::Layer;

pub use super::call::{h, Observed, Stored};
use super::expect::Payload;

/// What the checked database records of a job, so the judge compares only what it can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Records {
    /// The route source (`job_routing.route_source`).
    pub route_source: bool,
    /// The ordering key's digest.
    pub ordering_key: bool,
    /// The routing digest (`job_routing.concurrency_digest`).
    pub concurrency_digest: bool,
    /// An enqueue shard for a job that starts `scheduled`.
    pub scheduled_shard: bool,
}

impl Records {
    /// A contract database: `job_routing` returns all of it.
    pub const CONTRACT: Self = Self {
        route_source: true,
        ordering_key: true,
        concurrency_digest: true,
        scheduled_shard: true,
    };
    /// Released Awa 0.6.x under queue storage: the shard of a ready job only; no route
    /// source, no routing digest, no ordering key (it is consumed into the shard), no shard
    /// while deferred.
    pub const RELEASED: Self = Self {
        route_source: false,
        ordering_key: false,
        concurrency_digest: false,
        scheduled_shard: false,
    };
}

/// What a failure message says about the case being judged: its vector and description.
pub trait Subject {
    /// The vector ID (or the fixed case's name).
    fn id(&self) -> &str;
    /// The vector's description (shown with a failure).
    fn description(&self) -> &str;
    /// The vector's inputs and expected values as written (shown with a failure).
    fn vector(&self) -> &Json;
    /// Whether the case is about a PartitionedQueue's physical queue (a wrong queue is then
    /// the partition layer's).
    fn is_partition(&self) -> bool;
}

/// Errors that say nothing about the implementation: no server error at all (connection
/// closed), SQLSTATE classes 08 (connection), 53 (resources), 57 (operator intervention,
/// e.g. `pg_terminate_backend`, statement timeout) and 58 (system error), and the failures of
/// the runner's own statements beside its other sessions: 40001 (serialization failure) and
/// 55P03 (its `lock_timeout`). The one rule every engine uses to tell a harness error from a
/// finding (ADR 0060: never the runner's fault as the database's or the producer's).
#[must_use]
pub fn is_harness_error(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(d) => is_harness_sqlstate(d.code().code()),
    }
}

/// [`is_harness_error`] for a SQLSTATE alone.
#[must_use]
pub fn is_harness_sqlstate(sqlstate: &str) -> bool {
    matches!(sqlstate.get(..2), Some("08" | "53" | "57" | "58"))
        || matches!(sqlstate, "40001" | "55P03")
}

/// What a harness SQLSTATE means, for the message of a harness error.
#[must_use]
pub fn harness_cause(sqlstate: Option<&str>) -> &'static str {
    match sqlstate.unwrap_or("") {
        "40001" => "a serialization failure of the runner's own statement",
        "55P03" => "the runner's own statement waited past its lock_timeout",
        "57014" => "the runner's own statement ran past its statement_timeout",
        s if s.starts_with("53") => "the server ran out of resources (connections, memory, disk)",
        s if s.starts_with("57") => "the server stopped the session (operator intervention)",
        _ => "the database connection failed",
    }
}

/// Compare an answer with a vector's `expected`: every expected key must be present and
/// equal (extra answer keys are ignored); a rotor's `enqueue_shard: null` accepts null or any
/// shard in `[0, width)` (the core's rule). `who` opens the message ("adapter output", "the
/// database's answer").
///
/// # Errors
/// A [`CaseFailure`] naming the differing members, with the expected and actual objects.
pub fn answer(who: &str, expected: &Json, input: &Json, output: &Json) -> Result<(), CaseFailure> {
    let Some(want) = expected.as_object() else {
        return Err(CaseFailure::harness("vector without an expected object"));
    };
    let mut differs = Vec::new();
    for (k, v) in want {
        let got = output.get(k).unwrap_or(&Json::Null);
        let ok = if k == "enqueue_shard" && v.is_null() {
            let width = Width::new(input.get("width").and_then(Json::as_i64).unwrap_or(1));
            got.is_null()
                || match (got.as_i64(), width) {
                    (Some(s), Ok(w)) => core::shard_admitted(None, s, w),
                    _ => false,
                }
        } else {
            got == v && output.get(k).is_some()
        };
        if !ok {
            differs.push(k.clone());
        }
    }
    if differs.is_empty() {
        return Ok(());
    }
    Err(CaseFailure::mismatch(
        format!("{who} differs in {}", differs.join(", ")),
        expected.clone(),
        output.clone(),
    ))
}

/// The SQL suites' routing judgement of one `insert_job` call: the returned and the stored
/// routing (read back through `job_routing`) both equal `route` at `width`, and the stored
/// job keeps the returned shard. `label` names the call in the message.
///
/// # Errors
/// A mismatch naming which of the two answers differs.
pub fn judge_routing(
    label: &str,
    width: Width,
    route: &Route,
    returned: &Observed,
    stored: &Observed,
) -> Result<(), CaseFailure> {
    let differs = |o: &Observed| route_differs(width, route, o, Records::CONTRACT);
    let returned_ok = differs(returned).is_empty();
    let stored_ok = stored.job_id.is_some()
        && stored.job_id == returned.job_id
        && differs(stored).is_empty()
        && stored.enqueue_shard == returned.enqueue_shard;
    if returned_ok && stored_ok {
        return Ok(());
    }
    let which = match (returned_ok, stored_ok) {
        (false, false) => "returned and stored routing",
        (false, true) => "returned routing",
        _ => "stored routing (job_routing)",
    };
    let view = |o: &Observed| {
        json!({
            "job_id": o.job_id,
            "route_source": o.route_source,
            "enqueue_shard": o.enqueue_shard,
            "concurrency_digest_hex": h(o.concurrency_digest.as_deref()),
        })
    };
    Err(CaseFailure::mismatch(
        format!(
            "{label}: {which} differs from the vector at width {}",
            width.get()
        ),
        super::expect::route_json(width, route),
        json!({"returned": view(returned), "stored": view(stored)}),
    ))
}

/// The row-count rule: a check that asked for `asked` jobs to be stored (refused requests
/// ask for none) finds exactly `found` job rows where it looks. More is a job stored twice,
/// or stored although the request was refused; fewer, an accepted request that stored
/// nothing. `who` names what stored them ("insert_job", "the producer").
///
/// # Errors
/// A payload-layer mismatch naming both counts.
pub fn row_count(asked: usize, found: i64, who: &str) -> Result<(), CaseFailure> {
    if i64::try_from(asked).is_ok_and(|a| a == found) {
        return Ok(());
    }
    let why = if i64::try_from(asked).is_ok_and(|a| found > a) {
        "a job stored more than once, or stored although its request was refused"
    } else {
        "an accepted request that stored no job"
    };
    Err(CaseFailure::at(
        Layer::Payload,
        format!("{who} left {found} job rows for {asked} accepted requests ({why})"),
        json!({"job_rows": asked}),
        json!({"job_rows": found}),
    ))
}

/// The payload rule: the whole stored job (`job_stored`) holds the payload `want` field by
/// field: kind byte for byte, queue, args and metadata as jsonb text (so `1.0` vs `1`, a
/// dropped null or key, a big integer turned float all differ), priority, max_attempts,
/// run_at to the microsecond (or inside the enqueue's window when none was asked), and tags
/// in order. `who` names the writer ("insert_job", "the producer"). Every differing field is
/// named, in that order.
///
/// # Errors
/// A payload-layer mismatch naming each differing field, with both whole jobs.
pub fn judge_payload(who: &str, want: &Payload, got: &Stored) -> Result<(), CaseFailure> {
    let stored = got.payload();
    let wrong: Vec<&str> = want
        .fields
        .iter()
        .filter(|(name, w)| {
            !stored
                .iter()
                .any(|(field, value)| field == name && w.admits(value))
        })
        .map(|(name, _)| *name)
        .collect();
    if wrong.is_empty() {
        return Ok(());
    }
    Err(CaseFailure::at(
        Layer::Payload,
        format!(
            "{who} stored {} other than asked (job {})",
            wrong.join(", "),
            got.routing
                .job_id
                .map_or_else(|| "not readable".to_owned(), |i| i.to_string()),
        ),
        want.to_json(),
        got.to_json(),
    ))
}

/// Whether a job was kept as requested: the queue, priority, initial state and ordering key
/// (as its digest, contract v1.1) come back exactly as `request` asks, both in the result of
/// `insert_job` (`returned`) and as stored (`stored`, read back through `job_routing`).
///
/// # Errors
/// A mismatch showing the request and both answers.
pub fn judge_kept(
    request: &InsertJob,
    returned: &Observed,
    stored: &Observed,
) -> Result<(), CaseFailure> {
    let digest = request
        .ordering_key
        .as_deref()
        .map(super::expect::fallback_digest);
    let want = json!({
        "queue": request.queue,
        "priority": request.priority,
        "state": request.expected_state(),
        "ordering_key_digest_hex": h(digest.as_ref().map(|d| &d[..])),
    });
    let view = |o: &Observed, digest: Json| {
        json!({
            "queue": o.queue,
            "priority": o.priority,
            "state": o.state,
            "ordering_key_digest_hex": digest,
        })
    };
    // insert_job's result carries no ordering-key digest: only the stored one is compared.
    let returned_view = view(returned, h(digest.as_ref().map(|d| &d[..])));
    let stored_view = view(stored, h(stored.ordering_key_digest.as_deref()));
    if returned_view == want && stored_view == want {
        return Ok(());
    }
    Err(CaseFailure::mismatch(
        format!(
            "job {}: queue, priority, state or ordering key not kept as requested",
            returned.job_id.unwrap_or_default()
        ),
        want,
        json!({"returned": returned_view, "stored": stored_view}),
    ))
}

/// Whether `o`'s routing (source, shard, digest) conforms to `want`, as far as `records`.
#[must_use]
pub fn routing_differs(want: &Expectation, o: &Observed, records: Records) -> Vec<&'static str> {
    route_differs(want.width, &want.route, o, records)
}

/// The routing members (source, shard, digest) of `o` that differ from `route` at `width`, as
/// far as `records` go. The shard rule itself is the core's ([`Route::admits`]).
#[must_use]
pub fn route_differs(
    width: Width,
    route: &Route,
    o: &Observed,
    records: Records,
) -> Vec<&'static str> {
    let mut d = Vec::new();
    if records.route_source && o.route_source.as_deref() != Some(route.source.as_str()) {
        d.push("route_source");
    }
    let shard_recorded = records.scheduled_shard || o.state.as_deref() != Some("scheduled");
    if shard_recorded
        && !o
            .enqueue_shard
            .is_some_and(|s| route.admits(i64::from(s), width))
    {
        d.push("enqueue_shard");
    }
    if records.concurrency_digest
        && o.concurrency_digest.as_deref() != route.concurrency_digest.as_ref().map(|d| &d[..])
    {
        d.push("concurrency_digest");
    }
    d
}

/// A failure labelled by layer, with the vector, the three answers and the trace.
fn fail(
    layer: Layer,
    what: &str,
    case: &dyn Subject,
    want: &Expectation,
    stored: &Observed,
    reference: Option<&Observed>,
    trace: Option<&Trace>,
) -> CaseFailure {
    let mut message = what.to_owned();
    if !case.description().is_empty() {
        message.push_str(&format!("\n  vector {}: {}", case.id(), case.description()));
    }
    CaseFailure::at(
        layer,
        message,
        json!({"vector": case.vector(), "expected": want.to_json()}),
        json!({
            "stored": stored.to_json(),
            "insert_job": reference.map(Observed::to_json),
            "trace": trace.map(|t| serde_json::to_value(t).unwrap_or(Json::Null)),
        }),
    )
}

/// Judge `insert_job`'s own answer for the request (rolled back) against the vector: a
/// disagreement is the database's, not the producer's.
///
/// # Errors
/// A [`Layer::DatabaseSemantics`] failure.
pub fn judge_reference(
    case: &dyn Subject,
    want: &Expectation,
    reference: &Observed,
    records: Records,
) -> Result<(), CaseFailure> {
    let mut d = routing_differs(want, reference, records);
    if reference.queue.as_deref() != Some(want.queue.as_str()) {
        d.push("queue");
    }
    if reference.unique_key != want.unique_key {
        d.push("unique_key");
    }
    if d.is_empty() {
        return Ok(());
    }
    Err(fail(
        Layer::DatabaseSemantics,
        &format!(
            "insert_job itself, given the request bound as the contract says, returns another {} \
             than the vector (in a rolled-back transaction)",
            d.join(", ")
        ),
        case,
        want,
        &Observed::default(),
        Some(reference),
        None,
    ))
}

/// Judge the stored job against the vector, naming the layer of the first mismatch.
///
/// # Errors
/// A labelled failure.
pub fn judge_stored(
    case: &dyn Subject,
    want: &Expectation,
    stored: &Observed,
    reference: Option<&Observed>,
    trace: Option<&Trace>,
    records: Records,
) -> Result<(), CaseFailure> {
    let f = |layer: Layer, what: &str| fail(layer, what, case, want, stored, reference, trace);
    if stored.job_id.is_none() {
        // Not an encoding of the request: the job the answer names is not there at all.
        return Err(f(
            Layer::Payload,
            "the database keeps no job with the job_id the producer answered (not committed, \
             another schema, or a made-up id): answer the id insert_job returned, after commit",
        ));
    }
    if stored.queue.as_deref() != Some(want.queue.as_str()) {
        let partition = case.is_partition();
        let traced = trace
            .and_then(|t| t.physical_queue.as_deref())
            .is_some_and(|q| Some(q) == stored.queue.as_deref());
        return Err(f(
            if partition {
                Layer::Partition
            } else {
                Layer::SqlCallEncoding
            },
            &if partition {
                format!(
                    "stored in queue {:?}, the physical queue of the partition key is {:?}{}",
                    stored.queue.as_deref().unwrap_or("NULL"),
                    want.queue,
                    if traced {
                        " (the producer's trace names the queue it stored)"
                    } else {
                        ""
                    }
                )
            } else {
                format!(
                    "stored in queue {:?}, requested {:?}",
                    stored.queue.as_deref().unwrap_or("NULL"),
                    want.queue
                )
            },
        ));
    }
    if records.ordering_key
        && stored.ordering_key_digest.as_deref()
            != want.ordering_key_digest.as_ref().map(|d| &d[..])
    {
        return Err(f(
            Layer::SqlCallEncoding,
            match want.ordering_key_digest {
                Some(_) if stored.ordering_key_digest.is_none() => {
                    "the ordering key was not sent (stored none)"
                }
                Some(_) => {
                    "the stored ordering key is not the requested bytes (sent as text, \
                     re-encoded, or another key); bind it as bytea"
                }
                None => "an ordering key was stored although none was requested",
            },
        ));
    }
    let routing = routing_differs(want, stored, records);
    if routing.contains(&"concurrency_digest") {
        // The database digests what it is given: another digest means other key bytes.
        return Err(f(
            Layer::SqlCallEncoding,
            "the stored concurrency digest is not the digest of the requested key: the \
             concurrency key did not arrive as requested (dropped, sent as text, or re-encoded); \
             bind it as bytea",
        ));
    }
    if routing.contains(&"route_source") {
        return Err(f(
            Layer::Precedence,
            "the stored route_source differs from the vector",
        ));
    }
    if routing.contains(&"enqueue_shard") {
        return Err(f(
            Layer::Shard,
            &format!(
                "the stored enqueue_shard is not admitted at width {}",
                want.width.get()
            ),
        ));
    }
    if stored.unique_states != want.unique_states {
        return Err(f(
            Layer::SqlCallEncoding,
            "the stored unique_states is not the requested bit string (a ::bit(8) cast pads \
             '1111' to '11110000'; bind text through ::varbit)",
        ));
    }
    if stored.unique_key != want.unique_key {
        let (layer, what) = unique_layer(want, stored, trace);
        return Err(f(layer, &what));
    }
    if stored.state.as_deref() != Some(want.state) || stored.priority != Some(want.priority) {
        return Err(f(
            Layer::SqlCallEncoding,
            "the stored state or priority is not what the request asks (run_at or priority \
             not passed as requested)",
        ));
    }
    Ok(())
}

/// The layer of a wrong unique key: from the trace when there is one, else from the
/// near-miss keys.
fn unique_layer(want: &Expectation, stored: &Observed, trace: Option<&Trace>) -> (Layer, String) {
    let stored_key = stored.unique_key.as_deref();
    if want.unique_key.is_some() && stored_key.is_none() {
        return (
            Layer::SqlCallEncoding,
            "no unique key was stored although the request has unique inputs".to_owned(),
        );
    }
    if want.unique_key.is_none() {
        return (
            Layer::SqlCallEncoding,
            "a unique key was stored although the request has no unique inputs".to_owned(),
        );
    }
    if let (Some(t), Some((canonical, preimage))) = (trace, &want.unique_intermediates) {
        let canonical_text = canonical
            .as_ref()
            .map(|c| String::from_utf8_lossy(c).into_owned());
        if let (Some(got), Some(want_c)) = (&t.canonical_args, &canonical_text) {
            if got != want_c {
                return (
                    Layer::CanonicalJson,
                    "the producer's canonical args JSON differs from the vector's (see trace)"
                        .to_owned(),
                );
            }
        }
        if let Some(got) = &t.unique_preimage_hex {
            if *got != awa_conformance_vectors::to_hex(preimage) {
                return (
                    Layer::UniqueKeyPreimage,
                    "the producer's pre-image differs from the vector's (fields, NUL framing, \
                     period bucket as 8 bytes little-endian)"
                        .to_owned(),
                );
            }
        }
        if let Some(got) = &t.unique_key_hex {
            let want_hex = want
                .unique_key
                .as_deref()
                .map(awa_conformance_vectors::to_hex);
            if Some(got) != want_hex.as_ref() {
                return (
                    Layer::Digest,
                    "the pre-image is right but the key is not BLAKE3(pre-image)[0..16]".to_owned(),
                );
            }
            return (
                Layer::SqlCallEncoding,
                "the producer computed the right key but another one was stored (bind it as bytea)"
                    .to_owned(),
            );
        }
    }
    if let Some((what, _)) = want
        .unique_near_misses
        .iter()
        .find(|(_, k)| Some(k.as_slice()) == stored_key)
    {
        return (
            Layer::UniqueKeyPreimage,
            format!("the stored unique key is the key {what}"),
        );
    }
    (
        Layer::UniqueKeyPreimage,
        "the stored unique key differs from the vector's: canonical JSON, pre-image or digest \
         (answer with a trace to name the layer exactly)"
            .to_owned(),
    )
}

/// Keys of near-miss inputs for a unique case: without the period bucket, without the
/// queue, with the queue, without the args.
#[must_use]
pub fn near_misses(
    kind: &str,
    queue: Option<&str>,
    hashed_queue_if_absent: &str,
    args: Option<&core::Value>,
    period: Option<i64>,
) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut push = |what: &str, q: Option<&str>, a: Option<&core::Value>, p: Option<i64>| {
        if let Ok(k) = core::unique_key(kind, q, a, p) {
            out.push((what.to_owned(), k.to_vec()));
        }
    };
    if period.is_some() {
        push("without the period bucket", queue, args, None);
    }
    match queue {
        Some(_) => push("without the queue", None, args, period),
        None => push(
            "with the queue hashed",
            Some(hashed_queue_if_absent),
            args,
            period,
        ),
    }
    if args.is_some() {
        push("without the args", queue, None, period);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use awa_conformance_core::RouteSource;

    #[test]
    fn the_runners_own_failures_are_harness_errors() {
        for s in [
            "08006", "53300", "57014", "57P01", "58030", "40001", "55P03",
        ] {
            assert!(is_harness_sqlstate(s), "{s}");
        }
        // Findings: a refusal, a constraint, a deadlock of the implementation's own locks.
        for s in ["23505", "ZA003", "22026", "40P01", "42883", "P0001"] {
            assert!(!is_harness_sqlstate(s), "{s}");
        }
        assert!(harness_cause(Some("40001")).contains("serialization"));
        assert!(harness_cause(Some("55P03")).contains("lock_timeout"));
        assert!(harness_cause(None).contains("connection"));
    }

    /// A case of the ordering_shard family.
    struct Os(Json);

    impl Subject for Os {
        fn id(&self) -> &str {
            "os-x"
        }
        fn description(&self) -> &str {
            ""
        }
        fn vector(&self) -> &Json {
            &self.0
        }
        fn is_partition(&self) -> bool {
            false
        }
    }

    fn case() -> Os {
        Os(Json::Null)
    }

    fn want() -> Expectation {
        let key = b"k";
        Expectation {
            queue: "q".to_owned(),
            width: Width::new(8).unwrap_or_else(|_| unreachable!()),
            state: "available",
            priority: 2,
            route: Route {
                source: RouteSource::OrderingKey,
                enqueue_shard: Some(3),
                concurrency_digest: Some(core::concurrency_digest(key)),
            },
            ordering_key_digest: Some(core::concurrency_digest(key)),
            unique_key: None,
            unique_states: None,
            unique_intermediates: None,
            unique_near_misses: Vec::new(),
        }
    }

    /// What released Awa keeps of a conforming job: no route source, digests or key.
    fn released(shard: Option<i16>, state: &str) -> Observed {
        Observed {
            job_id: Some(1),
            queue: Some("q".to_owned()),
            state: Some(state.to_owned()),
            priority: Some(2),
            enqueue_shard: shard,
            ..Observed::default()
        }
    }

    #[test]
    fn released_records_skip_only_what_released_awa_does_not_keep() {
        let (c, w) = (case(), want());
        let ok = released(Some(3), "available");
        assert!(judge_stored(&c, &w, &ok, None, None, Records::RELEASED).is_ok());
        // The same row on a contract database lacks route source and digests: a failure.
        assert!(judge_stored(&c, &w, &ok, None, None, Records::CONTRACT).is_err());
        // A wrong shard is caught on released Awa too.
        let off = released(Some(4), "available");
        let f = judge_stored(&c, &w, &off, None, None, Records::RELEASED).unwrap_err();
        assert_eq!(f.layer, Some(Layer::Shard), "{}", f.message);
        assert!(f.text().starts_with("layer: shard: "), "{}", f.text());
        // No shard for a ready job is caught; a deferred job has none yet.
        assert!(judge_stored(
            &c,
            &w,
            &released(None, "available"),
            None,
            None,
            Records::RELEASED
        )
        .is_err());
        let mut scheduled = w.clone();
        scheduled.state = "scheduled";
        assert!(judge_stored(
            &c,
            &scheduled,
            &released(None, "scheduled"),
            None,
            None,
            Records::RELEASED
        )
        .is_ok());
        // The priority is still compared.
        let mut p = ok.clone();
        p.priority = Some(3);
        assert!(judge_stored(&c, &w, &p, None, None, Records::RELEASED).is_err());
        // And the reference is judged with the same records.
        assert!(judge_reference(&c, &w, &ok, Records::RELEASED).is_ok());
        assert!(judge_reference(&c, &w, &off, Records::RELEASED).is_err());
    }
}
