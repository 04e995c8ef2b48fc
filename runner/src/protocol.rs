//! The protocol between the runner and the programs it checks (docs/adapter-protocol.md), in
//! one place: its versions and capabilities, the negotiation of the compact `nested` value
//! form, the environment a program is started with, and the typed messages: the hello, the
//! producer's enqueue and bulk requests, its answers and their optional trace.
//!
//! A function adapter (`crate::adapter`) speaks protocol 1's requests under any version; a
//! producer (`crate::producer`) speaks protocol 2 or 3. Every field of a producer request is
//! always present (null when unused), so a producer never has to guess a default.
//!
//! Below the contract layer: nothing here judges; the answer judge
//! (`crate::contract::judge`) reads these types.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// Protocol 1: function requests only (every family of the vectors).
pub const PROTOCOL_FUNCTIONS: u64 = 1;
/// Protocol 2 adds `enqueue` (and `bulk`): a program may declare function families beside
/// `enqueue`; the function adapter ignores `enqueue` and `bulk`.
pub const PROTOCOL_ENQUEUE: u64 = 2;
/// Protocol 3 adds a job's `metadata` and `max_attempts`, `run_at` with any offset, and
/// defines the compact `nested` typed form for every request (ADR 0053). Its function
/// requests are protocol 1's; protocol 2 producers keep working: they are sent protocol 2's
/// requests ([`Job::for_protocol`]).
pub const PROTOCOL_JOB_FIELDS: u64 = 3;
/// The newest protocol this runner speaks.
pub const PROTOCOL_NEWEST: u64 = PROTOCOL_JOB_FIELDS;

/// The capability of a producer that answers `enqueue` requests.
pub const ENQUEUE_CAPABILITY: &str = "enqueue";
/// The capability of a producer that answers `bulk` requests (docs/contract.md section 14).
pub const BULK_CAPABILITY: &str = "bulk";
/// The capability of a program that is also sent the expected-refusal cases: an adapter's
/// rejected-input vectors (`expected.error`, answered `{"output":{"error":"<code>"}}`), a
/// producer's refusal cases.
pub const ERRORS_CAPABILITY: &str = "errors";
/// The capability of a protocol 1 or 2 program that decodes ADR 0020's compact `nested`
/// typed form (protocol 3 defines it for everyone). A program that neither declares it nor
/// speaks protocol 3 is never sent that form: such a request is not applicable (ADR 0053).
pub const NESTED_CAPABILITY: &str = "nested";

/// Environment variable carrying the DSN to a program (an adapter when `--dsn` is given; a
/// producer always).
pub const DSN_ENV: &str = "AWA_CONFORMANCE_DSN";
/// The same DSN as a `postgresql://` URL, for drivers that open URLs only (asyncpg,
/// node-postgres's `connectionString`): given beside [`DSN_ENV`] whenever the DSN parses.
pub const DSN_URL_ENV: &str = "AWA_CONFORMANCE_DSN_URL";

/// The environment a producer is started with: the DSN as written ([`DSN_ENV`]), the same
/// login as a URL ([`DSN_URL_ENV`]) when it parses, and the contract schema (`schema_env`).
#[must_use]
pub fn producer_env(dsn: String, schema_env: (&str, &str)) -> Vec<(String, String)> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let url = crate::pg::Dsn::parse(&dsn, crate::pg::DsnSource::Flag, &env)
        .ok()
        .map(|d| d.url());
    let mut out = vec![(DSN_ENV.to_owned(), dsn)];
    if let Some(url) = url {
        out.push((DSN_URL_ENV.to_owned(), url));
    }
    out.push((schema_env.0.to_owned(), schema_env.1.to_owned()));
    out
}

/// Whether a program that said `protocol` and `capabilities` in its hello may be sent the
/// compact `nested` typed form: it speaks protocol 3, or declares `nested`.
#[must_use]
pub fn speaks_nested(protocol: u64, capabilities: &[String]) -> bool {
    protocol >= PROTOCOL_JOB_FIELDS || capabilities.iter().any(|c| c == NESTED_CAPABILITY)
}

