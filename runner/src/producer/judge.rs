//! The judgement of one producer case: what the producer stored, what the vector says, and
//! what `insert_job` itself returns for the same logical request; a mismatch is labelled by
//! the layer it comes from.
//!
//! The database computes routing (digest, shard, source) itself, so a producer can only get
//! routing wrong by sending other bytes, another queue or other states: those are "SQL call
//! encoding" (or "partition" for the physical queue). The unique key is the producer's own
//! computation: canonical JSON, pre-image, digest. When `insert_job` itself disagrees with
//! the vector the layer is "database semantics", whatever the producer did.

use awa_conformance_core::{self as core, Route, Width};
use serde_json::{json, Value as Json};

use super::cases::Case;
use super::wire::Trace;
use crate::outcome::CaseFailure;

/// Where a mismatch comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The canonical args JSON the unique key hashes.
    CanonicalJson,
    /// The unique_key pre-image (fields, framing, period bucket).
    UniqueKeyPreimage,
    /// The hash step (BLAKE3 of the pre-image, or the concurrency digest).
    Digest,
    /// The enqueue shard.
    Shard,
    /// Which routing rule applied.
    Precedence,
    /// The PartitionedQueue physical queue.
    Partition,
    /// The values did not reach `insert_job` as requested (keys as text, dropped keys,
    /// `unique_states` padded by `::bit(8)`, another queue).
    SqlCallEncoding,
    /// `insert_job` itself disagrees with the vector.
    DatabaseSemantics,
}

impl Layer {
    /// The label shown in reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CanonicalJson => "canonical JSON",
            Self::UniqueKeyPreimage => "unique_key pre-image",
            Self::Digest => "digest",
            Self::Shard => "shard",
            Self::Precedence => "precedence",
            Self::Partition => "partition",
            Self::SqlCallEncoding => "SQL call encoding",
            Self::DatabaseSemantics => "database semantics",
        }
    }
}

/// A job as stored (`job_routing`) or as `insert_job` returned it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// `job_id`.
    pub job_id: Option<i64>,
    /// The queue.
    pub queue: Option<String>,
    /// The initial state.
    pub state: Option<String>,
    /// The priority.
    pub priority: Option<i16>,
    /// The enqueue shard.
    pub enqueue_shard: Option<i16>,
    /// The route source.
    pub route_source: Option<String>,
    /// The concurrency digest.
    pub concurrency_digest: Option<Vec<u8>>,
    /// The ordering key's digest (stored only; `None` in `insert_job`'s result).
    pub ordering_key_digest: Option<Vec<u8>>,
    /// The unique key.
    pub unique_key: Option<Vec<u8>>,
    /// The unique states as bit text (stored only).
    pub unique_states: Option<String>,
}

fn h(b: Option<&[u8]>) -> Json {
    b.map_or(Json::Null, |b| {
        Json::String(awa_conformance_vectors::to_hex(b))
    })
}

impl Observed {
    /// The JSON shown in reports.
    #[must_use]
    pub fn to_json(&self) -> Json {
        json!({
            "job_id": self.job_id,
            "queue": self.queue,
            "state": self.state,
            "priority": self.priority,
            "enqueue_shard": self.enqueue_shard,
            "route_source": self.route_source,
            "concurrency_digest_hex": h(self.concurrency_digest.as_deref()),
            "ordering_key_digest_hex": h(self.ordering_key_digest.as_deref()),
            "unique_key_hex": h(self.unique_key.as_deref()),
            "unique_states": self.unique_states,
        })
    }
}

/// What the case expects of the stored job.
#[derive(Debug, Clone)]
pub struct Expected {
    /// The (physical) queue.
    pub queue: String,
    /// The queue's width.
    pub width: Width,
    /// `scheduled` or `available`.
    pub state: &'static str,
    /// The priority.
    pub priority: i16,
    /// The routing.
    pub route: Route,
    /// The digest of the ordering key sent (`None`: none sent).
    pub ordering_key_digest: Option<[u8; 32]>,
    /// The unique key (`None`: none).
    pub unique_key: Option<Vec<u8>>,
    /// The unique states as sent (`None`: none).
    pub unique_states: Option<String>,
    /// The expected canonical args and pre-image (unique cases), for the layer and report.
    pub unique_intermediates: Option<(Option<Vec<u8>>, Vec<u8>)>,
    /// Keys computed from near-miss inputs (e.g. without the period bucket), each with what
    /// it means: a stored key equal to one of them names the mistake.
    pub unique_near_misses: Vec<(String, Vec<u8>)>,
}

