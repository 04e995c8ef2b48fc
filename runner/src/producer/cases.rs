//! The producer cases built from the vectors (one case = one trial), with what each expects.
//!
//! Names: `producer::<family>::<id>[::w<width>][::<step>]`. Expected values that depend on
//! the run-scoped queue (a unique key that hashes the queue, a physical queue name) are
//! computed by the engine from these inputs with the core, at run time.

use awa_conformance_core::{self as core, Value};
use awa_conformance_vectors::from_hex as unhex;
use awa_conformance_vectors::{Case as VCase, Family, VectorSet};
use serde_json::{json, Value as Json};

use super::SUITE;
use crate::contract::expect;
use crate::contract::expect::exercise::{KIND, MAX_ATTEMPTS, PRIORITY, RUN_AT, RUN_AT_UTC, TAGS};
use crate::protocol::Job;

/// The widths every ordering / concurrency key is enqueued at.
pub const KEY_WIDTHS: [u8; 5] = [1, 2, 7, 8, 64];
/// The `unique_states` masks whose duplicate semantics are checked: none, all, the released
/// default, every single bit and every single bit cleared (so each bit is checked set and
/// clear, for a first job both `scheduled` and `available`).
#[must_use]
pub fn state_masks() -> Vec<u8> {
    let mut m = vec![0u8, 0xff, core::DEFAULT_UNIQUE_STATES];
    for bit in 0..8 {
        m.push(1 << bit);
        m.push(!(1u8 << bit));
    }
    m
}

/// The unique_states a unique_key case binds (the released default).
pub const UNIQUE_KEY_STATES: &str = "11111000";
/// A run_at that makes the first job `scheduled`.
pub const FUTURE: &str = "2999-01-01T00:00:00Z";

/// What a routing case sends and expects: the one expectation's route at a width.
pub use crate::contract::expect::RouteAt as RouteCase;

/// What a unique_key case sends and expects.
#[derive(Debug, Clone)]
pub struct UniqueCase {
    /// Job kind.
    pub kind: String,
    /// Whether the (run-scoped) queue is hashed (the vector has a queue: a derived case).
    pub by_queue: bool,
    /// Typed args when they are hashed.
    pub args_typed: Option<Json>,
    /// The args as a core value when they are hashed.
    pub args: Option<Value>,
    /// Period bucket.
    pub period_bucket: Option<i64>,
    /// The vector's own key, intermediates (when the queue is not hashed they are the
    /// expected values exactly).
    pub vector_key: [u8; core::UNIQUE_KEY_LEN],
    /// The vector's canonical args.
    pub canonical_args: Option<Vec<u8>>,
    /// The vector's pre-image.
    pub preimage: Vec<u8>,
}

/// What an expected refusal is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalKind {
    /// A second job with the same unique inputs: `23505`.
    Duplicate,
    /// An ordering key of 4097 bytes: `ZA003` or the client's `key_too_long`.
    OrderingKeyTooLong,
    /// A concurrency key of 4097 bytes.
    ConcurrencyKeyTooLong,
    /// `unique_states` that is not 8 bits: `22026` or the client's `unique_states_not_8_bits`.
    UniqueStates(&'static str),
    /// A v1.1 rejected routing vector whose keys are over the limit.
    Keys {
        /// The ordering key.
        ordering_key: Option<Vec<u8>>,
        /// The concurrency key.
        concurrency_key: Option<Vec<u8>>,
    },
}