/// Whether `value` (a request's input or a typed value) holds the compact `nested` typed form
/// anywhere: an object whose `type` is `"nested"`.
#[must_use]
pub fn uses_nested(value: &Json) -> bool {
    match value {
        Json::Object(m) => {
            m.get("type").and_then(Json::as_str) == Some("nested") || m.values().any(uses_nested)
        }
        Json::Array(a) => a.iter().any(uses_nested),
        _ => false,
    }
}

/// Why a program with this hello is not sent a request holding the `nested` form.
#[must_use]
pub fn nested_not_spoken(protocol: u64) -> String {
    format!(
        "the request holds ADR 0020's compact `nested` typed form, which protocol {protocol} \
         does not define; say protocol {PROTOCOL_JOB_FIELDS} or declare capability \
         `{NESTED_CAPABILITY}` in the hello to receive it (docs/adapter-protocol.md, \"Typed \
         args\")"
    )
}

/// `implementation` of a hello.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// The producer's name.
    #[serde(default = "unnamed")]
    pub name: String,
    /// Its version.
    #[serde(default = "unknown")]
    pub version: String,
}

fn unnamed() -> String {
    "unnamed".to_owned()
}

fn unknown() -> String {
    "unknown".to_owned()
}

impl Default for Implementation {
    fn default() -> Self {
        Self {
            name: unnamed(),
            version: unknown(),
        }
    }
}

/// The producer's first line: `{"type":"hello","protocol":3,"implementation":{…},"capabilities":[…]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "hello")]
pub struct Hello {
    /// [`PROTOCOL_ENQUEUE`] or [`PROTOCOL_JOB_FIELDS`] for `enqueue`.
    pub protocol: u64,
    /// Who is speaking.
    #[serde(default)]
    pub implementation: Implementation,
    /// Declared capabilities: `enqueue`, `errors`, `bulk`, or function families.
    pub capabilities: Vec<String>,
    /// How many enqueue requests the producer accepts before answering the first (ADR 0057);
    /// absent: one at a time, as every producer before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u64>,
}

/// The most requests a producer may declare in flight (`hello.max_in_flight`): the engine
/// opens a session per request in flight and the producer as many, so a larger number would
/// only exhaust the server's connection slots.
pub const MAX_IN_FLIGHT: u64 = 64;

impl Hello {
    /// Parse a hello line, checking its `"type":"hello"` (serde alone does not).
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse_line(line: &str) -> Result<Self, String> {
        let short = || line.chars().take(200).collect::<String>();
        let value: Json =
            serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {}", short()))?;
        if value.get("type").and_then(Json::as_str) != Some("hello") {
            return Err(format!(
                "not a hello (\"type\" must be \"hello\"): {}",
                short()
            ));
        }
        serde_json::from_value(value).map_err(|e| format!("not a valid hello ({e}): {}", short()))
    }

    /// Whether the producer declared `capability`.
    #[must_use]
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    /// Whether the producer may be sent the compact `nested` typed form (protocol 3, or the
    /// capability `nested`).
    #[must_use]
    pub fn speaks_nested(&self) -> bool {
        speaks_nested(self.protocol, &self.capabilities)
    }

    /// What the payload verdict of this producer covers, for the report's provenance: every
    /// field of protocol 3, or, for protocol 2, the fields its requests carry, and the fields
    /// judged only as their defaults (a protocol 2 verdict never claims metadata or
    /// max_attempts were passed through).
    #[must_use]
    pub fn fields_judged(&self) -> String {
        if self.protocol >= PROTOCOL_JOB_FIELDS {
            format!(
                "protocol {}: kind, queue, args, priority, run_at (any offset), tags, metadata, \
                 max_attempts",
                self.protocol
            )
        } else {
            format!(
                "protocol {}: kind, queue, args, priority, run_at (UTC), tags; metadata and \
                 max_attempts judged only as their defaults (protocol {PROTOCOL_JOB_FIELDS} sends \
                 them)",
                self.protocol
            )
        }
    }

    /// The requests the producer accepts at once (`max_in_flight`, 1 when absent).
    #[must_use]
    pub fn in_flight(&self) -> usize {
        usize::try_from(self.max_in_flight.unwrap_or(1).clamp(1, MAX_IN_FLIGHT)).unwrap_or(1)
    }

