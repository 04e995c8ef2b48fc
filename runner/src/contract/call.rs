//! The call layer: one builder, binder and decoder for every contract function the kit calls.
//!
//! * `insert_job` ([`InsertJob`], [`insert`], [`Inserted`]): the README's prepared-statement
//!   form, every one of the 13 arguments explicit and bound in one place ([`InsertJob::params`]),
//!   built from a producer's logical request by the one conversion ([`InsertJob::of_job`]);
//! * `job_routing` ([`read`], [`Observed`]) and `job_stored` ([`stored`], [`Stored`]), with the
//!   payload a worker receives field by field, asked ([`InsertJob::asks`]) and stored
//!   ([`Stored::payload`]), in the one order [`PAYLOAD_FIELDS`];
//! * the signatures the catalog must show ([`INSERT_JOB_ARG_NAMES`], [`RESULT_COLUMNS`], ...);
//! * released Awa's `insert_job_compat` ([`CompatCall`], [`compat_insert`], [`CompatReturned`]),
//!   with or without `p_ordering_key` as the release has it, and the released read-back from
//!   queue storage ([`released_job`]).
//!
//! Every engine (the SQL suites, the producer engine's reference call and read-back, fuzz, the
//! compat suites) goes through these, so a contract function is bound and decoded the same
//! way everywhere. Decoding errors are returned, never swallowed: a column of the wrong type is
//! an error naming the call, not a default value.

use serde_json::{json, Value as Json};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row};

mod compat;
mod exec;
mod routing;

pub use compat::{compat_insert, compat_insert_sql, released_job, CompatCall, CompatReturned};
pub use exec::{
    clock, clock_with, insert, insert_sql, insert_sql_in, read, read_many, read_sql, read_sql_in,
    stored, stored_many, stored_sql_in, CLOCK_SQL,
};
pub use routing::{h, Inserted, Observed};

use super::expect::Want;
use crate::protocol::Job;
use awa_conformance_core as core;

// The contract functions' signatures, as the catalog must show them (preflight and
// `sql::catalog::*` compare them): beside the binder (`InsertJob::params`) and the decoders,
// so an argument or column is added here once.

/// D7 argument names of `insert_job`, in order.
pub const INSERT_JOB_ARG_NAMES: [&str; 13] = [
    "p_kind",
    "p_queue",
    "p_args",
    "p_priority",
    "p_max_attempts",
    "p_run_at",
    "p_metadata",
    "p_tags",
    "p_unique_key",
    "p_unique_states",
    "p_ordering_key",
    "p_concurrency_key",
    "p_opts",
];

/// D7 argument types (`format_type`, typmods are not stored for arguments).
pub const INSERT_JOB_ARG_TYPES: [&str; 13] = [
    "text",
    "text",
    "jsonb",
    "smallint",
    "smallint",
    "timestamp with time zone",
    "jsonb",
    "text[]",
    "bytea",
    "bit varying",
    "bytea",
    "bytea",
    "jsonb",
];

/// D7 `insert_job_result` columns.
pub const RESULT_COLUMNS: [(&str, &str); 8] = [
    ("job_id", "bigint"),
    ("queue", "text"),
    ("state", "text"),
    ("priority", "smallint"),
    ("enqueue_shard", "smallint"),
    ("route_source", "text"),
    ("concurrency_digest", "bytea"),
    ("unique_key", "bytea"),
];

/// `job_stored_row` columns (contract revision 1.2, ADR 0052).
pub const STORED_COLUMNS: [(&str, &str); 17] = [
    ("job_id", "bigint"),
    ("kind", "text"),
    ("queue", "text"),
    ("args", "text"),
    ("priority", "smallint"),
    ("max_attempts", "smallint"),
    ("run_at", "timestamp with time zone"),
    ("state", "text"),
    ("metadata", "text"),
    ("tags", "text[]"),
    ("enqueue_shard", "smallint"),
    ("route_source", "text"),
    ("concurrency_digest", "bytea"),
    ("ordering_key_digest", "bytea"),
    ("unique_key", "bytea"),
    ("unique_states", "text"),
    ("enqueued_by", "text"),
];

