//! The released Rust crate awa-model 0.6.9 (crates.io) as a producer speaking the producer protocol (v2).
//!
//! Reads one JSON request per line on stdin, answers each on stdout (nothing else goes to stdout;
//! diagnostics go to stderr), one request at a time, until `stop` or end of input (exit 0).
//! Every job goes through the crate alone: its `InsertOpts`/`UniqueOpts` carry the request's
//! logical inputs, the crate computes the unique key itself (`compute_unique_key`, reached through
//! its insert path) and inserts through `awa.insert_job_compat`. `AWA_RS_PATH` picks the crate's
//! entry point: `insert_with` (default, the typed single insert) or `insert_many` (one job per
//! call, the raw-kind batch insert). A partitioned request is routed by the crate's
//! `PartitionedQueue::queue_for_key`. What the crate cannot express is answered `skipped`.
//!
//! Environment: `AWA_CONFORMANCE_DSN` (a `postgres://` URL or a libpq `key=value` string) and
//! `AWA_RS_PATH`.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::str::FromStr;

use awa_model::{AwaError, InsertOpts, InsertParams, JobArgs, PartitionedQueue, UniqueOpts};
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgDatabaseError, PgSslMode};
use sqlx::Connection;

/// The crate version pinned in Cargo.toml (`awa-model = "=0.6.9"`) and Cargo.lock.
const AWA_MODEL_VERSION: &str = "0.6.9";
/// The protocol version that carries `enqueue`.
const PROTOCOL: u32 = 2;
/// The contract's client-side refusal code for a `unique_states` value that is not 8 bits.
const NOT_8_BITS: &str = "unique_states_not_8_bits";

/// One answer to one request (docs/protocol/enqueue-answer.schema.json).
enum Answer {
    Enqueued(i64),
    Refused {
        sqlstate: Option<String>,
        code: Option<String>,
        message: String,
    },
    Skipped(String),
    Error(String),
}

impl Answer {
    fn to_json(&self, seq: &Value) -> Value {
        match self {
            Self::Enqueued(id) => json!({"seq": seq, "job_id": id}),
            Self::Refused {
                sqlstate,
                code,
                message,
            } => {
                json!({"seq": seq, "refused": {"sqlstate": sqlstate, "code": code, "message": message}})
            }
            Self::Skipped(reason) => json!({"seq": seq, "skipped": true, "reason": reason}),
            Self::Error(e) => json!({"seq": seq, "error": e}),
        }
    }
}

/// Which of the crate's insert functions a job goes through.
#[derive(Clone, Copy)]
enum Path {
    InsertWith,
    InsertMany,
}

impl Path {
    fn from_env() -> Result<Self, String> {
        match std::env::var("AWA_RS_PATH").as_deref() {
            Err(_) | Ok("insert_with") => Ok(Self::InsertWith),
            Ok("insert_many") => Ok(Self::InsertMany),
            Ok(other) => Err(format!(
                "AWA_RS_PATH must be insert_with or insert_many, not {other:?}"
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::InsertWith => "insert_with",
            Self::InsertMany => "insert_many",
        }
    }
}

/// Job args for the crate's typed `insert_with`: a runtime kind and a JSON document.
///
/// `insert_with` reads the kind through `kind_str` only; the crate wants it `'static`, so each
/// distinct kind is leaked once (see `Kinds`).
struct DynamicArgs {
    kind: &'static str,
    args: Value,
}

impl serde::Serialize for DynamicArgs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.args.serialize(s)
    }
}

impl JobArgs for DynamicArgs {
    fn kind() -> &'static str {
        // Never consulted for an instance: `kind_str` below answers with the request's kind.
        "awa_rs_producer.dynamic"
    }

    fn kind_str(&self) -> &'static str {
        self.kind
    }
}