    /// Check that this hello opens an enqueue session: protocol 2 or 3 and the `enqueue`
    /// capability.
    ///
    /// # Errors
    /// A message naming the fix.
    pub fn check_enqueue(&self) -> Result<(), String> {
        if !(PROTOCOL_ENQUEUE..=PROTOCOL_JOB_FIELDS).contains(&self.protocol) {
            return Err(format!(
                "hello.protocol is {}, enqueue needs protocol {PROTOCOL_JOB_FIELDS} (or \
                 {PROTOCOL_ENQUEUE}, without the job fields protocol {PROTOCOL_JOB_FIELDS} adds)",
                self.protocol
            ));
        }
        if let Some(n) = self.max_in_flight {
            if !(1..=MAX_IN_FLIGHT).contains(&n) {
                return Err(format!(
                    "hello.max_in_flight is {n}; declare 1 to {MAX_IN_FLIGHT} (the requests \
                     the producer answers at once), or leave it out for one at a time"
                ));
            }
        }
        if !self.has(ENQUEUE_CAPABILITY) {
            return Err(format!(
                "hello.capabilities {:?} lacks \"{ENQUEUE_CAPABILITY}\", so the producer \
                 answers no enqueue request; declare it",
                self.capabilities
            ));
        }
        Ok(())
    }
}

/// The unique-key *inputs* of a job (never the computed key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniqueInputs {
    /// Hash the (physical) queue the job is enqueued to.
    pub by_queue: bool,
    /// Hash the canonical args.
    pub by_args: bool,
    /// The period bucket as a decimal i64 string, or null (not part of the key).
    pub period_bucket: Option<String>,
}

/// PartitionedQueue routing inputs: enqueue to the physical queue of `key_hex`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionInputs {
    /// The partition key, lowercase hex.
    pub key_hex: String,
    /// The partition count, 1..=32767.
    pub partitions: u16,
}

/// The logical job a producer is asked to enqueue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// `p_kind`.
    pub kind: String,
    /// The (logical) queue.
    pub queue: String,
    /// `p_args` in ADR 0002 typed form; the producer stores exactly that document.
    pub args: Json,
    /// `p_priority`, or null for the default.
    pub priority: Option<i16>,
    /// `p_run_at` as RFC 3339 UTC, or null.
    pub run_at: Option<String>,
    /// `p_tags`.
    pub tags: Vec<String>,
    /// `p_ordering_key` as lowercase hex, or null.
    pub ordering_key_hex: Option<String>,
    /// `p_concurrency_key` as lowercase hex, or null.
    pub concurrency_key_hex: Option<String>,
    /// Unique-key inputs, or null (`p_unique_key` NULL).
    pub unique: Option<UniqueInputs>,
    /// `p_unique_states` as a string of `0`/`1`, or null.
    pub unique_states: Option<String>,
    /// PartitionedQueue routing, or null.
    pub partition: Option<PartitionInputs>,
    /// `p_opts` (normally `{}`).
    pub opts: Json,
    /// The members protocol 3 adds; absent from a protocol 2 request ([`Job::for_protocol`]).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub fields_3: Option<JobFields3>,
}

/// The job members protocol 3 adds (ADR 0053): always present in a protocol 3 request, null
/// when unused, and never sent to a protocol 2 producer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobFields3 {
    /// `p_metadata` in the typed form of `args`, or null for the default `{}`.
    #[serde(default)]
    pub metadata: Option<Json>,
    /// `p_max_attempts`, or null for the default (25).
    #[serde(default)]
    pub max_attempts: Option<i16>,
}

impl Job {
    /// A job of `kind` on `queue` with `args` and nothing else: no priority, run_at, tags, keys,
    /// unique inputs or partition, and `opts` `{}`.
    #[must_use]
    pub fn plain(kind: &str, queue: &str, args: Json) -> Self {
        Self {
            kind: kind.to_owned(),
            queue: queue.to_owned(),
            args,
            priority: None,
            run_at: None,
            tags: Vec::new(),
            ordering_key_hex: None,
            concurrency_key_hex: None,
            unique: None,
            unique_states: None,
            partition: None,
            opts: Json::Object(serde_json::Map::new()),
            fields_3: Some(JobFields3::default()),
        }
    }