impl Expected {
    /// The JSON shown in reports.
    #[must_use]
    pub fn to_json(&self) -> Json {
        let w = self.width.get();
        let (canonical, preimage) = match &self.unique_intermediates {
            Some((c, p)) => (
                c.as_ref().map_or(Json::Null, |c| {
                    Json::String(String::from_utf8_lossy(c).into_owned())
                }),
                h(Some(p)),
            ),
            None => (Json::Null, Json::Null),
        };
        json!({
            "queue": self.queue,
            "width": w,
            "state": self.state,
            "priority": self.priority,
            "enqueue_shard": self.route.enqueue_shard.map_or_else(
                || Json::String(format!("any in [0, {w})")), |s| json!(s)),
            "route_source": self.route.source.as_str(),
            "concurrency_digest_hex": h(self.route.concurrency_digest.as_ref().map(|d| &d[..])),
            "ordering_key_digest_hex": h(self.ordering_key_digest.as_ref().map(|d| &d[..])),
            "unique_key_hex": h(self.unique_key.as_deref()),
            "unique_states": self.unique_states,
            "canonical_args": canonical,
            "unique_preimage_hex": preimage,
        })
    }
}

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

/// Whether `o`'s routing (source, shard, digest) conforms to `want`, as far as `records`.
fn routing_differs(want: &Expected, o: &Observed, records: Records) -> Vec<&'static str> {
    let mut d = Vec::new();
    if records.route_source && o.route_source.as_deref() != Some(want.route.source.as_str()) {
        d.push("route_source");
    }
    let shard_recorded = records.scheduled_shard || o.state.as_deref() != Some("scheduled");
    if shard_recorded
        && !o
            .enqueue_shard
            .is_some_and(|s| want.route.admits(i64::from(s), want.width))
    {
        d.push("enqueue_shard");
    }
    if records.concurrency_digest
        && o.concurrency_digest.as_deref() != want.route.concurrency_digest.as_ref().map(|d| &d[..])
    {
        d.push("concurrency_digest");
    }
    d
}

/// A failure labelled by layer, with the vector, the three answers and the trace.
fn fail(
    layer: Layer,
    what: &str,
    case: &Case,
    want: &Expected,
    stored: &Observed,
    reference: Option<&Observed>,
    trace: Option<&Trace>,
) -> CaseFailure {
    let mut message = format!("layer: {}: {what}", layer.as_str());
    if !case.description.is_empty() {
        message.push_str(&format!("\n  vector {}: {}", case.id, case.description));
    }
    CaseFailure::mismatch(
        message,
        json!({"vector": case.vector, "expected": want.to_json()}),
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
    case: &Case,
    want: &Expected,
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
    case: &Case,
    want: &Expected,
    stored: &Observed,
    reference: Option<&Observed>,
    trace: Option<&Trace>,
    records: Records,
) -> Result<(), CaseFailure> {
    let f = |layer: Layer, what: &str| fail(layer, what, case, want, stored, reference, trace);
    if stored.job_id.is_none() {
        return Err(f(
            Layer::SqlCallEncoding,
            "the database keeps no job with the job_id the producer answered (not committed, \
             another schema, or a made-up id)",
        ));
    }
    if stored.queue.as_deref() != Some(want.queue.as_str()) {
        let partition = case.family == "partition";
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
fn unique_layer(want: &Expected, stored: &Observed, trace: Option<&Trace>) -> (Layer, String) {
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
    use crate::producer::cases::{Kind, RefusalKind};
    use awa_conformance_core::RouteSource;

    fn case() -> Case {
        Case {
            name: "producer::ordering_shard::os-x::w8".to_owned(),
            family: "ordering_shard",
            id: "os-x".to_owned(),
            description: String::new(),
            vector: Json::Null,
            kind: Kind::Refusal(RefusalKind::Duplicate),
        }
    }

    fn want() -> Expected {
        let key = b"k";
        Expected {
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
        assert!(f.message.contains("layer: shard"), "{}", f.message);
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