/// Interned kinds: one leak per distinct kind, so memory is bounded by the kinds a run uses.
#[derive(Default)]
struct Kinds(HashMap<String, &'static str>);

impl Kinds {
    fn get(&mut self, kind: &str) -> &'static str {
        if let Some(k) = self.0.get(kind) {
            return k;
        }
        let leaked: &'static str = Box::leak(kind.to_owned().into_boxed_str());
        self.0.insert(kind.to_owned(), leaked);
        leaked
    }
}

/// A request turned into the crate's inputs, or the reason it is not sent.
enum Plan {
    Send {
        kind: String,
        args: Value,
        opts: InsertOpts,
    },
    Answer(Answer),
}

fn skip(reason: &str) -> Plan {
    Plan::Answer(Answer::Skipped(reason.to_owned()))
}

fn refuse_client(code: Option<&str>, message: String) -> Plan {
    Plan::Answer(Answer::Refused {
        sqlstate: None,
        code: code.map(str::to_owned),
        message,
    })
}

fn str_field<'a>(job: &'a Value, name: &str) -> Result<&'a str, String> {
    job.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("job.{name} must be a string"))
}

fn nonnull<'a>(job: &'a Value, name: &str) -> Option<&'a Value> {
    job.get(name).filter(|v| !v.is_null())
}

fn hex_field(job: &Value, name: &str) -> Result<Option<Vec<u8>>, String> {
    match nonnull(job, name) {
        None => Ok(None),
        Some(v) => {
            let text = v
                .as_str()
                .ok_or_else(|| format!("job.{name} must be hex text"))?;
            hex::decode(text)
                .map(Some)
                .map_err(|e| format!("job.{name}: {e}"))
        }
    }
}

/// The request's job (docs/protocol/enqueue-request.schema.json) as the crate's inputs.
fn plan(job: &Value) -> Result<Plan, String> {
    if nonnull(job, "concurrency_key_hex").is_some() {
        return Ok(skip(
            "awa-model 0.6.9 has no concurrency key (InsertOpts has none; it arrives with awa.insert_job)",
        ));
    }
    if job
        .get("opts")
        .and_then(Value::as_object)
        .is_some_and(|o| !o.is_empty())
    {
        return Ok(skip(
            "awa-model 0.6.9 passes no opts (its insert path calls awa.insert_job_compat)",
        ));
    }
    let kind = str_field(job, "kind")?.to_owned();
    let mut queue = str_field(job, "queue")?.to_owned();
    if let Some(part) = nonnull(job, "partition") {
        let key = hex_field(part, "key_hex")?.ok_or("partition.key_hex is missing")?;
        let n = part
            .get("partitions")
            .and_then(Value::as_u64)
            .ok_or("partition.partitions must be a positive integer")?;
        let n = usize::try_from(n).map_err(|e| format!("partition.partitions: {e}"))?;
        match PartitionedQueue::new(queue.clone(), n) {
            Ok(pq) => pq.queue_for_key(&key).clone_into(&mut queue),
            Err(e) => return Ok(refuse_client(None, format!("PartitionedQueue: {e}"))),
        }
    }
    let args = decode(job.get("args").ok_or("job.args is missing")?)?;
    let mut opts = InsertOpts {
        queue,
        ..InsertOpts::default()
    };
    if let Some(p) = nonnull(job, "priority") {
        let p = p.as_i64().ok_or("job.priority must be an integer")?;
        match i16::try_from(p) {
            Ok(p) => opts.priority = p,
            Err(_) => {
                return Ok(refuse_client(
                    None,
                    format!("priority {p} does not fit InsertOpts.priority (i16)"),
                ))
            }
        }
    }
    if let Some(at) = nonnull(job, "run_at") {
        let at = at.as_str().ok_or("job.run_at must be RFC 3339 text")?;
        let at = DateTime::parse_from_rfc3339(at).map_err(|e| format!("job.run_at {at:?}: {e}"))?;
        opts.run_at = Some(at.with_timezone(&Utc));
    }
    if let Some(tags) = nonnull(job, "tags") {
        opts.tags = tags
            .as_array()
            .ok_or("job.tags must be an array")?
            .iter()
            .map(|t| {
                t.as_str()
                    .map(str::to_owned)
                    .ok_or("job.tags must be strings")
            })
            .collect::<Result<_, _>>()?;
    }
    opts.ordering_key = hex_field(job, "ordering_key_hex")?;
    if let Some(u) = nonnull(job, "unique") {
        let flag = |name: &str| {
            u.get(name)
                .and_then(Value::as_bool)
                .ok_or_else(|| format!("unique.{name} must be a bool"))
        };
        let mut unique = UniqueOpts {
            by_queue: flag("by_queue")?,
            by_args: flag("by_args")?,
            by_period: None,
            ..UniqueOpts::default()
        };
        if let Some(b) = nonnull(u, "period_bucket") {
            let text = b
                .as_str()
                .ok_or("unique.period_bucket must be decimal text")?;
            unique.by_period = Some(
                text.parse::<i64>()
                    .map_err(|e| format!("unique.period_bucket {text:?}: {e}"))?,
            );
        }
        // null keeps the crate's default mask (11111000): UniqueOpts always carries one.
        if let Some(bits) = nonnull(job, "unique_states") {
            let bits = bits.as_str().ok_or("job.unique_states must be text")?;
            match states_mask(bits) {
                Some(mask) => unique.states = mask,
                None => {
                    return Ok(refuse_client(
                        Some(NOT_8_BITS),
                        format!("UniqueOpts.states is a u8: {bits:?} is not 8 bits"),
                    ))
                }
            }
        }
        opts.unique = Some(unique);
    }
    Ok(Plan::Send { kind, args, opts })
}