    /// The metadata asked (typed form), if any.
    #[must_use]
    pub fn metadata(&self) -> Option<&Json> {
        self.fields_3.as_ref().and_then(|f| f.metadata.as_ref())
    }

    /// Protocol 3's members, to set one (present from then on).
    pub fn fields_3_mut(&mut self) -> &mut JobFields3 {
        self.fields_3.get_or_insert_with(JobFields3::default)
    }

    /// The max_attempts asked, if any.
    #[must_use]
    pub fn max_attempts(&self) -> Option<i16> {
        self.fields_3.as_ref().and_then(|f| f.max_attempts)
    }

    /// Why this job cannot be sent to a producer that said `hello`, if it cannot: it asks for
    /// a member or form the producer's protocol does not define (ADR 0053). A job that asks
    /// for none of them is sent in the producer's protocol, never refused.
    #[must_use]
    pub fn not_expressible(&self, hello: &Hello) -> Option<String> {
        let v3 = |what: &str| {
            format!(
                "the request carries {what}, which protocol {PROTOCOL_JOB_FIELDS} adds; producer {} \
                 says protocol {} in its hello",
                hello.implementation.name, hello.protocol
            )
        };
        if hello.protocol < PROTOCOL_JOB_FIELDS {
            if self.metadata().is_some() {
                return Some(v3("metadata"));
            }
            if self.max_attempts().is_some() {
                return Some(v3("max_attempts"));
            }
            if self.run_at.as_deref().is_some_and(|t| !t.ends_with('Z')) {
                return Some(v3("a run_at with a UTC offset other than Z"));
            }
        }
        let nested = uses_nested(&self.args) || self.metadata().is_some_and(uses_nested);
        (nested && !hello.speaks_nested()).then(|| nested_not_spoken(hello.protocol))
    }

    /// This job as a producer speaking `protocol` is sent it: without protocol 3's members
    /// for protocol 2, with them (null when unused) for protocol 3.
    #[must_use]
    pub fn for_protocol(&self, protocol: u64) -> Self {
        let mut job = self.clone();
        job.fields_3 = if protocol >= PROTOCOL_JOB_FIELDS {
            Some(self.fields_3.clone().unwrap_or_default())
        } else {
            None
        };
        job
    }
}

/// `{"type":"enqueue","seq":…,"case":…,"schema":…,"job":{…}}`: one request, one outstanding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "enqueue")]
pub struct EnqueueRequest {
    /// Request number, echoed in the answer.
    pub seq: u64,
    /// The trial name this request serves (for the producer's logs).
    pub case: String,
    /// The contract schema name.
    pub schema: String,
    /// The job.
    pub job: Job,
}

/// The optional intermediate values a producer may return (the judge's type).
/// The optional intermediate values a producer may return, so a mismatch names its layer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The canonical args JSON the producer hashed (text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_args: Option<String>,
    /// The unique key it computed, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_key_hex: Option<String>,
    /// The BLAKE3 pre-image it hashed, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_preimage_hex: Option<String>,
    /// The physical queue it enqueued to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_queue: Option<String>,
}

/// A refusal: by the database (`sqlstate`) or by the client (`code`, `sqlstate` null).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    /// The SQLSTATE the driver reported, or null for a client-side refusal.
    pub sqlstate: Option<String>,
    /// The contract error code (DETAIL `code`, or the client's), or null.
    pub code: Option<String>,
    /// The message, for the report.
    #[serde(default)]
    pub message: String,
}

/// What a producer answered to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum EnqueueAnswer {
    /// The job was committed with this id.
    Enqueued {
        /// `insert_job`'s `job_id`.
        job_id: i64,
        /// Optional intermediates.
        trace: Option<Trace>,
    },
    /// The request was refused.
    Refused(Refused),
    /// The producer cannot do this request (not applicable).
    Skipped(String),
    /// The producer failed on the request (a finding).
    Error(String),
}

/// The wire form of an answer, every member optional so a bad one gets a precise message.
#[derive(Deserialize, Serialize, Default)]
struct RawAnswer {
    seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    job_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace: Option<Trace>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refused: Option<Refused>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skipped: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Json>,
}