/// The family-specific part of a case.
#[derive(Debug, Clone)]
pub enum Kind {
    /// Enqueue with keys at a width; judge the stored routing.
    Route(RouteCase),
    /// Enqueue with unique inputs; judge the stored key and states.
    Unique(Box<UniqueCase>),
    /// Enqueue A (scheduled or available) then B with the same unique inputs.
    States {
        /// The mask.
        mask: u8,
        /// Its bits.
        bits: String,
        /// Whether A is scheduled (run_at given) rather than available.
        scheduled: bool,
    },
    /// Enqueue to a PartitionedQueue; judge the physical queue.
    Partition {
        /// Partition key.
        key: Vec<u8>,
        /// Partition count.
        partitions: u16,
        /// Expected partition index.
        partition: u16,
        /// Whether the job is also unique by queue: its key hashes the physical queue (§13).
        unique: bool,
    },
    /// Enqueue a job whose payload the case sets; judge every stored field (ADR 0052).
    Payload(Box<PayloadCase>),
    /// The producer must refuse (needs the `errors` capability).
    Refusal(RefusalKind),
    /// One `bulk` request (needs the `bulk` capability): a staged batch (docs/contract.md §14).
    Bulk(BulkCase),
    /// One input class of a request field (docs/contract.md §16): stored as asked, or refused
    /// (then it needs the `errors` capability).
    Field(Box<crate::contract::space::Class>),
}

/// What a payload case sends: a request whose members a careless producer changes, drops or
/// adds. The reference call is the request's one conversion (`InsertJob::of_job`), so a
/// member is named here only in the request.
#[derive(Debug, Clone)]
pub struct PayloadCase {
    /// The request: kind, args (typed form), tags, priority, run_at, and protocol 3's
    /// metadata and max_attempts; its queue is the case's own, set by the plan.
    pub job: Job,
    /// Whether the job is unique by queue and args (its key hashes the canonical args).
    pub unique: bool,
    /// One stored input class of another member, sent on top of the rest (docs/contract.md
    /// §16): the producer fuzzer's draw, so generated args travel with each field's edges.
    pub class: Option<Box<crate::contract::space::Class>>,
}

impl PayloadCase {
    /// A job of `kind` that asks for nothing else: every member its default.
    fn defaults(kind: &str) -> Self {
        Self {
            job: Job::plain(kind, "", json!({"type": "object", "value": []})),
            unique: false,
            class: None,
        }
    }

    /// These defaults with `set` applied to the request.
    fn with(kind: &str, set: impl FnOnce(&mut Job)) -> Self {
        let mut p = Self::defaults(kind);
        set(&mut p.job);
        p
    }
}

/// Metadata a careless producer changes: a null member, an integer beyond i64, a float, and
/// non-ASCII text with U+2028, in the typed form (the SQL suite's metadata also holds numbers
/// the typed form cannot, such as 2^96 and `1.50`).
fn metadata_typed() -> Json {
    json!({"type": "object", "value": [
        ["source", {"type": "string", "value": "awa-conformance"}],
        ["nothing", {"type": "null"}],
        ["big", {"type": "int", "value": "18446744073709551615"}],
        ["ratio", {"type": "float", "value": "1.5", "bits": "3ff8000000000000"}],
        ["note", {"type": "string", "value": "ünï \u{2028}"}]
    ]})
}

/// The args of a payload case built on canonical_json vector `value`: `{"v": value}`, so that
/// every producer (including those whose SDK takes only objects) can send it; `None` when
/// the wrapped value is past the contract's depth (a 128-deep vector). With it, its canonical
/// JSON text.
fn wrapped_args(typed: &Json, value: &Value) -> Option<(Json, String)> {
    let wrapped = Value::Object(vec![("v".to_owned(), value.clone())]);
    let text = String::from_utf8(core::canonical_json(&wrapped).ok()?).ok()?;
    let typed = json!({"type": "object", "value": [["v", typed]]});
    Some((typed, text))
}