/// '11111000' (leftmost = scheduled) as the crate's u8 mask (bit i = state i), if 8 bits.
fn states_mask(bits: &str) -> Option<u8> {
    if bits.len() != 8 {
        return None;
    }
    bits.bytes()
        .enumerate()
        .try_fold(0u8, |mask, (i, c)| match c {
            b'1' => Some(mask | (1 << i)),
            b'0' => Some(mask),
            _ => None,
        })
}

/// A value in the vectors' typed form (ADR 0002) as the `serde_json` value a Rust caller holds:
/// numbers as `serde_json` parses them (i64, then u64, else f64), NaN and ±inf as
/// `serde_json::to_value` makes them (null), duplicate object keys: the last one wins.
fn decode(t: &Value) -> Result<Value, String> {
    let ty = t
        .get("type")
        .and_then(Value::as_str)
        .ok_or("typed value without a type")?;
    let val = || {
        t.get("value")
            .ok_or_else(|| format!("{ty} without a value"))
    };
    Ok(match ty {
        "null" => Value::Null,
        "bool" => Value::Bool(val()?.as_bool().ok_or("bool value must be true/false")?),
        "int" => {
            let text = val()?.as_str().ok_or("int value must be decimal text")?;
            let n: Value =
                serde_json::from_str(text).map_err(|e| format!("int value {text:?}: {e}"))?;
            if !n.is_number() {
                return Err(format!("int value {text:?} is not a number"));
            }
            n
        }
        "float" => {
            let bits = t
                .get("bits")
                .and_then(Value::as_str)
                .ok_or("float without bits")?;
            let bits = u64::from_str_radix(bits, 16).map_err(|e| format!("float bits: {e}"))?;
            serde_json::to_value(f64::from_bits(bits)).map_err(|e| e.to_string())?
        }
        "string" => Value::String(
            val()?
                .as_str()
                .ok_or("string value must be text")?
                .to_owned(),
        ),
        "array" => Value::Array(
            val()?
                .as_array()
                .ok_or("array value must be an array")?
                .iter()
                .map(decode)
                .collect::<Result<_, _>>()?,
        ),
        "object" => {
            let mut map = Map::new();
            for pair in val()?.as_array().ok_or("object value must be pairs")? {
                let Some([Value::String(k), v]) = pair.as_array().map(Vec::as_slice) else {
                    return Err("object pair must be [key, typed value]".into());
                };
                map.insert(k.clone(), decode(v)?);
            }
            Value::Object(map)
        }
        "nested" => {
            let depth = t
                .get("depth")
                .and_then(Value::as_u64)
                .ok_or("nested without depth")?;
            let container = t
                .get("container")
                .and_then(Value::as_str)
                .ok_or("nested without container")?;
            let mut inner = decode(val()?)?;
            for _ in 0..depth {
                inner = if container == "array" {
                    Value::Array(vec![inner])
                } else {
                    let key = t
                        .get("key")
                        .and_then(Value::as_str)
                        .ok_or("nested object without key")?;
                    let mut m = Map::new();
                    m.insert(key.to_owned(), inner);
                    Value::Object(m)
                };
            }
            inner
        }
        other => return Err(format!("unknown typed value {other:?}")),
    })
}