/// An answer to request `seq` must be exactly one of its four kinds (`present`: each member
/// and whether it is there); `short` shows the answer in the message.
fn exactly_one(
    seq: u64,
    present: [(&str, bool); 4],
    short: &dyn Fn() -> String,
) -> Result<(), String> {
    if present.iter().filter(|(_, here)| *here).count() == 1 {
        return Ok(());
    }
    let names: Vec<&str> = present.iter().map(|(name, _)| *name).collect();
    Err(format!(
        "answer {seq} must have exactly one of {}: {}",
        names.join(", "),
        short()
    ))
}

impl EnqueueAnswer {
    /// Parse one answer object (a JSON value); returns its `seq` and the answer.
    ///
    /// # Errors
    /// A message naming what is wrong (not an object, no integer seq, none or several of
    /// `job_id` / `refused` / `skipped` / `error`).
    pub fn from_json(value: &Json) -> Result<(u64, Self), String> {
        let short = || {
            let t = value.to_string();
            t.chars().take(200).collect::<String>()
        };
        let raw: RawAnswer = serde_json::from_value(value.clone())
            .map_err(|e| format!("not an enqueue answer ({e}): {}", short()))?;
        exactly_one(
            raw.seq,
            [
                ("job_id", raw.job_id.is_some()),
                ("refused", raw.refused.is_some()),
                ("skipped:true", raw.skipped == Some(true)),
                ("error", raw.error.is_some()),
            ],
            &short,
        )?;
        let answer = if let Some(job_id) = raw.job_id {
            Self::Enqueued {
                job_id,
                trace: raw.trace,
            }
        } else if let Some(r) = raw.refused {
            Self::Refused(r)
        } else if let Some(e) = raw.error {
            Self::Error(e.as_str().map_or_else(|| e.to_string(), str::to_owned))
        } else {
            Self::Skipped(
                raw.reason
                    .unwrap_or_else(|| "skipped by the producer".to_owned()),
            )
        };
        Ok((raw.seq, answer))
    }

    /// Parse one answer line.
    ///
    /// # Errors
    /// As [`EnqueueAnswer::from_json`], or the line is not JSON.
    pub fn parse_line(line: &str) -> Result<(u64, Self), String> {
        let value: Json = serde_json::from_str(line).map_err(|e| {
            format!(
                "answer is not JSON ({e}): {}",
                line.chars().take(200).collect::<String>()
            )
        })?;
        Self::from_json(&value)
    }

    /// The wire form of this answer to request `seq`.
    #[must_use]
    pub fn to_json(&self, seq: u64) -> Json {
        let mut raw = RawAnswer {
            seq,
            ..RawAnswer::default()
        };
        match self {
            Self::Enqueued { job_id, trace } => {
                raw.job_id = Some(*job_id);
                raw.trace.clone_from(trace);
            }
            Self::Refused(r) => raw.refused = Some(r.clone()),
            Self::Skipped(reason) => {
                raw.skipped = Some(true);
                raw.reason = Some(reason.clone());
            }
            Self::Error(e) => raw.error = Some(Json::String(e.clone())),
        }
        serde_json::to_value(raw).unwrap_or(Json::Null)
    }
}

/// `{"type":"bulk","seq":…,"case":…,"schema":…,"jobs":[…]}`: stage the jobs as rows `1..n`
/// of one new batch, publish it with `publish_batch`, commit, answer (docs/contract.md §14).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "bulk")]
pub struct BulkRequest {
    /// Request number, echoed in the answer.
    pub seq: u64,
    /// The trial name this request serves.
    pub case: String,
    /// The contract schema name.
    pub schema: String,
    /// The jobs, in row order (row `k` is `jobs[k-1]`).
    pub jobs: Vec<Job>,
}

/// A refusal of a batch: `ZA006` with the DETAIL's `code` and `row`, or a client refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BulkRefusal {
    /// The SQLSTATE the driver reported, or null for a client-side refusal.
    pub sqlstate: Option<String>,
    /// The contract error code (DETAIL `code`, or the client's), or null.
    pub code: Option<String>,
    /// The row the refusal names (DETAIL `row`), or null.
    #[serde(default)]
    pub row: Option<u64>,
    /// The message, for the report.
    #[serde(default)]
    pub message: String,
}