/// The payload cases: every canonical_json vector as args (with and without a unique key),
/// with the kind, tags, priority and (every other vector) run_at a careless producer changes,
/// all of which protocol 2 can say; then one case per field protocol 3 adds, one with every
/// field at once, and one with every default.
fn payload_cases(vectors: &VectorSet) -> Vec<Case> {
    let mut out = Vec::new();
    let mut n = 0usize;
    for file in &vectors.files {
        for (i, v) in file.vectors.iter().enumerate() {
            let VCase::CanonicalJson(cj) = &v.case else {
                continue;
            };
            let typed = raw(file, i)
                .get("input")
                .and_then(|i| i.get("value"))
                .cloned()
                .unwrap_or(Json::Null);
            let Some(args) = wrapped_args(&typed, &cj.value) else {
                continue;
            };
            // jsonb cannot hold U+0000: such args are refused by PostgreSQL's own jsonb input
            // (22P05), which `sql::payload::*` checks; no producer can store them.
            if args.1.contains(r"\u0000") {
                continue;
            }
            let payload = PayloadCase::with(KIND, |job| {
                job.args = args.0;
                job.tags = TAGS.iter().map(|t| (*t).to_owned()).collect();
                job.priority = Some(PRIORITY);
                job.run_at = (n % 2 == 0).then(|| RUN_AT_UTC.to_owned());
            });
            n += 1;
            for unique in [false, true] {
                let rest: Vec<String> = if unique {
                    vec!["unique".to_owned()]
                } else {
                    Vec::new()
                };
                out.push(Case {
                    name: name(PAYLOAD_FAMILY, &v.id, &rest),
                    family: PAYLOAD_FAMILY,
                    id: v.id.clone(),
                    description: format!(
                        "{{\"v\": <{}>}} as args{}, with a non-ASCII mixed-case kind, tags out \
                         of order, priority {PRIORITY}{}",
                        v.description,
                        if unique {
                            ", unique by queue and args"
                        } else {
                            ""
                        },
                        if n % 2 == 1 {
                            ", run_at with microseconds"
                        } else {
                            ""
                        },
                    ),
                    vector: raw(file, i),
                    kind: Kind::Payload(Box::new(PayloadCase {
                        unique,
                        ..payload.clone()
                    })),
                });
            }
        }
    }
    let fixed = vec![
        (
            "defaults",
            "every field absent: each default is stored",
            PayloadCase::defaults(KIND),
        ),
        (
            "max_attempts",
            "max_attempts 7 (protocol 3)",
            PayloadCase::with(KIND, |job| {
                job.fields_3_mut().max_attempts = Some(MAX_ATTEMPTS);
            }),
        ),
        (
            "run_at_offset",
            "a run_at with a +05:30 offset and microseconds (protocol 3): the same instant",
            PayloadCase::with(KIND, |job| job.run_at = Some(RUN_AT.to_owned())),
        ),
        (
            "metadata",
            "metadata with a null, an integer beyond i64, a float and non-ASCII text (protocol 3)",
            PayloadCase::with(KIND, |job| {
                job.fields_3_mut().metadata = Some(metadata_typed());
            }),
        ),
        (
            "all",
            "every field at once, unique by queue and args (protocol 3)",
            PayloadCase {
                unique: true,
                ..PayloadCase::with(KIND, |job| {
                    job.args = json!({"type": "object", "value": [
                        ["v", {"type": "string", "value": "all"}]
                    ]});
                    job.tags = TAGS.iter().map(|t| (*t).to_owned()).collect();
                    job.priority = Some(PRIORITY);
                    job.run_at = Some(RUN_AT.to_owned());
                    job.fields_3_mut().metadata = Some(metadata_typed());
                    job.fields_3_mut().max_attempts = Some(MAX_ATTEMPTS);
                })
            },
        ),
    ];
    for (id, description, payload) in fixed {
        out.push(Case {
            name: name(PAYLOAD_FAMILY, id, &[]),
            family: PAYLOAD_FAMILY,
            id: id.to_owned(),
            description: description.to_owned(),
            vector: Json::Null,
            kind: Kind::Payload(Box::new(payload)),
        });
    }
    out
}