/// The connection options for a postgres:// URL (sqlx) or a libpq key=value string
/// (parsed by tokio-postgres, which sqlx cannot do).
fn connect_options(dsn: &str) -> Result<PgConnectOptions, String> {
    if dsn.is_empty() {
        return Err("AWA_CONFORMANCE_DSN is empty: set it to the database to enqueue into".into());
    }
    if dsn.starts_with("postgres://") || dsn.starts_with("postgresql://") {
        return PgConnectOptions::from_str(dsn).map_err(|e| format!("AWA_CONFORMANCE_DSN: {e}"));
    }
    let cfg = tokio_postgres::Config::from_str(dsn).map_err(|e| {
        format!("AWA_CONFORMANCE_DSN is not a libpq string tokio-postgres reads ({e}); pass a postgres:// URL instead")
    })?;
    let mut o = PgConnectOptions::new_without_pgpass();
    match cfg.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => o = o.host(h),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => o = o.socket(p),
        None => {}
    }
    if let Some(port) = cfg.get_ports().first() {
        o = o.port(*port);
    }
    if let Some(user) = cfg.get_user() {
        o = o.username(user);
    }
    if let Some(pw) = cfg.get_password() {
        o = o.password(std::str::from_utf8(pw).map_err(|_| "the password is not UTF-8")?);
    }
    if let Some(db) = cfg.get_dbname() {
        o = o.database(db);
    }
    Ok(o.ssl_mode(match cfg.get_ssl_mode() {
        tokio_postgres::config::SslMode::Disable => PgSslMode::Disable,
        tokio_postgres::config::SslMode::Require => PgSslMode::Require,
        _ => PgSslMode::Prefer,
    }))
}

/// A database refusal with its SQLSTATE, and the contract code from a JSON DETAIL if any.
fn db_refusal(db: &dyn sqlx::error::DatabaseError) -> Answer {
    let code = db
        .try_downcast_ref::<PgDatabaseError>()
        .and_then(PgDatabaseError::detail)
        .and_then(|d| serde_json::from_str::<Value>(d).ok())
        .and_then(|d| d.get("code").and_then(Value::as_str).map(str::to_owned));
    Answer::Refused {
        sqlstate: db.code().map(std::borrow::Cow::into_owned),
        code,
        message: db.message().to_owned(),
    }
}

/// The crate's error as an answer; true when the connection must be dropped (not a refusal).
fn from_awa_error(e: AwaError) -> (Answer, bool) {
    match e {
        AwaError::UniqueConflict { constraint } => (
            Answer::Refused {
                sqlstate: Some(awa_model::adapter::postgres::UNIQUE_VIOLATION_SQLSTATE.to_owned()),
                code: None,
                message: format!("unique conflict (constraint {constraint:?})"),
            },
            false,
        ),
        AwaError::Database(sqlx::Error::Database(db)) => (db_refusal(db.as_ref()), false),
        AwaError::Validation(m) => (
            Answer::Refused {
                sqlstate: None,
                code: None,
                message: format!("validation error: {m}"),
            },
            false,
        ),
        AwaError::Database(other) => (Answer::Error(format!("database error: {other}")), true),
        other => (Answer::Error(other.to_string()), false),
    }
}