/// What a producer answered to one bulk request.
#[derive(Debug, Clone, PartialEq)]
pub enum BulkAnswer {
    /// The batch was published and committed; the job ids in job order.
    Published(Vec<i64>),
    /// The batch was refused (nothing published).
    Refused(BulkRefusal),
    /// The producer cannot do this request (not applicable).
    Skipped(String),
    /// The producer failed on the request (a finding).
    Error(String),
}

/// The wire form of a bulk answer, every member optional so a bad one gets a precise message.
#[derive(Deserialize, Serialize, Default)]
struct RawBulkAnswer {
    seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    job_ids: Option<Vec<i64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refused: Option<BulkRefusal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skipped: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Json>,
}

impl BulkAnswer {
    /// Parse one bulk answer line; returns its `seq` and the answer.
    ///
    /// # Errors
    /// A message naming what is wrong (not JSON, no integer seq, none or several of
    /// `job_ids` / `refused` / `skipped` / `error`).
    pub fn parse_line(line: &str) -> Result<(u64, Self), String> {
        let short = || line.chars().take(200).collect::<String>();
        let raw: RawBulkAnswer = serde_json::from_str(line)
            .map_err(|e| format!("not a bulk answer ({e}): {}", short()))?;
        exactly_one(
            raw.seq,
            [
                ("job_ids", raw.job_ids.is_some()),
                ("refused", raw.refused.is_some()),
                ("skipped:true", raw.skipped == Some(true)),
                ("error", raw.error.is_some()),
            ],
            &short,
        )?;
        let answer = if let Some(ids) = raw.job_ids {
            Self::Published(ids)
        } else if let Some(r) = raw.refused {
            Self::Refused(r)
        } else if let Some(e) = raw.error {
            Self::Error(e.as_str().map_or_else(|| e.to_string(), str::to_owned))
        } else {
            Self::Skipped(
                raw.reason
                    .unwrap_or_else(|| "skipped by the producer".to_owned()),
            )
        };
        Ok((raw.seq, answer))
    }

    /// The wire form of this answer to request `seq`.
    #[must_use]
    pub fn to_json(&self, seq: u64) -> Json {
        let mut raw = RawBulkAnswer {
            seq,
            ..RawBulkAnswer::default()
        };
        match self {
            Self::Published(ids) => raw.job_ids = Some(ids.clone()),
            Self::Refused(r) => raw.refused = Some(r.clone()),
            Self::Skipped(reason) => {
                raw.skipped = Some(true);
                raw.reason = Some(reason.clone());
            }
            Self::Error(e) => raw.error = Some(Json::String(e.clone())),
        }
        serde_json::to_value(raw).unwrap_or(Json::Null)
    }
}