/// One case per input class of a request field ([`crate::contract::space`]), every other
/// field at its default: `producer::field::<class>`.
fn field_cases() -> Vec<Case> {
    crate::contract::space::classes()
        .into_iter()
        .map(|class| Case {
            name: name(FIELD_FAMILY, class.id, &[]),
            family: FIELD_FAMILY,
            id: class.id.to_owned(),
            description: format!("{}: {}", class.field.name(), class.what),
            vector: Json::Null,
            kind: Kind::Field(Box::new(class)),
        })
        .collect()
}

/// The family segment of the field cases' names.
pub const FIELD_FAMILY: &str = "field";

/// The family segment of the payload cases' names.
pub const PAYLOAD_FAMILY: &str = "payload";
/// Every how many partition vectors one also gets a unique-by-queue case (`::unique`).
const PARTITION_UNIQUE_EVERY: usize = 8;

/// What a bulk case sends as one batch.
#[derive(Debug, Clone)]
pub enum BulkCase {
    /// Every routing_precedence vector at one width, one job each, in one batch; each stored
    /// job is judged like its own routing case.
    Routes {
        /// The queue's width.
        width: u8,
        /// The vector ID and routing case of each row, in row order.
        rows: Vec<(String, RouteCase)>,
    },
    /// A plain job, then the same unique job twice: refused `ZA006` `bulk_unique_conflict`
    /// naming row 3, and nothing published.
    UniqueConflict,
}

/// One producer case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Trial name.
    pub name: String,
    /// Family segment of the name.
    pub family: &'static str,
    /// The vector ID (or the fixed case name).
    pub id: String,
    /// The vector's description (shown with a failure).
    pub description: String,
    /// The vector's intermediates and expected values as written (shown with a failure).
    pub vector: Json,
    /// What to do.
    pub kind: Kind,
}