/// D7 `job_routing_row` columns.
pub const ROUTING_COLUMNS: [(&str, &str); 10] = [
    ("job_id", "bigint"),
    ("queue", "text"),
    ("state", "text"),
    ("priority", "smallint"),
    ("enqueue_shard", "smallint"),
    ("route_source", "text"),
    ("concurrency_digest", "bytea"),
    ("ordering_key_digest", "bytea"),
    ("unique_key", "bytea"),
    ("unique_states", "text"),
];

/// A `run_at` far in the future: the job starts `scheduled`.
pub const FUTURE: &str = "2999-01-01T00:00:00Z";

/// A `run_at` in the past: the job still starts `scheduled` (§10 rule 3, as released).
pub const PAST: &str = "2000-01-01T00:00:00Z";

/// The initial state §10 rule 3 gives a request (contract v1.1, as released): `scheduled`
/// whenever `run_at` is given, even in the past, else `available`.
#[must_use]
pub fn initial_state(run_at_given: bool) -> &'static str {
    if run_at_given {
        "scheduled"
    } else {
        "available"
    }
}

/// One `insert_job` call with every argument explicit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertJob {
    /// `p_kind`.
    pub kind: String,
    /// `p_queue`.
    pub queue: String,
    /// `p_args`, JSON text.
    pub args: String,
    /// `p_priority`.
    pub priority: i16,
    /// `p_max_attempts`.
    pub max_attempts: i16,
    /// `p_run_at`, timestamptz text (`None`: SQL NULL, the job is `available`).
    pub run_at: Option<String>,
    /// `p_metadata`, JSON text.
    pub metadata: String,
    /// `p_tags`.
    pub tags: Vec<String>,
    /// `p_unique_key`.
    pub unique_key: Option<Vec<u8>>,
    /// `p_unique_states`, bit text bound through `::varbit` (so a wrong length is refused).
    pub unique_states: Option<String>,
    /// `p_ordering_key`.
    pub ordering_key: Option<Vec<u8>>,
    /// `p_concurrency_key`.
    pub concurrency_key: Option<Vec<u8>>,
    /// `p_opts`, JSON text.
    pub opts: String,
}

impl InsertJob {
    /// A request of `kind` with the contract defaults on `queue`.
    #[must_use]
    pub fn new(kind: &str, queue: &str) -> Self {
        Self {
            kind: kind.to_owned(),
            queue: queue.to_owned(),
            args: "{}".to_owned(),
            priority: 2,
            max_attempts: 25,
            run_at: None,
            metadata: "{}".to_owned(),
            tags: Vec::new(),
            unique_key: None,
            unique_states: None,
            ordering_key: None,
            concurrency_key: None,
            opts: "{}".to_owned(),
        }
    }