/// `{"type":"stop"}`: the last line the runner sends.
#[must_use]
pub fn stop_line() -> &'static str {
    "{\"type\":\"stop\"}"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn max_in_flight_is_optional_bounded_and_named_when_wrong() {
        let hello = |extra: &str| {
            Hello::parse_line(&format!(
                r#"{{"type":"hello","protocol":3,"capabilities":["enqueue"]{extra}}}"#
            ))
            .unwrap()
        };
        assert_eq!(hello("").in_flight(), 1);
        assert!(hello("").check_enqueue().is_ok());
        assert_eq!(hello(r#","max_in_flight":8"#).in_flight(), 8);
        assert!(hello(r#","max_in_flight":64"#).check_enqueue().is_ok());
        for bad in ["0", "65"] {
            let err = hello(&format!(r#","max_in_flight":{bad}"#))
                .check_enqueue()
                .unwrap_err();
            assert!(
                err.contains(&format!("hello.max_in_flight is {bad}")) && err.contains("1 to 64"),
                "{err}"
            );
        }
        assert!(Hello::parse_line(
            r#"{"type":"hello","protocol":3,"capabilities":["enqueue"],"max_in_flight":-1}"#
        )
        .unwrap_err()
        .contains("not a valid hello"));
        // Absent, it is not written back (a hello round-trips as the producer sent it).
        assert!(!serde_json::to_string(&hello(""))
            .unwrap()
            .contains("max_in_flight"));
    }

    #[test]
    fn answers_round_trip_and_bad_ones_are_named() {
        for a in [
            EnqueueAnswer::Enqueued {
                job_id: 7,
                trace: None,
            },
            EnqueueAnswer::Enqueued {
                job_id: 7,
                trace: Some(Trace {
                    unique_key_hex: Some("00".into()),
                    ..Trace::default()
                }),
            },
            EnqueueAnswer::Refused(Refused {
                sqlstate: Some("23505".into()),
                code: None,
                message: "dup".into(),
            }),
            EnqueueAnswer::Skipped("no".into()),
            EnqueueAnswer::Error("boom".into()),
        ] {
            assert_eq!(EnqueueAnswer::from_json(&a.to_json(3)).unwrap(), (3, a));
        }
        assert!(EnqueueAnswer::parse_line("nope").is_err());
        assert!(EnqueueAnswer::from_json(&json!({"seq": 1})).is_err());
        let two = EnqueueAnswer::from_json(&json!({"seq": 1, "job_id": 1, "error": "x"}));
        assert!(two.unwrap_err().starts_with(
            "answer 1 must have exactly one of job_id, refused, skipped:true, error: "
        ));
        assert!(EnqueueAnswer::from_json(&json!({"job_id": 1})).is_err());
    }

    #[test]
    fn bulk_answers_round_trip_and_bad_ones_are_named() {
        for a in [
            BulkAnswer::Published(vec![1, 2]),
            BulkAnswer::Refused(BulkRefusal {
                sqlstate: Some("ZA006".into()),
                code: Some("bulk_unique_conflict".into()),
                row: Some(3),
                message: "conflict".into(),
            }),
            BulkAnswer::Skipped("no".into()),
            BulkAnswer::Error("boom".into()),
        ] {
            let line = a.to_json(4).to_string();
            assert_eq!(BulkAnswer::parse_line(&line).unwrap(), (4, a));
        }
        assert!(BulkAnswer::parse_line("nope").is_err());
        assert!(BulkAnswer::parse_line(r#"{"seq":1}"#).is_err());
        assert!(
            BulkAnswer::parse_line(r#"{"seq":1,"job_ids":[1],"error":"x"}"#)
                .unwrap_err()
                .contains("exactly one of job_ids, refused, skipped:true, error")
        );
        assert!(BulkAnswer::parse_line(r#"{"seq":1,"job_id":1}"#).is_err());
        let r = BulkRequest {
            seq: 2,
            case: "producer::bulk::x".into(),
            schema: "awa".into(),
            jobs: vec![],
        };
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["type"], "bulk");
        assert_eq!(serde_json::from_value::<BulkRequest>(j).unwrap(), r);
    }

    #[test]
    fn request_and_hello_carry_their_type() {
        let h: Hello =
            serde_json::from_value(json!({"type":"hello","protocol":2,"capabilities":["enqueue"]}))
                .unwrap();
        assert!(h.check_enqueue().is_ok());
        assert_eq!(h.implementation.name, "unnamed");
        assert!(Hello::parse_line(r#"{"type":"request","protocol":2,"capabilities":[]}"#).is_err());
        assert!(Hello::parse_line(r#"{"type":"hello","protocol":2}"#).is_err());
        assert!(
            Hello::parse_line(r#"{"type":"hello","protocol":2,"capabilities":["enqueue"]}"#)
                .is_ok()
        );
        let h1: Hello =
            serde_json::from_value(json!({"type":"hello","protocol":1,"capabilities":["enqueue"]}))
                .unwrap();
        assert!(h1.check_enqueue().unwrap_err().contains("protocol"));
        let r = EnqueueRequest {
            seq: 1,
            case: "producer::x".into(),
            schema: "awa".into(),
            job: Job::plain("k", "q", json!({"type":"object","value":[]})),
        };
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["type"], "enqueue");
        assert!(j["job"].get("unique").is_some(), "nulls are explicit: {j}");
        assert_eq!(serde_json::from_value::<EnqueueRequest>(j).unwrap(), r);
    }
}