/// The producer's state across requests: one connection, opened on first use.
struct Producer {
    path: Path,
    dsn: String,
    conn: Option<PgConnection>,
    kinds: Kinds,
}

impl Producer {
    async fn enqueue(&mut self, job: &Value) -> Answer {
        let (kind, args, opts) = match plan(job) {
            Ok(Plan::Send { kind, args, opts }) => (kind, args, opts),
            Ok(Plan::Answer(a)) => return a,
            Err(e) => return Answer::Error(format!("bad request: {e}")),
        };
        if self.conn.is_none() {
            let opts = match connect_options(&self.dsn) {
                Ok(o) => o,
                Err(e) => return Answer::Error(e),
            };
            match PgConnection::connect_with(&opts).await {
                Ok(c) => self.conn = Some(c),
                Err(e) => return Answer::Error(format!("cannot connect: {e}")),
            }
        }
        let Some(conn) = self.conn.as_mut() else {
            return Answer::Error("no connection".into());
        };
        let result = match self.path {
            Path::InsertWith => {
                let args = DynamicArgs {
                    kind: self.kinds.get(&kind),
                    args,
                };
                awa_model::insert_with(&mut *conn, &args, opts)
                    .await
                    .map(|row| row.id)
            }
            Path::InsertMany => {
                let params = [InsertParams { kind, args, opts }];
                match awa_model::insert_many(&mut *conn, &params).await {
                    Ok(rows) => match rows.as_slice() {
                        [row] => Ok(row.id),
                        _ => {
                            return Answer::Error(format!(
                                "insert_many returned {} rows for one job",
                                rows.len()
                            ))
                        }
                    },
                    Err(e) => Err(e),
                }
            }
        };
        match result {
            Ok(id) => Answer::Enqueued(id),
            Err(e) => {
                let (answer, drop_conn) = from_awa_error(e);
                if drop_conn {
                    self.conn = None;
                }
                answer
            }
        }
    }
}

fn send(out: &mut impl Write, v: &Value) -> std::io::Result<()> {
    writeln!(out, "{v}")?;
    out.flush()
}

fn main() -> std::process::ExitCode {
    match serve() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)] // the binary's one report of a fatal error
            {
                eprintln!("awa-rs producer: {e}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}

fn serve() -> Result<(), String> {
    let path = Path::from_env()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let mut producer = Producer {
        path,
        dsn: std::env::var("AWA_CONFORMANCE_DSN").unwrap_or_default(),
        conn: None,
        kinds: Kinds::default(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let io = |e: std::io::Error| format!("stdout: {e}");
    send(
        &mut out,
        &json!({"type": "hello", "protocol": PROTOCOL,
                "implementation": {"name": format!("awa-model (Rust, {})", path.name()), "version": AWA_MODEL_VERSION},
                // `nested`: the typed decoder (above) expands ADR 0020's compact form.
                "capabilities": ["enqueue", "errors", "nested"]}),
    )
    .map_err(io)?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let msg: Value = match serde_json::from_str(&line) {
            Ok(m) => m,
            Err(e) => {
                // Diagnostics go to stderr: stdout carries only protocol lines.
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("awa-rs producer: ignoring a line that is not JSON ({e})");
                }
                continue;
            }
        };
        let seq = msg.get("seq").cloned().unwrap_or(Value::Null);
        let answer = match msg.get("type").and_then(Value::as_str) {
            Some("stop") => break,
            Some("enqueue") => match (msg.get("schema").and_then(Value::as_str), msg.get("job")) {
                (Some(schema), _) if schema != "awa" => Answer::Skipped(format!(
                    "awa-model 0.6.9 always enqueues into schema awa, not {schema:?}"
                )),
                (_, Some(job)) => rt.block_on(producer.enqueue(job)),
                (_, None) => Answer::Error("enqueue request without a job".into()),
            },
            other => Answer::Error(format!(
                "request type {other:?} is not served (capabilities: enqueue, errors)"
            )),
        };
        send(&mut out, &answer.to_json(&seq)).map_err(io)?;
    }
    Ok(())
}