    /// The call a conforming producer makes for the logical request `job` (the producer
    /// protocol's one request type): the physical queue of a partitioned job (§13), the args
    /// and metadata as canonical JSON text, the unique key computed from its inputs (hashing
    /// the physical queue when by queue), the keys as bytes, and each absent member its
    /// default. The one conversion from a request to its bound call, so the reference call
    /// and the producer are sent the same logical request by construction.
    ///
    /// # Errors
    /// A member that does not decode (typed args or metadata, a hex key, a partition count or
    /// period bucket), naming it: the harness built the request, so it is the harness's bug.
    pub fn of_job(job: &Job) -> Result<Self, String> {
        let bytes = |hex: &Option<String>, what: &str| {
            hex.as_deref()
                .map(|h| {
                    awa_conformance_vectors::from_hex(h)
                        .ok_or_else(|| format!("job.{what} is not lowercase hex"))
                })
                .transpose()
        };
        let args = awa_conformance_vectors::decode_typed(&job.args, "job.args")?;
        let text = |v: &core::Value, what: &str| {
            core::canonical_json(v)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| format!("job.{what} has no canonical JSON text"))
        };
        let ordering_key = bytes(&job.ordering_key_hex, "ordering_key_hex")?;
        let queue = match &job.partition {
            None => job.queue.clone(),
            Some(p) => {
                let key = awa_conformance_vectors::from_hex(&p.key_hex)
                    .ok_or("job.partition.key_hex is not lowercase hex")?;
                let n = core::Partitions::new(i64::from(p.partitions))
                    .map_err(|e| format!("job.partition.partitions: {e}"))?;
                core::physical_queue_name(&job.queue, core::partition_for_ordering_key(&key, n))
            }
        };
        let unique_key = match &job.unique {
            None => None,
            Some(u) => {
                let bucket = u
                    .period_bucket
                    .as_deref()
                    .map(str::parse::<i64>)
                    .transpose()
                    .map_err(|e| format!("job.unique.period_bucket: {e}"))?;
                let key = core::unique_key(
                    &job.kind,
                    u.by_queue.then_some(queue.as_str()),
                    u.by_args.then_some(&args),
                    bucket,
                )
                .map_err(|e| format!("job.unique: {e}"))?;
                Some(key.to_vec())
            }
        };
        let defaults = Self::new(&job.kind, &queue);
        Ok(Self {
            args: text(&args, "args")?,
            priority: job.priority.unwrap_or(defaults.priority),
            max_attempts: job.max_attempts().unwrap_or(defaults.max_attempts),
            run_at: job.run_at.clone(),
            metadata: match job.metadata() {
                Some(m) => text(
                    &awa_conformance_vectors::decode_typed(m, "job.metadata")?,
                    "metadata",
                )?,
                None => defaults.metadata.clone(),
            },
            tags: job.tags.clone(),
            unique_key,
            unique_states: job.unique_states.clone(),
            ordering_key,
            concurrency_key: bytes(&job.concurrency_key_hex, "concurrency_key_hex")?,
            opts: job.opts.to_string(),
            ..defaults
        })
    }

    /// The ordering and concurrency keys.
    #[must_use]
    pub fn keys(mut self, ordering: Option<&[u8]>, concurrency: Option<&[u8]>) -> Self {
        self.ordering_key = ordering.map(<[u8]>::to_vec);
        self.concurrency_key = concurrency.map(<[u8]>::to_vec);
        self
    }

    /// `p_opts`.
    #[must_use]
    pub fn opts(mut self, opts: &serde_json::Value) -> Self {
        self.opts = opts.to_string();
        self
    }

    /// `p_run_at`.
    #[must_use]
    pub fn run_at(mut self, at: &str) -> Self {
        self.run_at = Some(at.to_owned());
        self
    }

    /// `p_priority`.
    #[must_use]
    pub fn priority(mut self, priority: i16) -> Self {
        self.priority = priority;
        self
    }

    /// The payload besides kind and queue: `p_args`, `p_max_attempts`, `p_metadata` (JSON
    /// text) and `p_tags`.
    #[must_use]
    pub fn payload(mut self, args: &str, max_attempts: i16, metadata: &str, tags: &[&str]) -> Self {
        args.clone_into(&mut self.args);
        self.max_attempts = max_attempts;
        metadata.clone_into(&mut self.metadata);
        self.tags = tags.iter().map(|t| (*t).to_owned()).collect();
        self
    }

    /// `p_unique_key` and `p_unique_states`.
    #[must_use]
    pub fn unique(mut self, key: Option<&[u8]>, states: Option<&str>) -> Self {
        self.unique_key = key.map(<[u8]>::to_vec);
        self.unique_states = states.map(str::to_owned);
        self
    }

    /// The initial state this request must get ([`initial_state`]).
    #[must_use]
    pub fn expected_state(&self) -> &'static str {
        initial_state(self.run_at.is_some())
    }

    /// The 13 parameters of `insert_job_call.sql`, in order: the only place they are bound.
    #[must_use]
    pub fn params(&self) -> [&(dyn ToSql + Sync); 13] {
        [
            &self.kind,
            &self.queue,
            &self.args,
            &self.priority,
            &self.max_attempts,
            &self.run_at,
            &self.metadata,
            &self.tags,
            &self.unique_key,
            &self.unique_states,
            &self.ordering_key,
            &self.concurrency_key,
            &self.opts,
        ]
    }
}