impl crate::contract::judge::Subject for Case {
    fn id(&self) -> &str {
        &self.id
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn vector(&self) -> &Json {
        &self.vector
    }
    fn is_partition(&self) -> bool {
        matches!(self.kind, Kind::Partition { .. })
    }
}

impl Case {
    /// Whether the case needs the `errors` capability.
    #[must_use]
    pub fn needs_errors(&self) -> bool {
        match &self.kind {
            Kind::Refusal(_) => true,
            Kind::Field(c) => c.expect != crate::contract::space::Expect::Stored,
            _ => false,
        }
    }
}

/// The raw `input`/`intermediate`/`expected` of vector `i` of a file.
fn raw(file: &awa_conformance_vectors::VectorFile, i: usize) -> Json {
    let v = file
        .json
        .get("vectors")
        .and_then(|v| v.get(i))
        .cloned()
        .unwrap_or(Json::Null);
    json!({
        "input": v.get("input"),
        "intermediate": v.get("intermediate"),
        "expected": v.get("expected"),
    })
}

fn name(family: &str, id: &str, rest: &[String]) -> String {
    let mut n = format!("{SUITE}::{family}::{id}");
    for r in rest {
        n.push_str("::");
        n.push_str(r);
    }
    n
}

/// Every producer case of `vectors`, in a stable order.
#[must_use]
pub fn cases(vectors: &VectorSet) -> Vec<Case> {
    let mut out = Vec::new();
    let mut partition_n = 0usize;
    for file in &vectors.files {
        for (i, v) in file.vectors.iter().enumerate() {
            let family = file.family;
            let fam: &'static str = family.as_str();
            let base = |kind: Kind, name: String| Case {
                name,
                family: fam,
                id: v.id.clone(),
                description: v.description.clone(),
                vector: raw(file, i),
                kind,
            };
            match &v.case {
                VCase::RoutingPrecedence(_)
                | VCase::OrderingShard(_)
                | VCase::ConcurrencyShard(_)
                | VCase::ConcurrencyDigest(_) => {
                    // The one mapping from a vector to its route at each width.
                    for at in expect::routes(&v.case, &KEY_WIDTHS).unwrap_or_default() {
                        let w = format!("w{}", at.width);
                        out.push(base(Kind::Route(at), name(fam, &v.id, &[w])));
                    }
                }
                VCase::UniqueKey(uk) if v.status == awa_conformance_vectors::Status::Normative => {
                    let args_typed = uk.args.as_ref().and_then(|_| {
                        file.json
                            .get("vectors")
                            .and_then(|vs| vs.get(i))
                            .and_then(|r| r.get("input"))
                            .and_then(|r| r.get("args"))
                            .cloned()
                    });
                    out.push(base(
                        Kind::Unique(Box::new(UniqueCase {
                            kind: uk.kind.clone(),
                            by_queue: uk.queue.is_some(),
                            args_typed,
                            args: uk.args.clone(),
                            period_bucket: uk.period_bucket,
                            vector_key: uk.unique_key,
                            canonical_args: uk.canonical_args.clone(),
                            preimage: uk.preimage.clone(),
                        })),
                        name(fam, &v.id, &[]),
                    ));
                }
                VCase::UniqueStates(us) if state_masks().contains(&us.mask) => {
                    for (step, scheduled) in [("scheduled", true), ("available", false)] {
                        out.push(base(
                            Kind::States {
                                mask: us.mask,
                                bits: us.bits.clone(),
                                scheduled,
                            },
                            name(fam, &v.id, &[step.to_owned()]),
                        ));
                    }
                }
                VCase::Partition(pt) => {
                    partition_n += 1;
                    let every = partition_n % PARTITION_UNIQUE_EVERY == 1;
                    for unique in [false, true].into_iter().filter(|u| !u || every) {
                        let rest: Vec<String> = if unique {
                            vec!["unique".to_owned()]
                        } else {
                            Vec::new()
                        };
                        out.push(base(
                            Kind::Partition {
                                key: pt.key.clone(),
                                partitions: pt.partitions,
                                partition: pt.partition,
                                unique,
                            },
                            name(fam, &v.id, &rest),
                        ));
                    }
                }
                VCase::Rejected(rj)
                    if family == Family::RoutingPrecedence
                        && rj.error.as_deref() == Some("key_too_long") =>
                {
                    let input = raw(file, i).get("input").cloned().unwrap_or(Json::Null);
                    let key = |k: &str| input.get(k).and_then(Json::as_str).and_then(unhex);
                    out.push(base(
                        Kind::Refusal(RefusalKind::Keys {
                            ordering_key: key("ordering_key_hex"),
                            concurrency_key: key("concurrency_key_hex"),
                        }),
                        name(fam, &v.id, &[]),
                    ));
                }
                _ => {}
            }
        }
    }
    for (id, kind) in [
        ("duplicate", RefusalKind::Duplicate),
        ("ordering_key_too_long", RefusalKind::OrderingKeyTooLong),
        (
            "concurrency_key_too_long",
            RefusalKind::ConcurrencyKeyTooLong,
        ),
        ("unique_states_4_bits", RefusalKind::UniqueStates("1111")),
        (
            "unique_states_9_bits",
            RefusalKind::UniqueStates("111110000"),
        ),
    ] {
        out.push(Case {
            name: name("refusal", id, &[]),
            family: "refusal",
            id: id.to_owned(),
            description: match &kind {
                RefusalKind::Duplicate => "a second job with the same unique inputs is refused with 23505".to_owned(),
                RefusalKind::OrderingKeyTooLong | RefusalKind::ConcurrencyKeyTooLong => {
                    "a key of 4097 bytes is refused: ZA003 or client-side key_too_long".to_owned()
                }
                RefusalKind::UniqueStates(b) => format!(
                    "unique_states '{b}' is not 8 bits: 22026 or client-side unique_states_not_8_bits (never padded)"
                ),
                RefusalKind::Keys { .. } => String::new(),
            },
            vector: Json::Null,
            kind: Kind::Refusal(kind),
        });
    }
    out.extend(payload_cases(vectors));
    out.extend(field_cases());
    let bulk = bulk_cases(&out);
    out.extend(bulk);
    out
}

/// The bulk cases: one batch per width of the routing_precedence routing cases, and the
/// unique-conflict batch.
fn bulk_cases(single: &[Case]) -> Vec<Case> {
    let mut by_width: std::collections::BTreeMap<u8, Vec<(String, RouteCase)>> =
        std::collections::BTreeMap::new();
    for c in single.iter().filter(|c| c.family == "routing_precedence") {
        if let Kind::Route(r) = &c.kind {
            by_width
                .entry(r.width)
                .or_default()
                .push((c.id.clone(), r.clone()));
        }
    }
    let mut out: Vec<Case> = by_width
        .into_iter()
        .map(|(w, rows)| Case {
            name: name(BULK_FAMILY, "routing_precedence", &[format!("w{w}")]),
            family: BULK_FAMILY,
            id: format!("routing_precedence::w{w}"),
            description: format!(
                "every routing_precedence vector at width {w} ({} rows) as one staged batch",
                rows.len()
            ),
            vector: json!({"rows": rows.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>()}),
            kind: Kind::Bulk(BulkCase::Routes { width: w, rows }),
        })
        .collect();
    out.push(Case {
        name: name(BULK_FAMILY, "unique_conflict", &[]),
        family: BULK_FAMILY,
        id: "unique_conflict".to_owned(),
        description: "a batch whose rows 2 and 3 take the same unique claim: refused ZA006 \
                      bulk_unique_conflict at row 3, nothing published"
            .to_owned(),
        vector: json!({"refused": {"sqlstate": "ZA006", "code": "bulk_unique_conflict", "row": 3}}),
        kind: Kind::Bulk(BulkCase::UniqueConflict),
    });
    out
}

/// The family segment of the bulk cases' names.
pub const BULK_FAMILY: &str = "bulk";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_of_the_vectors() {
        let set = awa_conformance_vectors::embedded().unwrap();
        let all = cases(&set);
        let count = |f: &str| all.iter().filter(|c| c.family == f).count();
        let rp = set
            .iter()
            .filter(|(f, v)| {
                *f == Family::RoutingPrecedence && !matches!(v.case, VCase::Rejected(_))
            })
            .count();
        assert_eq!(
            all.iter()
                .filter(|c| c.family == "routing_precedence" && matches!(c.kind, Kind::Route(_)))
                .count(),
            rp
        );
        let os = set
            .iter()
            .filter(|(f, _)| *f == Family::OrderingShard)
            .count();
        assert_eq!(count("ordering_shard"), os * KEY_WIDTHS.len());
        assert!(count("unique_key") >= 35, "{}", count("unique_key"));
        // Every bit both ways, for both first states.
        let masks = state_masks();
        for bit in 0..8 {
            assert!(masks.iter().any(|m| m & (1 << bit) != 0));
            assert!(masks.iter().any(|m| m & (1 << bit) == 0));
        }
        assert_eq!(count("unique_states"), 2 * masks.len());
        assert!(count("partition") > 90);
        // High bytes and short non-UTF-8 keys are among the keys sent.
        assert!(all.iter().any(|c| matches!(&c.kind, Kind::Route(r)
            if r.ordering_key.as_ref().is_some_and(|k| k.len() < 8 && std::str::from_utf8(k).is_err()))));
        assert!(all.iter().any(|c| matches!(&c.kind, Kind::Route(r)
            if r.concurrency_key.as_ref().is_some_and(|k| k.iter().any(|b| *b >= 0x80)))));
        let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "names are unique");
        // Every routing_precedence routing case is a row of exactly one bulk batch.
        let rows: usize = all
            .iter()
            .filter_map(|c| match &c.kind {
                Kind::Bulk(BulkCase::Routes { rows, .. }) => Some(rows.len()),
                _ => None,
            })
            .sum();
        assert_eq!(rows, rp);
        assert!(all
            .iter()
            .any(|c| c.name == "producer::bulk::unique_conflict"));
    }
}
