//! What the DB cases send: run-scoped names and keys, queue widths, the `insert_job` request
//! with every argument explicit, and the insert and read-back statements.

use awa_conformance_vectors::to_hex as hex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value as Json;
use tokio_postgres::{Client, Row, Statement};

use super::case::{query_fail, setup_fail};
use super::expect::check_stored_request;
use super::DbSetup;
use crate::outcome::CaseFailure;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A name unique within the run: `awa_conformance_<run>_<n>`. Parallel cases never share a
/// queue or key, so their uncommitted rows never block each other.
pub(super) fn unique_name(db: &DbSetup) -> String {
    format!("{}_{}", db.prefix(), SEQ.fetch_add(1, Ordering::Relaxed))
}

/// A 32-byte key unique to this run and call (no collision with existing claims).
pub(super) fn unique_bytes(db: &DbSetup, label: &str) -> Vec<u8> {
    let text = format!(
        "{}:{label}:{}",
        db.prefix(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let mut key = awa_conformance_core::concurrency_digest(text.as_bytes()).to_vec();
    key.truncate(32);
    key
}

pub(super) fn opt_hex(bytes: Option<&[u8]>) -> Json {
    bytes.map_or(Json::Null, |b| Json::String(hex(b)))
}

/// Create `queue_meta` rows `<base>_w<width>` for each width (inside the case's transaction).
pub(super) async fn set_widths(
    client: &Client,
    db: &DbSetup,
    base: &str,
    widths: &[u8],
) -> Result<(), CaseFailure> {
    let widths: Vec<i16> = widths.iter().map(|w| i16::from(*w)).collect();
    client
        .execute(
            &include_str!("../../../sql/set_widths.sql").replace("@S@", db.schema.quoted()),
            &[&base, &widths],
        )
        .await
        .map_err(|e| setup_fail(db, "setting queue_meta.enqueue_shards", &e))?;
    Ok(())
}

/// The queue of `base` at `width` (see [`set_widths`]).
pub(super) fn width_queue(base: &str, width: u8) -> String {
    format!("{base}_w{width}")
}

/// A `run_at` far in the future: the job starts `scheduled`.
pub(super) const FUTURE: &str = "2999-01-01T00:00:00Z";

/// A `run_at` in the past: the job still starts `scheduled` (§10 rule 3, as released).
pub(super) const PAST: &str = "2000-01-01T00:00:00Z";

/// One `insert_job` call with every argument explicit.
#[derive(Debug, Clone)]
pub(super) struct Req {
    pub(super) kind: String,
    pub(super) queue: String,
    pub(super) args: String,
    pub(super) priority: i16,
    pub(super) max_attempts: i16,
    pub(super) run_at: Option<String>,
    pub(super) metadata: String,
    pub(super) tags: Vec<String>,
    pub(super) unique_key: Option<Vec<u8>>,
    pub(super) unique_states: Option<String>,
    pub(super) ordering_key: Option<Vec<u8>>,
    pub(super) concurrency_key: Option<Vec<u8>>,
    pub(super) opts: String,
}

impl Req {
    /// A request with the contract defaults on `queue`.
    pub(super) fn on(queue: &str) -> Self {
        Self {
            kind: "awa_conformance".to_owned(),
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

    pub(super) fn keys(mut self, ordering: Option<&[u8]>, concurrency: Option<&[u8]>) -> Self {
        self.ordering_key = ordering.map(<[u8]>::to_vec);
        self.concurrency_key = concurrency.map(<[u8]>::to_vec);
        self
    }

    pub(super) fn opts(mut self, opts: &Json) -> Self {
        self.opts = opts.to_string();
        self
    }

    /// Schedule the job far in the future (state `scheduled`) or in the past (`available`).
    pub(super) fn run_at(mut self, at: &str) -> Self {
        self.run_at = Some(at.to_owned());
        self
    }

    pub(super) fn priority(mut self, priority: i16) -> Self {
        self.priority = priority;
        self
    }

    /// The initial state §10 rule 3 gives this request (contract v1.1, as released):
    /// `scheduled` whenever `run_at` is given, even in the past, else `available`.
    pub(super) fn expected_state(&self) -> &'static str {
        if self.run_at.is_some() {
            "scheduled"
        } else {
            "available"
        }
    }

    pub(super) fn unique(mut self, key: Option<&[u8]>, states: Option<&str>) -> Self {
        self.unique_key = key.map(<[u8]>::to_vec);
        self.unique_states = states.map(str::to_owned);
        self
    }
}

/// What `insert_job` returned.
#[derive(Debug, Clone)]
pub(super) struct Inserted {
    pub(super) job_id: i64,
    pub(super) queue: Option<String>,
    pub(super) state: Option<String>,
    pub(super) priority: Option<i16>,
    pub(super) enqueue_shard: Option<i16>,
    pub(super) route_source: Option<String>,
    pub(super) concurrency_digest: Option<Vec<u8>>,
    pub(super) unique_key: Option<Vec<u8>>,
}

/// What `job_routing` reads back.
#[derive(Debug, Clone)]
pub(super) struct Stored {
    pub(super) job_id: Option<i64>,
    pub(super) queue: Option<String>,
    pub(super) enqueue_shard: Option<i16>,
    pub(super) route_source: Option<String>,
    pub(super) concurrency_digest: Option<Vec<u8>>,
    /// Contract v1.1: the §6 digest of the stored ordering key (job_routing never returns a
    /// raw key).
    pub(super) ordering_key_digest: Option<Vec<u8>>,
    pub(super) unique_key: Option<Vec<u8>>,
    pub(super) unique_states: Option<String>,
    pub(super) state: Option<String>,
    pub(super) priority: Option<i16>,
}

/// The insert statement (README "prepared-statement form", text-cast parameters).
pub(super) fn insert_sql(db: &DbSetup) -> String {
    include_str!("../../../sql/insert_job_call.sql").replace("@S@", db.schema.quoted())
}

/// The read statement.
pub(super) fn read_sql(db: &DbSetup) -> String {
    include_str!("../../../sql/job_routing_call.sql").replace("@S@", db.schema.quoted())
}

/// Prepare the insert and read statements on this connection.
pub(super) async fn prepare(
    client: &Client,
    db: &DbSetup,
) -> Result<(Statement, Statement), CaseFailure> {
    let (ins, read) = futures_util::future::join(
        client.prepare(&insert_sql(db)),
        client.prepare(&read_sql(db)),
    )
    .await;
    Ok((
        ins.map_err(|e| query_fail(db, "preparing insert_job", &e))?,
        read.map_err(|e| query_fail(db, "preparing job_routing", &e))?,
    ))
}

/// Call `insert_job` once.
pub(super) async fn insert(
    client: &Client,
    st: &Statement,
    r: &Req,
) -> Result<Inserted, tokio_postgres::Error> {
    let row = client
        .query_one(
            st,
            &[
                &r.kind,
                &r.queue,
                &r.args,
                &r.priority,
                &r.max_attempts,
                &r.run_at,
                &r.metadata,
                &r.tags,
                &r.unique_key,
                &r.unique_states,
                &r.ordering_key,
                &r.concurrency_key,
                &r.opts,
            ],
        )
        .await?;
    inserted_from(&row)
}

fn inserted_from(row: &Row) -> Result<Inserted, tokio_postgres::Error> {
    Ok(Inserted {
        job_id: row.try_get(0)?,
        queue: row.try_get(1)?,
        state: row.try_get(2)?,
        priority: row.try_get(3)?,
        enqueue_shard: row.try_get(4)?,
        route_source: row.try_get(5)?,
        concurrency_digest: row.try_get(6)?,
        unique_key: row.try_get(7)?,
    })
}

/// Read one job's stored routing.
pub(super) async fn read(
    client: &Client,
    st: &Statement,
    job_id: i64,
) -> Result<Stored, tokio_postgres::Error> {
    let row = client.query_one(st, &[&job_id]).await?;
    Ok(Stored {
        job_id: row.try_get(0)?,
        queue: row.try_get(1)?,
        enqueue_shard: row.try_get(2)?,
        route_source: row.try_get(3)?,
        concurrency_digest: row.try_get(4)?,
        ordering_key_digest: row.try_get(5)?,
        unique_key: row.try_get(6)?,
        unique_states: row.try_get(7)?,
        state: row.try_get(8)?,
        priority: row.try_get(9)?,
    })
}

/// Insert many requests pipelined on one connection, then read every stored routing, also
/// pipelined: two round-trip waves per case regardless of how many widths it covers.
pub(super) async fn insert_and_read_all(
    client: &Client,
    db: &DbSetup,
    reqs: &[Req],
) -> Result<Vec<(Inserted, Stored)>, CaseFailure> {
    let (ins, rd) = prepare(client, db).await?;
    let inserted =
        futures_util::future::join_all(reqs.iter().map(|r| insert(client, &ins, r))).await;
    let mut ok = Vec::with_capacity(reqs.len());
    for (r, res) in reqs.iter().zip(inserted) {
        match res {
            Ok(i) => ok.push(i),
            Err(e) => {
                return Err(query_fail(
                    db,
                    &format!(
                        "insert_job(queue {}, ordering_key {}, concurrency_key {}, opts {})",
                        r.queue,
                        opt_hex(r.ordering_key.as_deref()),
                        opt_hex(r.concurrency_key.as_deref()),
                        r.opts
                    ),
                    &e,
                ))
            }
        }
    }
    let stored =
        futures_util::future::join_all(ok.iter().map(|i| read(client, &rd, i.job_id))).await;
    let mut out = Vec::with_capacity(ok.len());
    for ((i, s), r) in ok.into_iter().zip(stored).zip(reqs) {
        let s = s.map_err(|e| query_fail(db, &format!("job_routing({})", i.job_id), &e))?;
        check_stored_request(r, &i, &s)?;
        out.push((i, s));
    }
    Ok(out)
}