impl InsertJob {
    /// This request's columns of a `bulk_staging` row (docs/contract.md §14) as COPY text, in
    /// `bulk_copy.sql`'s order (`None`: NULL): every parameter but `p_opts`, bound the way
    /// [`InsertJob::params`] binds it.
    #[must_use]
    pub fn staged(&self) -> [Option<String>; 12] {
        [
            Some(self.kind.clone()),
            Some(self.queue.clone()),
            Some(self.args.clone()),
            Some(self.priority.to_string()),
            Some(self.max_attempts.to_string()),
            self.run_at.clone(),
            Some(self.metadata.clone()),
            Some(text_array(&self.tags)),
            self.unique_key.as_deref().map(bytea_text),
            self.unique_states.clone(),
            self.ordering_key.as_deref().map(bytea_text),
            self.concurrency_key.as_deref().map(bytea_text),
        ]
    }
}

/// bytea input syntax (hex format).
#[must_use]
pub fn bytea_text(b: &[u8]) -> String {
    format!("\\x{}", awa_conformance_vectors::to_hex(b))
}

/// A `text[]` literal with every element quoted.
fn text_array(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    format!("{{{}}}", quoted.join(","))
}

/// The payload a worker receives (docs/contract.md §15), in the one order the payload rule
/// names a differing field and reports show them: what [`InsertJob::asks`] asks and
/// [`Stored::payload`] reads back, each field once.
pub const PAYLOAD_FIELDS: [&str; 8] = [
    "kind",
    "queue",
    "args",
    "priority",
    "max_attempts",
    "run_at",
    "metadata",
    "tags",
];

impl InsertJob {
    /// The payload this call asks for, field by field in [`PAYLOAD_FIELDS`]' order, given what
    /// the server made of its args, metadata and run_at (`asked`: jsonb texts and the UTC text
    /// of `run_at`, if any) and the clock readings around the call (a request without
    /// `run_at` runs at the moment it was enqueued).
    #[must_use]
    pub fn asks(&self, asked: Asked, clock: (&str, &str)) -> Vec<(&'static str, Want)> {
        let (args, metadata, run_at) = asked;
        vec![
            ("kind", Want::Is(json!(self.kind))),
            ("queue", Want::Is(json!(self.queue))),
            ("args", Want::Is(json!(args))),
            ("priority", Want::Is(json!(self.priority))),
            ("max_attempts", Want::Is(json!(self.max_attempts))),
            (
                "run_at",
                run_at.map_or_else(
                    || Want::Between(clock.0.to_owned(), clock.1.to_owned()),
                    |t| Want::Is(json!(t)),
                ),
            ),
            ("metadata", Want::Is(json!(metadata))),
            ("tags", Want::Is(json!(self.tags))),
        ]
    }
}

/// What `job_stored` reads back: the whole stored job (contract revision 1.2, ADR 0052): its
/// routing, as `job_routing` gives it, and the payload a worker receives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stored {
    /// The routing columns, the job id, queue, state and priority (`job_routing`'s).
    pub routing: Observed,
    /// The kind, byte for byte.
    pub kind: Option<String>,
    /// The args as jsonb's text.
    pub args: Option<String>,
    /// The attempts allowed.
    pub max_attempts: Option<i16>,
    /// `run_at` as UTC text to the microsecond (`YYYY-MM-DDTHH:MI:SS.ffffffZ`).
    pub run_at: Option<String>,
    /// The metadata as jsonb's text.
    pub metadata: Option<String>,
    /// The tags, in stored order.
    pub tags: Option<Vec<String>>,
    /// The login that enqueued it (`session_user` at enqueue).
    pub enqueued_by: Option<String>,
}

impl Stored {
    /// Decode one row of `job_stored_call.sql`: `job_routing_call.sql`'s ten columns, then
    /// the payload's.
    ///
    /// # Errors
    /// A column of another type than the contract's.
    pub fn decode(row: &Row) -> Result<Self, tokio_postgres::Error> {
        Ok(Self {
            routing: Observed::decode(row)?,
            kind: row.try_get(10)?,
            args: row.try_get(11)?,
            max_attempts: row.try_get(12)?,
            run_at: row.try_get(13)?,
            metadata: row.try_get(14)?,
            tags: row.try_get(15)?,
            enqueued_by: row.try_get(16)?,
        })
    }

    /// The payload as stored, field by field in [`PAYLOAD_FIELDS`]' order (a NULL column is
    /// JSON null): what the payload rule compares with what was asked.
    #[must_use]
    pub fn payload(&self) -> Vec<(&'static str, Json)> {
        let r = &self.routing;
        vec![
            ("kind", json!(self.kind)),
            ("queue", json!(r.queue)),
            ("args", json!(self.args)),
            ("priority", json!(r.priority)),
            ("max_attempts", json!(self.max_attempts)),
            ("run_at", json!(self.run_at)),
            ("metadata", json!(self.metadata)),
            ("tags", json!(self.tags)),
        ]
    }

    /// The JSON shown in reports: the payload, the job id, its state and who enqueued it.
    #[must_use]
    pub fn to_json(&self) -> Json {
        let mut o: serde_json::Map<String, Json> = self
            .payload()
            .into_iter()
            .map(|(name, v)| (name.to_owned(), v))
            .collect();
        o.insert("job_id".to_owned(), json!(self.routing.job_id));
        o.insert("state".to_owned(), json!(self.routing.state));
        o.insert("enqueued_by".to_owned(), json!(self.enqueued_by));
        Json::Object(o)
    }
}

/// What the server makes of one request's payload: its args and metadata as jsonb text, and
/// its run_at as UTC text to the microsecond (`None`: none asked).
pub type Asked = (String, String, Option<String>);

/// What the server itself makes of the payload `reqs` ask for (`payload_asked.sql`): per
/// request, its args and metadata as jsonb text and its run_at as UTC text (`None`: none
/// asked); and the server's clock before any of them is enqueued. An args or metadata text
/// that is not JSON is the harness's error (the runner never sends one to be stored).
///
/// # Errors
/// The server's error.
pub async fn asked(
    client: &Client,
    reqs: &[InsertJob],
) -> Result<(Vec<Asked>, String), tokio_postgres::Error> {
    asked_with(client, ASKED_SQL, reqs).await
}

/// The statement of [`asked`] (`payload_asked.sql`), for callers that prepare it once.
pub const ASKED_SQL: &str = include_str!("../../sql/payload_asked.sql");
/// [`asked`] through `statement`: [`ASKED_SQL`] or that statement prepared.
///
/// # Errors
/// The server's error.
pub async fn asked_with<T: ?Sized + tokio_postgres::ToStatement>(
    client: &Client,
    statement: &T,
    reqs: &[InsertJob],
) -> Result<(Vec<Asked>, String), tokio_postgres::Error> {
    let args: Vec<&str> = reqs.iter().map(|r| r.args.as_str()).collect();
    let metadata: Vec<&str> = reqs.iter().map(|r| r.metadata.as_str()).collect();
    let run_at: Vec<Option<&str>> = reqs.iter().map(|r| r.run_at.as_deref()).collect();
    let rows = client
        .query(statement, &[&args, &metadata, &run_at])
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    let mut clock = None;
    for row in &rows {
        out.push((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?));
        clock.get_or_insert(row.try_get::<_, String>(3)?);
    }
    Ok((out, clock.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::super::expect::Payload;
    use super::super::judge::judge_payload;
    use super::*;
    use crate::outcome::Layer;

    // The payload list's own test, beside it: a new field is added to it here.
    #[test]
    fn the_payload_rule_names_each_field_stored_other_than_asked() {
        let asked = InsertJob::new("k", "q").run_at("2031-01-01T00:00:00Z");
        let want = Payload::asked(
            &asked,
            (
                "{}".to_owned(),
                "{}".to_owned(),
                Some("2031-01-01T00:00:00.000000Z".to_owned()),
            ),
            ("", ""),
        );
        let names: Vec<&str> = want.fields.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, PAYLOAD_FIELDS);
        let right = Stored {
            routing: Observed {
                job_id: Some(1),
                queue: Some("q".to_owned()),
                priority: Some(2),
                ..Observed::default()
            },
            kind: Some("k".to_owned()),
            args: Some("{}".to_owned()),
            max_attempts: Some(25),
            run_at: Some("2031-01-01T00:00:00.000000Z".to_owned()),
            metadata: Some("{}".to_owned()),
            tags: Some(Vec::new()),
            enqueued_by: None,
        };
        let names: Vec<&str> = right.payload().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, PAYLOAD_FIELDS);
        assert!(judge_payload("p", &want, &right).is_ok());
        // Each field changed alone is named alone, in its layer.
        type Wrong = (&'static str, fn(&mut Stored));
        let wrongs: [Wrong; 8] = [
            ("kind", |s| s.kind = Some("K".to_owned())),
            ("queue", |s| s.routing.queue = None),
            ("args", |s| s.args = Some("{\"a\": 1}".to_owned())),
            ("priority", |s| s.routing.priority = Some(3)),
            ("max_attempts", |s| s.max_attempts = Some(7)),
            ("run_at", |s| {
                s.run_at = Some("2031-01-01T00:00:00.000001Z".to_owned())
            }),
            ("metadata", |s| s.metadata = None),
            ("tags", |s| s.tags = Some(vec!["t".to_owned()])),
        ];
        for (field, wrong) in wrongs {
            let mut got = right.clone();
            wrong(&mut got);
            let f = judge_payload("p", &want, &got).unwrap_err();
            assert_eq!(f.layer, Some(Layer::Payload));
            assert_eq!(
                f.message,
                format!("p stored {field} other than asked (job 1)")
            );
        }
        // A run_at not asked is any instant inside the enqueue's window.
        let window = Payload::asked(
            &InsertJob::new("k", "q"),
            ("{}".to_owned(), "{}".to_owned(), None),
            ("2031-01-01T00:00:00.000000Z", "2031-01-01T00:00:01.000000Z"),
        );
        assert!(judge_payload("p", &window, &right).is_ok());
        let mut late = right.clone();
        late.run_at = Some("2031-01-01T00:00:01.000001Z".to_owned());
        assert!(judge_payload("p", &window, &late).is_err());
    }

    #[test]
    fn the_reference_call_is_what_a_conforming_producer_binds() {
        use crate::protocol::{PartitionInputs, UniqueInputs};
        let empty = json!({"type": "object", "value": []});
        // Every member absent: the contract defaults.
        let plain = Job::plain("k", "q", empty.clone());
        assert_eq!(InsertJob::of_job(&plain), Ok(InsertJob::new("k", "q")));
        // A partitioned job unique by queue: stored on, and hashing, the physical queue.
        let key = b"order-7".to_vec();
        let n = core::Partitions::new(8).unwrap_or_else(|e| panic!("{e}"));
        let physical = core::physical_queue_name("q", core::partition_for_ordering_key(&key, n));
        assert_ne!(
            physical, "q",
            "a key of partition 0 would not tell the queues apart"
        );
        let mut job = plain.clone();
        job.ordering_key_hex = Some(awa_conformance_vectors::to_hex(&key));
        job.partition = Some(PartitionInputs {
            key_hex: awa_conformance_vectors::to_hex(&key),
            partitions: 8,
        });
        job.unique = Some(UniqueInputs {
            by_queue: true,
            by_args: true,
            period_bucket: Some("-3".to_owned()),
        });
        job.unique_states = Some("11111000".to_owned());
        job.priority = Some(4);
        job.fields_3_mut().max_attempts = Some(9);
        job.fields_3_mut().metadata = Some(json!({"type": "object", "value": [
            ["b", {"type": "int", "value": "1"}], ["a", {"type": "null"}]
        ]}));
        let call = InsertJob::of_job(&job).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(call.queue, physical);
        let args = core::Value::Object(Vec::new());
        let want = core::unique_key("k", Some(&physical), Some(&args), Some(-3))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(call.unique_key, Some(want.to_vec()));
        assert_eq!(call.ordering_key, Some(key));
        assert_eq!((call.priority, call.max_attempts), (4, 9));
        assert_eq!(call.metadata, r#"{"a":null,"b":1}"#);
        assert_eq!(call.unique_states.as_deref(), Some("11111000"));
        // A member that does not decode names itself.
        let mut bad = plain;
        bad.concurrency_key_hex = Some("ABC".to_owned());
        let e = InsertJob::of_job(&bad).unwrap_err();
        assert!(e.contains("concurrency_key_hex"), "{e}");
    }
}
